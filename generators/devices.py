"""Which device set a page shows: the one rule, shared by the site's hook and the claim tests.

The guide is written for GPUs, so the CUDA capture of a variant is preferred. Where there is
none, a section shows the CPU capture if its concept applies to a CPU (``cpu_ok``), and otherwise
says that it needs a CUDA capture. A placeholder may also pin a set (``device="cpu"`` in a CPU
tab beside a CUDA one): that is a choice, not a fallback, and only the pinned set will do.
"""

from __future__ import annotations

from collections.abc import Callable

#: Device sets in order of preference.
DEVICES = ("cuda", "cpu")


def shown_device(
    has_capture: Callable[[str], bool], *, cpu_ok: bool = True, pinned: str | None = None
) -> str | None:
    """The device set whose artifact is shown, or None when no allowed set has a capture.

    ``has_capture(device)`` says whether that set holds a capture of the variant in question.
    """
    if pinned is not None:
        if pinned not in DEVICES:
            raise ValueError(f"unknown device {pinned!r}; expected one of {', '.join(DEVICES)}")
        candidates: tuple[str, ...] = (pinned,)
    else:
        candidates = DEVICES if cpu_ok else ("cuda",)
    return next((device for device in candidates if has_capture(device)), None)


def is_fallback(device: str | None, *, pinned: str | None = None) -> bool:
    """Whether showing ``device`` is a fallback from the preferred CUDA set (not a pinned CPU)."""
    return pinned is None and device is not None and device != DEVICES[0]
