"""Part 1's queries on real GPU traces (the CUDA-only sections before our own CUDA capture),
and a quick end-to-end smoke run of the workload on the CPU."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.reference_traces import A100_ADD, H100_BERT, MI300X, V100
from tests.sql_rows import query_rows, trace_rows

REPO = Path(__file__).resolve().parents[1]
H100 = H100_BERT
A100 = A100_ADD


def test_chain_follows_launch_flows_to_kernels() -> None:
    rows = query_rows(H100, "matmul_add_chain")
    launched = [r for r in rows if r["gpu_name"]]
    assert launched
    for r in launched:
        links = str(r["chain"]).split(" → ")
        assert links[-1] == r["gpu_name"]
        assert links[-2].startswith(("cudaLaunch", "cuLaunch", "cudaMemcpy"))
        assert str(r["op_name"]).startswith("aten::")
        assert int(r["launch_to_start_ns"]) > 0  # type: ignore[arg-type]
    gemm = [r for r in launched if r["op_name"] == "aten::addmm"]
    assert gemm and all("aten::linear → aten::addmm" in str(r["chain"]) for r in gemm)


def test_occupancy_calls_counted_before_launches() -> None:
    rows = trace_rows(
        A100,
        "INCLUDE PERFETTO MODULE guide.launch; "
        "SELECT op_name, kernel_name, occupancy_calls FROM guide_launch_occupancy",
    )
    assert rows
    with_query = [r for r in rows if int(r["occupancy_calls"]) > 0]  # type: ignore[arg-type]
    assert with_query  # the trace has cudaOccupancyMaxActiveBlocksPerMultiprocessor calls
    total = sum(int(r["occupancy_calls"]) for r in rows)  # type: ignore[arg-type]
    assert total <= 18
    # Elementwise kernels are launched without one.
    assert any(
        "elementwise" in str(r["kernel_name"]) and int(r["occupancy_calls"]) == 0  # type: ignore[arg-type]
        for r in rows
    )
    assert query_rows(H100, "matmul_add_occupancy")


def test_footprint_reads_kernel_args() -> None:
    rows = query_rows(H100, "matmul_add_footprint")
    assert rows
    for r in rows:
        assert int(r["registers_per_thread"]) > 0  # type: ignore[arg-type]
        assert int(r["shared_memory_bytes"]) >= 0  # type: ignore[arg-type]
        assert str(r["grid"]).count(" × ") == 2 and str(r["block"]).count(" × ") == 2
        assert re.fullmatch(r"\d{1,3} %", str(r["est_occupancy"]))
        assert 0 < float(r["theoretical_occupancy_pct"]) <= 100  # type: ignore[arg-type]
        assert r["occupancy_limit"] in ("registers", "shared memory", "warps", "blocks")
    gemm = max(rows, key=lambda r: int(r["registers_per_thread"]))  # type: ignore[arg-type]
    add = next(r for r in rows if "CUDAFunctor_add" in str(r["name"]))
    assert int(gemm["registers_per_thread"]) > int(add["registers_per_thread"])  # type: ignore[arg-type]


def test_gemm_kernels_and_spread() -> None:
    kernels = query_rows(H100, "matmul_add_gemm_kernels")
    assert kernels
    for r in kernels:
        assert r["min_ns"] <= r["median_ns"] <= r["max_ns"]  # type: ignore[operator]
        assert 0 < float(r["median_tflops"]) < 2000  # type: ignore[arg-type]
    spread = query_rows(H100, "matmul_add_gemm_spread")[0]
    assert spread["measured"] == "kernel"
    assert spread["gemms"] == sum(int(r["instances"]) for r in kernels)  # type: ignore[arg-type]
    assert spread["slowest_start_s"] < spread["slowest_end_s"]  # type: ignore[operator]


def test_lanes_and_overhead_on_gpu_trace() -> None:
    lanes = query_rows(H100, "matmul_add_lanes")[0]
    assert 0 < lanes["launch_to_kernel_min_ns"] <= lanes["launch_to_kernel_max_ns"]  # type: ignore[operator]
    assert lanes["first_step_gpu_idle_ns"] > 0  # type: ignore[operator]
    assert lanes["moment_start_s"] < lanes["moment_end_s"]  # type: ignore[operator]
    overhead = query_rows(H100, "matmul_add_overhead")[0]
    assert 0 < overhead["gpu_busy_pct"] < 100  # type: ignore[operator]


def test_compiled_counts_memcpy_on_gpu_trace() -> None:
    c = query_rows(V100, "matmul_add_compiled")[0]
    assert c["memcpy_calls"] > 0  # type: ignore[operator]
    assert c["kernels"] > 0  # type: ignore[operator]
    # GPU work started from inside aten::copy_: counted with its name.
    assert c["copy_gpu_work"] > 0  # type: ignore[operator]
    assert c["copy_gpu_name"]
    assert c["gemm_self_ns_per_step"] > 0  # type: ignore[operator]
    mi = query_rows(MI300X, "matmul_add_compiled")[0]
    assert mi["steps"] == 0 and mi["graph_calls"] == 0  # no ProfilerStep: nothing counted


def test_label_gaps_on_gpu_trace_with_several_labels() -> None:
    """One row per label, even where a step holds several; the numbers stay consistent."""
    rows = query_rows(V100, "matmul_add_label_gaps")
    assert len(rows) > len({r["step"] for r in rows})
    for r in rows:
        label, self_ns = int(r["label_ns"]), int(r["label_self_ns"])  # type: ignore[arg-type]
        assert 0 <= self_ns <= label
        if r["longest_gap_ns"] is not None:
            assert 0 <= int(r["longest_gap_ns"]) <= self_ns  # type: ignore[arg-type]
            assert 0 <= int(r["first_op_delay_ns"]) <= int(r["longest_gap_ns"])  # type: ignore[arg-type]


def test_workload_smoke(tmp_path: Path) -> None:
    """The CPU path end to end at a tiny size: trace, table and record written."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "generators.workloads.matmul_add",
            *("--size", "8", "--batch", "2", "--active", "1", "--out", str(tmp_path)),
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert (tmp_path / "trace.json.gz").exists()
    rows = query_rows(tmp_path / "trace.json.gz", "matmul_add_chain")
    assert any("aten::bmm" in str(r["chain"]) for r in rows)


