"""Every claim the Part 1 pages (docs/part-1/) make about their traces, checked on the artifacts.

Claims about GPU-only concepts are skipped until a CUDA capture of the variant is committed; the
SQL behind them is tested on real GPU traces in tests/test_matmul_add_queries.py.
"""

from __future__ import annotations

import re

import pytest

from tests.claims import (
    capture_record,
    shown_device,
    table,
    trace_table,
    values,
    variant_dir,
)

STEP, VARIANT = "matmul_add", "small_cold"


def _ops(variant: str = VARIANT) -> dict[str, dict[str, str]]:
    return {row["name"]: row for row in table(STEP, variant, "ops")}


def _needs_cuda(variant: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        shown_device(STEP, variant, cpu_ok=False) is None,
        reason=f"no CUDA capture of {STEP}/{variant} committed yet",
    )


def _cuda_values(variant: str) -> dict[str, dict[str, object]]:
    return values(STEP, variant, cpu_ok=False)


# ---- 01-first-trace ------------------------------------------------------------------------------
def test_matmul_has_small_self_time_and_hands_work_to_mm() -> None:
    """'aten::matmul has a small self time and a large total ... hands the multiplication to
    aten::mm'."""
    ops = _ops()
    matmul, mm = ops["aten::matmul"], ops["aten::mm"]
    assert int(matmul["self_ns"]) < int(matmul["total_ns"]) / 2
    assert int(mm["total_ns"]) <= int(matmul["total_ns"])
    assert matmul["calls"] == mm["calls"]
    timeline = table(STEP, VARIANT, "timeline")
    depth = {r["name"]: int(r["depth"]) for r in timeline if r["lane"].startswith("CPU")}
    assert depth["aten::mm"] == depth["aten::matmul"] + 1


def test_label_called_once_per_active_step() -> None:
    """'matmul_add was called <steps> times': one call per active step."""
    steps = values(STEP, VARIANT)["step_summary"]["steps"]
    assert int(_ops()["matmul_add"]["calls"]) == steps
    record = (variant_dir(STEP, VARIANT) / "capture.json").read_text()
    assert f'"active": {steps}' in record


def test_sql_table_agrees_with_key_averages() -> None:
    """'The rows match the profiler's table': same names, same call counts."""
    text = (variant_dir(STEP, VARIANT) / "key_averages.txt").read_text()
    calls = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 7 and fields[-1].isdigit():
            calls[" ".join(fields[:-6])] = int(fields[-1])
    ops = _ops()
    for name in ("aten::mm", "aten::matmul", "aten::add", "matmul_add"):
        assert calls[name] == int(ops[name]["calls"]), name
    steps = [n for n in ops if re.fullmatch(r"ProfilerStep#\d+", n)]
    assert calls["ProfilerStep*"] == len(steps)


def test_label_nests_inside_step_and_ops_inside_label() -> None:
    """'ProfilerStep#N spans one step, matmul_add sits inside it, the aten operators inside'."""
    rows = [r for r in table(STEP, VARIANT, "timeline") if r["lane"].startswith("CPU")]
    depth = {r["name"]: int(r["depth"]) for r in rows}
    step = next(n for n in depth if n.startswith("ProfilerStep#"))
    assert depth[step] == 0
    assert depth["matmul_add"] == 1
    assert depth["aten::matmul"] == depth["aten::add"] == 2


def test_cpu_capture_has_no_gpu_activity() -> None:
    """'A CPU capture has none of these': no kernels or runtime calls on the CPU set."""
    summary = values(STEP, VARIANT)["step_summary"]
    if shown_device(STEP, VARIANT) == "cpu":
        assert summary["kernels"] == 0
        assert summary["runtime_calls"] == 0
    else:
        assert summary["kernels"] > 0


VARIANTS_TABLE = ("small_cold", "small_warm", "large_cold", "startup", "variance", "batched")


@pytest.mark.parametrize("variant", [*VARIANTS_TABLE, "compiled"])
def test_settings_from_trace_match_capture_record(variant: str) -> None:
    """The variants table shows size and dtype read from each trace; they match what ran."""
    settings = values(STEP, variant)["matmul_add_settings"]
    record = capture_record(STEP, variant)
    assert settings["size"] == record["settings"]["size"]
    assert settings["dtype"] == record["settings"]["dtype"]
    assert settings["active_steps"] == record["schedule"]["active"]


def test_cpu_sizes_are_capped() -> None:
    """'a CPU capture caps the large size'; the GPU sizes are 64 and 4096."""
    for variant in ("large_cold", "startup", "variance", "compiled"):
        if shown_device(STEP, variant) == "cpu":
            assert values(STEP, variant)["matmul_add_settings"]["size"] < 4096
        else:
            assert values(STEP, variant)["matmul_add_settings"]["size"] == 4096


