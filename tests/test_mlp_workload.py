"""Smoke runs of Part 2's workloads at tiny sizes on CPU, and the CUDA-only Liger path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]


def _run(module: str, *args: str, out: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", module, *args, "--out", str(out), "--active", "1"],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=120,
    )


def test_linear_and_mlp_capture_on_cpu(tmp_path: Path) -> None:
    _run(
        "generators.workloads.linear",
        "--batch",
        "8",
        "--in_dim",
        "4",
        "--out_dim",
        "4",
        out=tmp_path / "linear",
    )
    _run(
        "generators.workloads.mlp",
        "--batch",
        "1",
        "--seq",
        "4",
        "--dim",
        "8",
        "--hidden",
        "16",
        out=tmp_path / "mlp",
    )
    for name in ("linear", "mlp"):
        assert (tmp_path / name / "trace.json.gz").stat().st_size > 0
        assert (tmp_path / name / "capture.json").exists()


def test_liger_needs_cuda(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "generators.workloads.mlp",
            "--impl",
            "liger",
            "--out",
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU with CUDA")
def test_liger_capture_on_cuda(tmp_path: Path) -> None:
    pytest.importorskip("liger_kernel", reason="pip install -r requirements/gpu.txt")
    _run(
        "generators.workloads.mlp",
        "--device",
        "cuda",
        "--dtype",
        "bf16",
        "--impl",
        "liger",
        "--batch",
        "2",
        "--seq",
        "16",
        "--dim",
        "64",
        "--hidden",
        "128",
        out=tmp_path,
    )
    assert (tmp_path / "trace.json.gz").exists()
