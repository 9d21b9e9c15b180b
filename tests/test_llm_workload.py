"""The llm workload end to end at a tiny size: capture on CPU, then Part 4's queries on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generators.derive import run_query
from generators.queries import load_query
from generators.steps import REPO_ROOT
from generators.tp import open_trace


@pytest.fixture(scope="module")
def tiny_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("llm")
    cmd = [
        sys.executable,
        "-m",
        "generators.workloads.llm",
        *("--device", "cpu", "--size", "cpu", "--prompt-len", "8", "--new-tokens", "3"),
        *("--batch", "2", "--layer-labels", "--timing-repeats", "1"),
        *("--wait", "0", "--warmup-steps", "0", "--active", "1", "--out", str(out)),
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_capture_record(tiny_capture: Path) -> None:
    record = json.loads((tiny_capture / "capture.json").read_text())
    settings = record["settings"]
    assert settings["batch"] == 2 and settings["new_tokens"] == 3
    wall = settings["wall_clock"]
    assert 0 < wall["ttft_s"] < wall["generate_s"] and wall["tokens_per_s"] > 0
    assert settings["model"]["parameters"] > 0


def test_queries_on_tiny_capture(tiny_capture: Path) -> None:
    with open_trace(tiny_capture / "trace.json.gz") as tp:
        phases = run_query(tp, load_query("llm_phases")).rows
        (decode,) = run_query(tp, load_query("llm_decode")).rows
        layers = run_query(tp, load_query("llm_layers")).rows
        timeline = run_query(tp, load_query("llm_decode_timeline")).rows
    assert [r["phase"] for r in phases] == ["prefill", "decode"]
    assert [r["forwards"] for r in phases] == [1, 2]
    assert decode["batch"] == 2 and decode["decodes_per_call"] == 2
    assert decode["device_name"] == "cpu" and decode["floor_share_pct"] is None
    assert decode["decode_start_s"] < decode["decode_end_s"]
    assert {r["region"] for r in layers} == {"attention", "mlp", "norm"}
    assert timeline[0]["name"] == "decode" and timeline[0]["depth"] == 0


def test_compile_flags_are_checked() -> None:
    from generators.workloads import llm

    with pytest.raises(SystemExit):
        llm.main(["--compile", "--cache", "dynamic", "--out", "/nonexistent"])


@pytest.mark.cuda
@pytest.mark.skipif(
    not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU (static cache + graphs)"
)
def test_static_cache_cuda_graphs(tmp_path: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "generators.workloads.llm",
        *("--device", "cuda", "--size", "cpu", "--dtype", "bf16", "--prompt-len", "16"),
        *("--new-tokens", "4", "--cache", "static", "--compile", "--timing-repeats", "1"),
        *("--wait", "0", "--warmup-steps", "1", "--active", "1", "--out", str(tmp_path)),
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open_trace(tmp_path / "trace.json.gz") as tp:
        (decode,) = run_query(tp, load_query("llm_decode")).rows
    assert decode["graph_launches_per_token"] >= 1