def test_occupancy_rule_arithmetic() -> None:
    """The one occupancy rule: register file per sub-partition, warps, blocks, shared memory."""
    rows = trace_rows(
        A100,
        "INCLUDE PERFETTO MODULE guide.occupancy; SELECT "
        "guide_occupancy_theoretical_pct(255, 128, 0) AS flash, "
        "guide_occupancy_theoretical_pct(168, 384, 213188) AS nvjet, "
        "guide_occupancy_theoretical_pct(48, 128, 0) AS softmax, "
        "guide_occupancy_theoretical_pct(16, 128, 0) AS add_, "
        "guide_occupancy_theoretical_pct(32, 32, 0) AS tiny_blocks, "
        "guide_occupancy_theoretical_pct(32, 256, 120000) AS smem, "
        "guide_occupancy_limit(32, 256, 120000) AS smem_limit, "
        "guide_occupancy_limit(168, 384, 213188) AS nvjet_limit, "
        "guide_occupancy_limit(32, 32, 0) AS tiny_limit, "
        "guide_occupancy_theoretical_pct(32, 128, 240000) AS too_big",
    )[0]
    assert rows["flash"] == 12.5 and rows["nvjet"] == 18.75
    assert rows["softmax"] == 62.5 and rows["add_"] == 100
    assert rows["tiny_blocks"] == 50  # 32 blocks of one warp: half the SM
    assert rows["smem"] == 100 * 8 / 64 and rows["smem_limit"] == "shared memory"
    assert rows["nvjet_limit"] == "registers" and rows["tiny_limit"] == "blocks"
    assert rows["too_big"] == 0


def test_busy_share_is_a_union_of_overlapping_kernels() -> None:
    """Overlapping GPU activity counts once, and only inside the window."""
    rows = trace_rows(
        H100,
        "INCLUDE PERFETTO MODULE guide.windows; "
        "WITH w AS (SELECT 1 AS window_id, MIN(ts) AS ts, MAX(ts + dur) - MIN(ts) AS dur "
        "FROM guide_kineto_gpu_activity) "
        "SELECT b.busy_ns, b.window_ns, "
        "(SELECT SUM(dur) FROM guide_kineto_gpu_activity) AS summed "
        "FROM guide_windows_gpu_busy!(w) AS b",
    )[0]
    assert 0 < rows["busy_ns"] <= rows["window_ns"]  # type: ignore[operator]
    assert rows["busy_ns"] <= rows["summed"]  # type: ignore[operator]
