"""`python -m generators.tp`: query, info (with the importer's drops), engine."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.reference_traces import A100_ADD, A100_TRITON, V100

A100 = A100_ADD


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generators.tp", "--engine", "wasm", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def v100_info() -> str:
    r = run_cli("info", "--dropped", str(V100))
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_query_prints_csv():
    r = run_cli(
        "query",
        str(A100),
        "SELECT category, COUNT(*) AS n FROM slice "
        "WHERE category IN ('kernel', 'cuda_runtime') GROUP BY 1 ORDER BY 1",
    )
    assert r.returncode == 0, r.stderr
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows == [["category", "n"], ["cuda_runtime", "331"], ["kernel", "79"]]


def test_query_prints_markdown():
    r = run_cli(
        "query",
        str(A100),
        "SELECT COUNT(*) AS kernels FROM slice WHERE category = 'kernel'",
        "--format",
        "markdown",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["| kernels |", "|---|", "| 79 |"]


def test_query_error_is_reported():
    r = run_cli("query", str(A100), "SELECT * FROM no_such_table")
    assert r.returncode == 1
    assert "no such table: no_such_table" in r.stderr


def test_info_reports_engine_bounds_and_counts(v100_info):
    out = v100_info
    assert "WebAssembly Perfetto v52." in out
    assert "bounds:  1712195495406752768 .. 1712195496004644352 ns" in out
    assert "GPU kernels: 4342" in out
    assert "launches (cuda_runtime/cuda_driver): 15041" in out
    assert "from a launch: 6095" in out


def test_info_reports_drops_prominently(v100_info):
    assert "!! DROPPED: 774 complete events are NOT in the slice table" in v100_info
    assert "| slice_drop_overlapping_complete_event | NULL | error | trace | 774 |" in v100_info


def test_info_dropped_names_every_dropped_event(v100_info):
    listed = [ln for ln in v100_info.splitlines() if ln.startswith("  [")]
    assert len(listed) == 774
    assert sum(ln.startswith("  [kernel]") for ln in listed) == 8
    assert sum(ln.startswith("  [cuda_runtime]") for ln in listed) == 288
    assert "cpu_op: 478, cuda_runtime: 288, kernel: 8" in v100_info
    assert "774 of them do not overlap at the file's own precision" in v100_info


def test_info_without_drops_says_none():
    r = run_cli("info", str(A100_TRITON))
    assert r.returncode == 0, r.stderr
    assert "DROPPED" not in r.stdout
    assert "GPU kernels: 1" in r.stdout
    assert "none" in r.stdout


def test_bad_trace_is_an_error_naming_the_file(tmp_path):
    p = tmp_path / "empty.json"
    p.write_bytes(b"")
    r = run_cli("info", str(p))
    assert r.returncode == 2
    assert str(p) in r.stderr and "empty" in r.stderr


def test_bad_tp_bin_is_refused_naming_it(tmp_path):
    bad = tmp_path / "not-here" / "trace_processor_shell"
    r = subprocess.run(
        [sys.executable, "-m", "generators.tp", "--tp-bin", str(bad), "info", str(A100)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 2
    assert f"trace processor binary not found: {bad}" in r.stderr


def test_engine_prints_json():
    r = run_cli("engine")
    assert r.returncode == 0, r.stderr
    desc = json.loads(r.stdout)
    assert desc["engine"] == "wasm-node"
    assert desc["version"].startswith("v52.")
