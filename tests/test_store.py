"""A device set is replaced whole or not at all."""

from pathlib import Path

import pytest

from generators.store import (
    atomic_write_bytes,
    atomic_write_text,
    recover_interrupted_swap,
    staged_device_set,
)


def _make_live(root: Path) -> Path:
    live = root / "cpu" / "step" / "v"
    live.mkdir(parents=True)
    (live / "trace.json.gz").write_text("old trace")
    (root / "cpu" / "MANIFEST.json").write_text("old manifest")
    return live


def test_failure_leaves_live_set_untouched(tmp_path: Path) -> None:
    live = _make_live(tmp_path)
    with pytest.raises(RuntimeError), staged_device_set("cpu", tmp_path) as stage:
        atomic_write_text(stage / "step" / "v" / "trace.json.gz", "new trace")
        atomic_write_text(stage / "MANIFEST.json", "new manifest")
        raise RuntimeError("capture failed halfway")
    assert (live / "trace.json.gz").read_text() == "old trace"
    assert (tmp_path / "cpu" / "MANIFEST.json").read_text() == "old manifest"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".lock")) == ["cpu"]


def test_success_swaps_in_the_new_set(tmp_path: Path) -> None:
    _make_live(tmp_path)
    with staged_device_set("cpu", tmp_path) as stage:
        # The stage starts as a copy: untouched files carry over.
        assert (stage / "step" / "v" / "trace.json.gz").read_text() == "old trace"
        atomic_write_text(stage / "MANIFEST.json", "new manifest")
    assert (tmp_path / "cpu" / "MANIFEST.json").read_text() == "new manifest"
    assert (tmp_path / "cpu" / "step" / "v" / "trace.json.gz").read_text() == "old trace"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".lock")) == ["cpu"]


def test_interrupted_swap_is_recovered(tmp_path: Path) -> None:
    _make_live(tmp_path)
    (tmp_path / "cpu").rename(tmp_path / ".old-cpu")  # killed between the two renames
    recover_interrupted_swap(tmp_path, "cpu")
    assert (tmp_path / "cpu" / "MANIFEST.json").read_text() == "old manifest"


def test_atomic_write_leaves_no_temporary_on_error(tmp_path: Path) -> None:
    target = tmp_path / "x.txt"
    target.write_text("before")
    with pytest.raises(TypeError):
        atomic_write_bytes(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_text() == "before"
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]
