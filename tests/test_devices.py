"""The one rule for which device set a page shows (generators/devices.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from generators.devices import is_fallback, shown_device


def has(*devices: str) -> Callable[[str], bool]:
    return lambda device: device in devices


@pytest.mark.parametrize(
    ("available", "cpu_ok", "pinned", "shown"),
    [
        (("cuda", "cpu"), True, None, "cuda"),  # CUDA preferred
        (("cpu",), True, None, "cpu"),  # else the CPU capture, where the concept applies
        (("cpu",), False, None, None),  # a GPU-only concept: needs a CUDA capture
        ((), True, None, None),
        (("cuda", "cpu"), True, "cpu", "cpu"),  # a CPU tab beside a CUDA one
        (("cuda",), True, "cpu", None),
        (("cpu",), True, "cuda", None),  # a pinned CUDA tab never falls back
    ],
)
def test_shown_device(
    available: tuple[str, ...], cpu_ok: bool, pinned: str | None, shown: str | None
) -> None:
    assert shown_device(has(*available), cpu_ok=cpu_ok, pinned=pinned) == shown


def test_only_an_unpinned_cpu_is_a_fallback() -> None:
    assert is_fallback("cpu")
    assert not is_fallback("cuda")
    assert not is_fallback("cpu", pinned="cpu")
    assert not is_fallback(None)


def test_unknown_pinned_device_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        shown_device(has("cpu"), pinned="tpu")
