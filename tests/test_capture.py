"""Stage 1 on the CPU end to end: a real capture, its failure path, stale-capture detection."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generators.capture import CaptureError, capture_steps
from generators.derive import stale_captures
from generators.steps import Step, Variant, get_step
from generators.store import staged_device_set

REPO = Path(__file__).resolve().parents[1]
ARGS = ("--device", "cpu", "--step", "linear")


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`artifacts --device cpu --step linear` into a relative folder, run from elsewhere."""
    workdir = tmp_path_factory.mktemp("elsewhere")
    result = subprocess.run(
        [sys.executable, "-m", "generators", "--artifacts", "arts", "artifacts", *ARGS],
        cwd=workdir,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "captured linear/eager on cpu" in result.stdout
    return workdir / "arts" / "cpu"


@pytest.mark.slow
def test_capture_writes_every_variant_and_its_manifest(captured: Path) -> None:
    manifest = json.loads((captured / "MANIFEST.json").read_text())
    for variant in get_step("linear").variants_for("cpu"):
        folder = captured / "linear" / variant.name
        for name in ("trace.json.gz", "key_averages.txt", "capture.json"):
            assert (folder / name).stat().st_size > 0, f"{variant.name}/{name}"
            assert f"linear/{variant.name}/{name}" in manifest["files"]
        record = json.loads((folder / "capture.json").read_text())
        assert record["environment"]["device"] == "cpu"
        assert record["sources"]["generators/workloads/linear.py"]
    assert not list(captured.parent.glob(".staging-*")), "staging folder left behind"


@pytest.mark.slow
def test_trace_names_no_machine_path(captured: Path) -> None:
    trace = json.loads(
        gzip.decompress((captured / "linear" / "eager" / "trace.json.gz").read_bytes())
    )
    assert trace["traceName"] == "trace.json"
    assert str(captured.parent) not in json.dumps(trace)


def test_failed_capture_leaves_the_live_set_untouched(tmp_path: Path) -> None:
    live = tmp_path / "cpu" / "linear" / "eager"
    live.mkdir(parents=True)
    (live / "trace.json.gz").write_bytes(b"committed trace")
    (tmp_path / "cpu" / "MANIFEST.json").write_text("committed manifest")
    broken = Step(
        slug="no_such_workload",
        title="A workload that does not exist",
        pages=("index.md",),
        variants=(Variant(name="only", description="fails to start"),),
        queries=(),
    )
    with (
        pytest.raises(CaptureError, match="no_such_workload/only on cpu failed"),
        staged_device_set("cpu", tmp_path) as stage,
    ):
        capture_steps((broken,), "cpu", stage)
    assert (live / "trace.json.gz").read_bytes() == b"committed trace"
    assert (tmp_path / "cpu" / "MANIFEST.json").read_text() == "committed manifest"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".lock")) == ["cpu"]


def test_stale_capture_is_reported(tmp_path: Path) -> None:
    source = REPO / "artifacts" / "cpu" / "linear" / "eager"
    copy = tmp_path / "eager"
    shutil.copytree(source, copy)
    step = get_step("linear")
    record = json.loads((copy / "capture.json").read_text())
    record["sources"]["generators/workloads/linear.py"] = "0" * 64
    (copy / "capture.json").write_text(json.dumps(record))
    assert stale_captures([(step, copy)]) == ["linear/eager"]


def test_derive_keeps_a_captured_memory_snapshot_and_lists_it(tmp_path: Path) -> None:
    """A snapshot the capture wrote survives derive's clean-up and is in the manifest as a
    captured file, with the capture's sources; a stale capture is named in the manifest."""
    from generators.derive import _clean_derived, build_manifest
    from generators.store import CAPTURED_FILES, MEMORY_SNAPSHOT_FILE

    step = get_step("train")
    folder = tmp_path / "train" / "memory"
    folder.mkdir(parents=True)
    sources = {"generators/workloads/train.py": "0" * 64}  # not today's file: stale
    for name in CAPTURED_FILES:
        (folder / name).write_text("{}")
    (folder / "capture.json").write_text(json.dumps({"sources": sources}))
    (folder / MEMORY_SNAPSHOT_FILE).write_text("<html></html>")
    (folder / "train_memory.csv").write_text("derived earlier")
    _clean_derived(folder)
    kept = sorted(p.name for p in folder.iterdir())
    assert kept == sorted((*CAPTURED_FILES, MEMORY_SNAPSHOT_FILE))
    manifest = build_manifest(tmp_path, "cuda", [(step, folder)])
    entry = manifest["files"][f"train/memory/{MEMORY_SNAPSHOT_FILE}"]
    assert entry["kind"] == "memory-snapshot" and entry["sources"] == sources
    assert manifest["stale_captures"] == ["train/memory"]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_the_manifest_names_exactly_the_stale_captures(device: str) -> None:
    """Each committed set's manifest lists the captures whose workload code changed since, as
    today's files say; the CPU set is recaptured whenever a workload changes, so it lists none."""
    manifest = json.loads((REPO / "artifacts" / device / "MANIFEST.json").read_text())
    jobs = [
        (get_step(slug), REPO / "artifacts" / device / slug / variant)
        for slug, variants in manifest["variants"].items()
        for variant in variants
    ]
    assert manifest["stale_captures"] == stale_captures(jobs)
    if device == "cpu":
        assert manifest["stale_captures"] == []