def test_large_label_wider_than_small() -> None:
    """'the label of the large variant is wider than the small one's'."""
    small = values(STEP, "small_cold")["matmul_add_overhead"]["label_median_ns"]
    large = values(STEP, "large_cold")["matmul_add_overhead"]["label_median_ns"]
    assert large > small


@_needs_cuda("small_cold")
@_needs_cuda("large_cold")
def test_small_gpu_step_is_overhead_bound() -> None:
    """'The small GPU step is overhead-bound, its GPU busy share far below the large one's; the
    large step keeps the GPU busy for most of the step'."""
    small = _cuda_values("small_cold")["matmul_add_overhead"]["gpu_busy_pct"]
    large = _cuda_values("large_cold")["matmul_add_overhead"]["gpu_busy_pct"]
    assert small * 2 < large
    assert large > 50


# ---- 02-cpu-and-gpu-lanes ------------------------------------------------------------------------
@_needs_cuda("large_cold")
def test_kernels_start_after_their_launch() -> None:
    """The arrows join launches to later kernels: launch-to-kernel delays are positive."""
    lanes = _cuda_values("large_cold")["matmul_add_lanes"]
    assert 0 < lanes["launch_to_kernel_min_ns"] <= lanes["first_launch_to_kernel_ns"]
    assert lanes["first_launch_to_kernel_ns"] <= lanes["launch_to_kernel_max_ns"]


@_needs_cuda("small_cold")
def test_small_step_leaves_gpu_idle() -> None:
    """'For the small variant, the GPU lane is idle for <x> of the first step'."""
    lanes = _cuda_values("small_cold")["matmul_add_lanes"]
    summary = _cuda_values("small_cold")["step_summary"]
    assert lanes["first_step_gpu_idle_ns"] > 0.5 * summary["step_min_ns"]


def test_cpu_capture_has_one_lane() -> None:
    """'On a CPU capture there is one lane only ... no launch links'."""
    if shown_device(STEP, "large_cold") != "cpu":
        pytest.skip("the page shows a CUDA capture")
    lanes = {r["lane"] for r in table(STEP, "large_cold", "timeline")}
    assert len(lanes) == 1 and next(iter(lanes)).startswith("CPU")
    assert values(STEP, "large_cold")["matmul_add_lanes"]["first_launch_to_kernel_ns"] is None


def test_startup_first_step_is_widest() -> None:
    """'With wait=0, warmup=0 ... the first recorded step ... is the widest'."""
    lanes = values(STEP, "startup")["matmul_add_lanes"]
    assert lanes["steps"] == 20
    assert lanes["widest_step"] == lanes["first_step"] == 0
    assert lanes["widest_over_median"] > 1


@_needs_cuda("startup")
def test_startup_wide_steps_counted() -> None:
    """'<n> steps are more than twice as wide as the median step ... once, not every step'."""
    lanes = _cuda_values("startup")["matmul_add_lanes"]
    assert 1 <= lanes["wide_steps"] <= 3


@_needs_cuda("large_cold")
def test_sync_waits_for_gpu_work() -> None:
    """'The GPU busy time inside the call can never exceed the call itself'; the last
    synchronisation is mostly waiting."""
    sync = _cuda_values("large_cold")["matmul_add_sync"]
    assert sync["sync_calls"] >= 1
    assert 0 <= sync["waited_gpu_ns"] <= sync["sync_ns"]


# ---- 03-dispatch-chain ---------------------------------------------------------------------------
def _chains(variant: str) -> list[str]:
    return [r["chain"] for r in table(STEP, variant, "matmul_add_chain")]


def test_chain_of_gemm_and_add() -> None:
    """'the GEMM's chain is ProfilerStep#N → matmul_add → aten::matmul → aten::mm, and the bias
    add's is ProfilerStep#N → matmul_add → aten::add'."""
    chains = _chains("small_cold")
    gemm = [c for c in chains if "aten::mm" in c]
    add = [c for c in chains if "aten::add" in c]
    assert gemm and add
    assert re.match(r"ProfilerStep#\d+ → matmul_add → aten::matmul → aten::mm( → |$)", gemm[0])
    assert re.match(r"ProfilerStep#\d+ → matmul_add → aten::add( → |$)", add[0])


@_needs_cuda("small_cold")
def test_gpu_chain_ends_in_launch_and_kernel() -> None:
    """'On a GPU each chain continues with the launch call and the kernel'."""
    rows = table(STEP, "small_cold", "matmul_add_chain", cpu_ok=False)
    gemm = next(r for r in rows if r["op_name"] == "aten::mm")
    assert re.search(r"aten::mm → cu\w*Launch\w* → .+", gemm["chain"])
    assert gemm["gpu_name"]


def test_batched_uses_bmm() -> None:
    """'With a batch of matrices, aten::matmul hands the work to aten::bmm instead'."""
    chains = _chains("batched")
    assert any("aten::matmul → aten::bmm" in c for c in chains)
    assert not any("aten::mm" in c.split(" → ") for c in chains)
    ops = {r["name"] for r in trace_table(STEP, "batched", "ops")}
    for name in ("aten::expand", "aten::reshape", "aten::_unsafe_view"):
        assert name in ops, name


