"""Derive is deterministic, hashes are honest, and a bad trace never damages the artifacts."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generators.store import MANIFEST_FILE
from tests import background

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "artifacts"
DEVICE_SETS = sorted(p.name for p in ARTIFACTS.iterdir() if (p / MANIFEST_FILE).exists())


def run_generators(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generators", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )


def tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


@pytest.fixture(scope="module")
def rederived() -> Path:
    """A copy of the committed artifacts, derived afresh from their traces: started in the
    background as the run began (tests/background.py), waited for here."""
    job = background.start_rederive()
    code, output = job.wait()
    assert code == 0, output
    return job.folder / "artifacts"


def test_committed_artifacts_exist() -> None:
    assert "cpu" in DEVICE_SETS, "artifacts/cpu/MANIFEST.json is missing: run `make artifacts`"


@pytest.mark.slow
def test_fresh_derive_reproduces_committed_files(rederived: Path) -> None:
    committed, fresh = tree(ARTIFACTS), tree(rederived)
    assert sorted(fresh) == sorted(committed), "derive adds or drops files"
    changed = [name for name in committed if committed[name] != fresh[name]]
    assert not changed, (
        "derived files differ from a fresh `make derive` (run it and commit): " + ", ".join(changed)
    )


@pytest.mark.parametrize("device", DEVICE_SETS)
def test_manifest_hashes_match_files(device: str) -> None:
    import json

    root = ARTIFACTS / device
    manifest = json.loads((root / MANIFEST_FILE).read_text())
    listed = manifest["files"]
    on_disk = {k for k in tree(root) if k != MANIFEST_FILE}
    assert set(listed) == on_disk, "manifest and folder disagree"
    for rel, entry in listed.items():
        digest = hashlib.sha256((root / rel).read_bytes()).hexdigest()
        assert digest == entry["sha256"], f"{device}/{rel}: hash differs from the manifest"
        assert entry["sources"], f"{device}/{rel}: no source hashes"
        assert entry["step"] in manifest["variants"]
    assert manifest["trace_processor"]["engine"]
    assert manifest["trace_processor"]["version"]
    for step, variants in manifest["variants"].items():
        for variant, info in variants.items():
            env = info["environment"]
            assert env["torch"] and env["device"] == device, f"{step}/{variant}"
            if device == "cuda":
                assert env["gpu"] and env["nvidia_driver"], f"{step}/{variant}: no GPU named"


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "gzip"),
        (lambda p: p.write_bytes(gzip.compress(b'{"traceEvents": [{"ph": "X", "name"')), "trunc"),
        (lambda p: p.write_bytes(b""), "empty"),
    ],
    ids=["cut-gzip", "truncated-json", "empty-file"],
)
def test_corrupted_trace_fails_derive_and_leaves_artifacts_untouched(
    tmp_path: Path, damage, expected: str
) -> None:
    copy = tmp_path / "artifacts"
    shutil.copytree(ARTIFACTS / "cpu", copy / "cpu", ignore=shutil.ignore_patterns(".*"))
    before = tree(copy)
    victim = copy / "cpu" / "matmul_add" / "small_cold" / "trace.json.gz"
    rel = victim.relative_to(copy).as_posix()
    damage(victim)
    damaged = tree(copy)
    # One step's derive: the same staging and the same failure, without first deriving every
    # other step's traces (the rest of the set is checked unchanged below all the same).
    result = run_generators("--artifacts", str(copy), "derive", "--step", "matmul_add")
    assert result.returncode == 1
    assert "trace.json.gz" in result.stderr and rel.split("/")[1] in result.stderr, result.stderr
    assert expected in result.stderr.lower(), result.stderr
    assert "left as they were" in result.stderr
    # Nothing but the file we broke differs, and no staging folder is left behind.
    assert tree(copy) == damaged
    assert {k for k in before if before[k] != damaged[k]} == {rel}
    assert sorted(p.name for p in copy.iterdir() if not p.name.startswith(".lock")) == ["cpu"]


def test_unknown_step_is_refused() -> None:
    result = run_generators("artifacts", "--device", "cpu", "--step", "no_such_step")
    assert result.returncode == 1
    assert "unknown step 'no_such_step'" in result.stderr
    assert "matmul_add" in result.stderr


def test_cuda_without_a_gpu_is_refused(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the refusal path cannot be exercised")
    result = run_generators("--artifacts", str(tmp_path), "artifacts", "--device", "cuda")
    assert result.returncode == 1
    assert "no CUDA device" in result.stderr
    assert not (tmp_path / "cuda").exists()


def test_derive_without_artifacts_says_what_to_run(tmp_path: Path) -> None:
    result = run_generators("--artifacts", str(tmp_path), "derive")
    assert result.returncode == 1
    assert "make artifacts" in result.stderr
