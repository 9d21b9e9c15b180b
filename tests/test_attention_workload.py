"""The attention workload runs end to end at a tiny size, and its implementations agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from generators.derive import run_query
from generators.queries import load_query
from generators.tp import open_trace
from generators.workloads.attention import IMPLS, forward_fn, make_inputs

REPO = Path(__file__).resolve().parents[1]
TINY = ["--batch", "1", "--heads", "2", "--head-dim", "16", "--dtype", "fp32"]
SCHEDULE = ["--wait", "0", "--warmup-steps", "1", "--active", "2", "--warmup", "0"]


def capture(out: Path, *args: str, device: str = "cpu") -> Path:
    cmd = [sys.executable, "-m", "generators.workloads.attention", *TINY, *SCHEDULE, *args]
    cmd += ["--device", device, "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run(cmd, cwd=REPO, env=env, check=True, capture_output=True, timeout=120)
    return out / "trace.json.gz"


def test_cpu_implementations_agree() -> None:
    q, k, v, mask = make_inputs(1, 2, 24, 16, torch.float32, torch.device("cpu"))
    with torch.no_grad():
        ref = forward_fn("sdpa_math", q, k, v, mask)()
        for impl in ("naive", "naive_inplace", "sdpa_flash"):
            torch.testing.assert_close(forward_fn(impl, q, k, v, mask)(), ref, msg=impl)


def test_sweep_capture_end_to_end(tmp_path: Path) -> None:
    """One sweep capture on CPU: every implementation that runs there, at two lengths."""
    impls = "naive,naive_inplace,sdpa_math,sdpa_flash"
    trace = capture(tmp_path, "--sweep-seqs", "32,48", "--sweep-impls", impls)
    with open_trace(trace) as tp:
        sweep = run_query(tp, load_query("attention_sweep")).rows
        fwd = run_query(tp, load_query("attention_forward")).rows[0]
    assert {(r["impl"], r["seq"]) for r in sweep} == {
        (i, s) for i in impls.split(",") for s in (32, 48)
    }
    # A CPU trace has no GPU work: the GPU columns are NULL, not zero.
    assert all(r["forwards"] == 2 and r["kernels_per_fwd"] is None for r in sweep)
    assert all(r["gpu_ns_per_fwd"] is None for r in sweep)
    assert fwd["forwards"] == 0  # no plain attn_fwd regions in a sweep
    record = json.loads((tmp_path / "capture.json").read_text())
    assert record["settings"]["sweep_seqs"] == [32, 48]


def test_single_capture_end_to_end(tmp_path: Path) -> None:
    trace = capture(tmp_path, "--impl", "naive", "--seq", "32")
    with open_trace(trace) as tp:
        fwd = run_query(tp, load_query("attention_forward")).rows[0]
    assert fwd["forwards"] == 2 and fwd["clones_per_fwd"] == 1
    assert fwd["kernels_per_fwd"] is None and fwd["gpu_ns_per_fwd"] is None
    assert (fwd["batch"], fwd["heads"], fwd["seq"], fwd["head_dim"]) == (1, 2, 32, 16)
    assert fwd["score_passes"] == 5


def test_unknown_sweep_impl_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(subprocess.CalledProcessError) as info:
        capture(tmp_path, "--sweep-seqs", "32", "--sweep-impls", "naive,bogus")
    assert b"unknown --sweep-impls bogus" in info.value.stderr


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU with CUDA")
def test_every_backend_runs_on_cuda(tmp_path: Path) -> None:
    q, k, v, mask = make_inputs(1, 2, 128, 64, torch.bfloat16, torch.device("cuda"))
    with torch.no_grad():
        ref = forward_fn("sdpa_math", q, k, v, mask)().float()
        for impl in IMPLS:
            got = forward_fn(impl, q, k, v, mask)().float()
            torch.testing.assert_close(got, ref, atol=2e-2, rtol=2e-2, msg=impl)
    trace = capture(
        tmp_path,
        "--impl",
        "sdpa",
        "--backend",
        "cudnn",
        "--dtype",
        "bf16",
        "--head-dim",
        "64",
        device="cuda",
    )
    with open_trace(trace) as tp:
        fwd = run_query(tp, load_query("attention_forward")).rows[0]
    assert fwd["kernels_per_fwd"] >= 1