@_needs_cuda("large_cold")
def test_occupancy_query_before_gemm_not_add() -> None:
    """'cudaOccupancyMaxActiveBlocksPerMultiprocessor' before the GEMM launch; 'the elementwise
    add launches its kernel straight away'."""
    rows = table(STEP, "large_cold", "matmul_add_occupancy", cpu_ok=False)
    gemm = [r for r in rows if r["op_name"] == "aten::mm"]
    add = [r for r in rows if r["op_name"] == "aten::add"]
    assert gemm and add
    assert int(gemm[0]["occupancy_calls"]) >= 1
    assert all(int(r["occupancy_calls"]) == 0 for r in add)


@_needs_cuda("large_cold")
def test_gemm_kernel_uses_more_registers_and_shared_memory() -> None:
    """'The GEMM kernel uses many more registers per thread than the elementwise add and a large
    block of shared memory'."""
    rows = table(STEP, "large_cold", "matmul_add_footprint", cpu_ok=False)
    add = next(r for r in rows if "elementwise" in r["name"] or "add" in r["name"].lower())
    gemm = max(rows, key=lambda r: int(r["registers_per_thread"]))
    assert gemm is not add
    assert int(gemm["registers_per_thread"]) > int(add["registers_per_thread"])
    assert int(gemm["shared_memory_bytes"]) > int(add["shared_memory_bytes"])


# ---- 04-warmup-and-variance ----------------------------------------------------------------------
def test_first_active_step_has_longest_dispatch_delay() -> None:
    """'In the cold run, the first active step has the longest delay from the label to
    aten::matmul'."""
    delays = [int(r["first_op_delay_ns"]) for r in table(STEP, "small_cold", "steps")]
    assert delays[0] == max(delays)


def test_variance_spread_is_ordered() -> None:
    """The spread table: twenty GEMMs, min <= median <= max, and the slowest step named."""
    spread = values(STEP, "variance")["matmul_add_gemm_spread"]
    assert spread["gemms"] == 20
    assert spread["min_ns"] <= spread["median_ns"] <= spread["max_ns"]
    assert spread["slowest_ns"] == spread["max_ns"]
    assert spread["max_over_min"] > 1  # 'the slowest instance takes longer than the fastest'
    steps = [int(r["step"]) for r in table(STEP, "variance", "matmul_add_gemm_steps")]
    assert spread["slowest_step"] in steps
    expected = "kernel" if shown_device(STEP, "variance") == "cuda" else "cpu self"
    assert spread["measured"] == expected


@_needs_cuda("variance")
def test_same_gemm_kernel_every_step() -> None:
    """'The same inputs, the same operator, the same kernel'."""
    rows = table(STEP, "variance", "matmul_add_gemm_kernels", cpu_ok=False)
    assert len(rows) == 1 and int(rows[0]["instances"]) == 20


# ---- 05-torch-compile ----------------------------------------------------------------------------
def test_compiled_rows_once_per_step_same_hash() -> None:
    """'One of each per step, and the same graph hash every step'; mm and add replaced by one
    addmm, with a copy of the bias before it."""
    c = values(STEP, "compiled")["matmul_add_compiled"]
    steps = c["steps"]
    for key in ("cache_lookups", "compiled_regions", "aot_prologues", "graph_calls"):
        assert c[key] == steps, key
    assert c["graph_names"] == 1
    assert c["addmm_calls"] == steps
    assert c["mm_calls"] == c["add_calls"] == 0
    if shown_device(STEP, "compiled") == "cpu":
        assert c["copy_calls"] == steps
    copy = next(r for r in table(STEP, "compiled", "timeline") if r["name"] == "aten::copy_")
    addmm = next(r for r in table(STEP, "compiled", "timeline") if r["name"] == "aten::addmm")
    assert int(copy["depth"]) == int(addmm["depth"]) + 1


def test_compiled_sizes_match_eager() -> None:
    """The eager vs compiled comparison uses the same size and dtype."""
    eager = values(STEP, "large_cold")["matmul_add_settings"]
    compiled = values(STEP, "compiled")["matmul_add_settings"]
    assert (eager["size"], eager["dtype"]) == (compiled["size"], compiled["dtype"])


@_needs_cuda("compiled")
@_needs_cuda("large_cold")
def test_compiled_same_kernel_and_dtod_copy() -> None:
    """'The kernel is the same library GEMM as in eager mode; the bias copy becomes a
    device-to-device memory copy, one per step, launched by cudaMemcpyAsync'."""
    c = _cuda_values("compiled")["matmul_add_compiled"]
    eager = _cuda_values("large_cold")["matmul_add_compiled"]
    assert c["gemm_kernel"] == eager["gemm_kernel"]
    assert c["dtod_copies"] == c["memcpy_calls"] == c["steps"]
