"""Every claim the Part 1 pages (docs/part-1/) make about their traces, checked on the artifacts.

Claims about GPU-only concepts are skipped until a CUDA capture of the variant is committed; the
SQL behind them is tested on real GPU traces in tests/test_matmul_add_queries.py.
"""

from __future__ import annotations

import csv
import json
import re

import pytest

from tests.claims import (
    ARTIFACTS,
    capture_record,
    needs_cuda,
    shown_device,
    table,
    trace_table,
    values,
    variant_dir,
)

STEP, VARIANT = "matmul_add", "small_cold"


def _ops(variant: str = VARIANT) -> dict[str, dict[str, str]]:
    return {row["name"]: row for row in table(STEP, variant, "ops")}


def _cuda_values(variant: str) -> dict[str, dict[str, object]]:
    return values(STEP, variant, cpu_ok=False)


def _cpu_values(variant: str) -> dict[str, dict[str, object]]:
    """What a page's CPU tab shows (`device="cpu"`), whichever set the rest of the page shows."""
    return json.loads((ARTIFACTS / "cpu" / STEP / variant / "values.json").read_text())


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


def _key_average_calls(text: str) -> dict[str, list[int]]:
    """Call counts per row name of a key_averages() table (a name may appear twice on CUDA)."""
    lines = text.splitlines()
    header = next(line for line in lines if line.split() and line.split()[0] == "Name")
    columns = len(re.split(r"\s{2,}", header.strip()))
    calls: dict[str, list[int]] = {}
    for line in lines:
        fields = line.split()
        if len(fields) >= columns and fields[-1].isdigit():
            calls.setdefault(" ".join(fields[: -(columns - 1)]), []).append(int(fields[-1]))
    return calls


def test_sql_table_agrees_with_key_averages() -> None:
    """'The rows match the profiler's table': same names, same call counts. 'The CUDA capture's
    profiler table has more rows than this one': kernels, launch calls, and matmul_add twice."""
    calls = _key_average_calls((variant_dir(STEP, VARIANT) / "key_averages.txt").read_text())
    ops = _ops()
    for name in ("aten::mm", "aten::matmul", "aten::add", "matmul_add"):
        assert int(ops[name]["calls"]) in calls[name], name
    steps = [n for n in ops if re.fullmatch(r"ProfilerStep#\d+", n)]
    assert calls["ProfilerStep*"] == [len(steps)]
    if shown_device(STEP, VARIANT) == "cuda":
        assert len(calls["matmul_add"]) == 2
        assert any(n.startswith("cudaLaunchKernel") for n in calls)
        assert any(n.startswith("void at::native::elementwise_kernel") for n in calls)
        assert not any(n.startswith("cuda") or "kernel" in n for n in ops)


@needs_cuda(STEP, "small_cold")
def test_cuda_profiler_table_rows_beyond_the_operators() -> None:
    """'The rows starting with cuda are the CPU's calls into the CUDA runtime'; 'The kernels have
    rows of their own (the sm80_xmma… GEMM and the elementwise_kernel add), with time in the CUDA
    columns only'; 'the row at the top, with GPU time only, is our label'."""
    text = (variant_dir(STEP, "small_cold", cpu_ok=False) / "key_averages.txt").read_text()
    fields = [re.split(r"\s{2,}", line.strip()) for line in text.splitlines()]
    header = next(f for f in fields if f[0] == "Name")
    rows = [
        dict(zip(header, f, strict=True))
        for f in fields
        if len(f) == len(header) and f[0] != "Name" and not f[0].startswith("-")
    ]

    def us(cell: str) -> float:
        return float(cell.removesuffix("us"))

    top = rows[0]
    assert top["Name"] == "matmul_add"
    assert us(top["CPU total"]) == 0 < us(top["Self CUDA"])
    names = ("sm80_xmma", "void at::native::elementwise_kernel")
    kernels = [r for r in rows if r["Name"].startswith(names)]
    assert len(kernels) == 2
    for row in kernels:
        assert us(row["CPU total"]) == 0 < us(row["Self CUDA"])
    runtime = [r for r in rows if r["Name"].startswith("cuda")]
    assert any(r["Name"].startswith("cudaLaunchKernel") for r in runtime)
    for row in runtime:
        assert us(row["Self CPU"]) > 0 and us(row["CUDA total"]) == 0


def test_label_self_time_explained() -> None:
    """'Our own label has a self time too: <self> of its <total> ... (<pct>)' (the same numbers
    as the ops table's matmul_add row)."""
    overhead = values(STEP, VARIANT)["matmul_add_overhead"]
    ops = _ops()
    assert overhead["label_self_ns"] == int(ops["matmul_add"]["self_ns"])
    assert overhead["label_total_ns"] == int(ops["matmul_add"]["total_ns"])
    assert overhead["label_self_ns"] > 0
    expected = 100 * overhead["label_self_ns"] / overhead["label_total_ns"]
    assert overhead["label_self_pct"] == pytest.approx(expected)


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
        # The variants table has a tab per set: the CPU tab shows the capped sizes.
        assert _cpu_values(variant)["matmul_add_settings"]["size"] < 4096
        if shown_device(STEP, variant) == "cuda":
            assert values(STEP, variant)["matmul_add_settings"]["size"] == 4096


def test_large_label_wider_than_small() -> None:
    """'The large variant's label is wider than the small one's' (the CPU tab only: the CUDA tab
    makes no claim about the labels' widths)."""
    small = _cpu_values("small_cold")["matmul_add_overhead"]["label_median_ns"]
    large = _cpu_values("large_cold")["matmul_add_overhead"]["label_median_ns"]
    assert large > small


def test_small_and_large_differ_in_dtype_too() -> None:
    """'The two rows differ in more than size' (the page names both dtypes from the records)."""
    for read in (values, lambda step, variant: _cpu_values(variant)):
        small = read(STEP, "small_cold")["matmul_add_settings"]
        large = read(STEP, "large_cold")["matmul_add_settings"]
        assert small["size"] < large["size"]
        assert (small["dtype"], large["dtype"]) == ("fp32", "bf16")


def test_gemm_self_time_grows_far_less_than_the_work() -> None:
    """'by far less than its work grows: the multiply-adds grow with the cube of the size, the
    GEMM's self time much more slowly' (the CPU tab)."""
    cube = (
        _cpu_values("large_cold")["matmul_add_settings"]["size"]
        / _cpu_values("small_cold")["matmul_add_settings"]["size"]
    ) ** 3
    small = _cpu_values("small_cold")["matmul_add_overhead"]
    large = _cpu_values("large_cold")["matmul_add_overhead"]
    assert large["gemm_self_ns"] / small["gemm_self_ns"] < cube / 4
    assert large["label_median_ns"] / small["label_median_ns"] < cube / 4


def test_gpu_columns_blank_on_a_cpu_capture() -> None:
    """'there is no GPU column to fill' in the CPU tab: on a CPU capture they are NULL."""
    for variant in ("small_cold", "large_cold"):
        overhead = _cpu_values(variant)["matmul_add_overhead"]
        assert overhead["kernel_time_ns"] is None and overhead["gpu_busy_pct"] is None


@needs_cuda(STEP, "small_cold")
@needs_cuda(STEP, "large_cold")
def test_small_gpu_step_is_overhead_bound() -> None:
    """'The small step is overhead-bound: its GPU is busy for only a small share of the step';
    'The large step keeps the GPU busy for most of the step'; 'the GEMM's CPU self time does not
    grow with the size' (within run-to-run noise); the work shows up as Self CUDA."""
    small = _cuda_values("small_cold")["matmul_add_overhead"]
    large = _cuda_values("large_cold")["matmul_add_overhead"]
    assert small["gpu_busy_pct"] < 10
    assert large["gpu_busy_pct"] > 50
    assert large["gemm_self_ns"] < 1.1 * small["gemm_self_ns"]


@needs_cuda(STEP, "variance")
def test_bf16_gemm_time_is_the_variance_median() -> None:
    """'in bf16 on the GPU of this capture it takes <median>': the variance run is the bf16
    4096 GEMM."""
    settings = _cuda_values("variance")["matmul_add_settings"]
    assert (settings["size"], settings["dtype"]) == (4096, "bf16")
    assert _cuda_values("variance")["matmul_add_gemm_spread"]["measured"] == "kernel"


# ---- 02-cpu-and-gpu-lanes ------------------------------------------------------------------------
@needs_cuda(STEP, "large_cold")
def test_kernels_start_after_their_launch() -> None:
    """'Expect each kernel to start some time after its launch': delays are positive."""
    lanes = _cuda_values("large_cold")["matmul_add_lanes"]
    assert 0 < lanes["launch_to_kernel_min_ns"] <= lanes["first_launch_to_kernel_ns"]
    assert lanes["first_launch_to_kernel_ns"] <= lanes["launch_to_kernel_max_ns"]


@needs_cuda(STEP, "small_cold")
def test_small_step_leaves_gpu_idle() -> None:
    """'Expect the small variant's GPU lane to sit idle for most of its first step'."""
    lanes = _cuda_values("small_cold")["matmul_add_lanes"]
    summary = _cuda_values("small_cold")["step_summary"]
    assert lanes["first_step_gpu_idle_ns"] > 0.5 * summary["step_min_ns"]


def test_cpu_capture_has_one_lane() -> None:
    """'A CPU capture has one lane only ... no launch links' (the CPU tab's figure)."""
    path = ARTIFACTS / "cpu" / STEP / "large_cold" / "timeline.csv"
    with path.open(newline="") as fh:
        lanes = {r["lane"] for r in csv.DictReader(fh)}
    assert len(lanes) == 1 and next(iter(lanes)).startswith("CPU")
    assert _cpu_values("large_cold")["matmul_add_lanes"]["first_launch_to_kernel_ns"] is None


def test_startup_first_step_is_widest() -> None:
    """'With wait=0, warmup=0 ... the first recorded step ... is the widest'."""
    lanes = values(STEP, "startup")["matmul_add_lanes"]
    assert lanes["steps"] == 20
    assert lanes["widest_step"] == lanes["first_step"] == 0
    assert lanes["widest_over_median"] > 1


def test_startup_median_step_is_the_figures_dashed_line() -> None:
    """'the median step, which is ... wide (the dashed line; when the widest step dwarfs the
    rest, its bar is cut and labelled with its width ...)'."""
    import statistics

    from generators.units import format_duration_ns

    lanes = values(STEP, "startup")["matmul_add_lanes"]
    widths = [int(r["dur_ns"]) for r in table(STEP, "startup", "steps")]
    assert lanes["step_median_ns"] == statistics.median_low(widths)
    svg = (variant_dir(STEP, "startup") / "matmul_add_step_bars.svg").read_text()
    assert f"median step {format_duration_ns(lanes['step_median_ns'])}" in svg
    # Off scale only where the widest step is several times the next widest; then labelled.
    widest, second = sorted(widths)[-1], sorted(widths)[-2]
    assert ("off scale" in svg) == (widest > 6 * second)
    if "off scale" in svg:
        assert format_duration_ns(widest) in svg


@needs_cuda(STEP, "startup")
def test_startup_wide_steps_counted() -> None:
    """'a mid-run gap caused by the profiler ... that hits a few steps at most, not every step'
    (the count includes the first, start-up step)."""
    lanes = _cuda_values("startup")["matmul_add_lanes"]
    assert 1 <= lanes["wide_steps"] <= 3


@needs_cuda(STEP, "large_cold")
def test_sync_waits_for_gpu_work() -> None:
    """'The GPU busy time inside the call can never exceed the call itself'; the last
    synchronisation is mostly waiting."""
    sync = _cuda_values("large_cold")["matmul_add_sync"]
    assert sync["sync_calls"] >= 1
    assert 0 <= sync["waited_gpu_ns"] <= sync["sync_ns"]


@needs_cuda(STEP, "large_cold")
def test_sync_at_the_end_is_mostly_waiting() -> None:
    """'The synchronisation at the end mostly waits for queued GPU work' (the In short box): more
    than half of the call is GPU busy time, and work was still queued when it started."""
    sync = _cuda_values("large_cold")["matmul_add_sync"]
    assert sync["pending_activities"] > 0
    assert sync["waited_gpu_pct"] == pytest.approx(100 * sync["waited_gpu_ns"] / sync["sync_ns"])
    assert sync["waited_gpu_pct"] > 50


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


def test_cpu_chain_ends_at_the_operator() -> None:
    """The CPU tab: 'On a CPU, where nothing is launched, the chain ends at the operator that did
    the work', and the GPU work column 'stays empty'."""
    path = ARTIFACTS / "cpu" / STEP / "small_cold" / "matmul_add_chain.csv"
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["op_name"] for r in rows} == {"aten::mm", "aten::add"}
    assert all(r["chain"].endswith(r["op_name"]) and not r["gpu_name"] for r in rows)


@needs_cuda(STEP, "small_cold")
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


@needs_cuda(STEP, "large_cold")
@needs_cuda(STEP, "batched")
@needs_cuda(STEP, "small_cold")
def test_no_occupancy_query_and_three_launch_calls() -> None:
    """'In this capture the answer is no, for every launch'; the add through cudaLaunchKernel,
    the small GEMM's sm80_xmma kernel through cudaLaunchKernelExC, the large bf16 GEMM's nvjet
    kernel through the driver's cuLaunchKernelEx."""
    large = table(STEP, "large_cold", "matmul_add_occupancy", cpu_ok=False)
    batched = table(STEP, "batched", "matmul_add_occupancy", cpu_ok=False)
    assert large and batched
    assert all(int(r["occupancy_calls"]) == 0 for r in large + batched)
    launch = {r["op_name"]: r for r in large}
    assert launch["aten::add"]["launch_name"] == "cudaLaunchKernel"
    assert launch["aten::mm"]["launch_name"] == "cuLaunchKernelEx"
    assert launch["aten::mm"]["kernel_name"].startswith("nvjet")
    small = table(STEP, "small_cold", "matmul_add_chain", cpu_ok=False)
    gemm = next(r for r in small if r["op_name"] == "aten::mm")
    assert "→ cudaLaunchKernelExC → sm80_xmma" in gemm["chain"]
    bmm = {r["op_name"]: r for r in batched}["aten::bmm"]
    assert bmm["launch_name"] == "cudaLaunchKernelExC"
    assert bmm["kernel_name"].startswith("sm80_xmma")


@needs_cuda(STEP, "large_cold")
def test_gemm_kernel_uses_more_registers_and_shared_memory() -> None:
    """'The GEMM kernel uses many more registers per thread than the elementwise add and a large
    block of shared memory'; 'the add launches hundreds of blocks per SM ... the GEMM exactly one
    block per SM and each block works through several output tiles'; the estimate 'reads zero
    for the GEMM'."""
    rows = table(STEP, "large_cold", "matmul_add_footprint", cpu_ok=False)
    add = next(r for r in rows if "CUDAFunctor_add" in r["name"])
    gemm = max(rows, key=lambda r: int(r["registers_per_thread"]))
    assert gemm is not add
    assert int(gemm["registers_per_thread"]) > 4 * int(add["registers_per_thread"])
    assert int(gemm["shared_memory_bytes"]) > 64 * 1024 > int(add["shared_memory_bytes"])
    assert float(gemm["blocks_per_sm"]) == 1 and float(add["blocks_per_sm"]) >= 100
    tile_m, tile_n = map(int, re.search(r"_(\d+)x(\d+)_", gemm["name"]).groups())
    size = values(STEP, "large_cold")["matmul_add_settings"]["size"]
    blocks = 1
    for n in gemm["grid"].split(" × "):
        blocks *= int(n)
    assert (size // tile_m) * (size // tile_n) > 2 * blocks
    assert gemm["est_occupancy"] == "0 %" != add["est_occupancy"]


# ---- 04-warmup-and-variance ----------------------------------------------------------------------
def _gaps(variant: str) -> list[dict[str, int]]:
    keys = ("label_ns", "label_self_ns", "first_op_delay_ns", "longest_gap_ns")
    return [{k: int(r[k]) for k in keys} for r in table(STEP, variant, "matmul_add_label_gaps")]


def test_label_gaps_agree_with_steps_table() -> None:
    """The label-gaps table and the steps table behind the bar charts measure the same label."""
    for variant in ("small_cold", "small_warm"):
        steps = table(STEP, variant, "steps")
        gaps = table(STEP, variant, "matmul_add_label_gaps")
        assert [r["step"] for r in steps] == [r["step"] for r in gaps]
        for s, g in zip(steps, gaps, strict=True):
            assert s["label_ns"] == g["label_ns"]
            assert s["first_op_delay_ns"] == g["first_op_delay_ns"]
            assert 0 <= int(g["longest_gap_ns"]) <= int(g["label_self_ns"]) <= int(g["label_ns"])


@pytest.mark.parametrize("variant", ["small_cold", "small_warm"])
def test_first_step_extra_time_is_label_self_time(variant: str) -> None:
    """'Together the label's self time and aten::mm's own time hold most of the first step's extra
    width'; in a CUDA capture 'its own time in the first step is more than twice that of any later
    step'; on a CPU 'the extra time sits almost entirely in the label's self time'; 'the label's
    self time is more than twice that of any later step, and its longest stretch without an
    operator is longer than any later step's'. In the warm run too: 'the first active step is
    still the widest, with the most self time and the longest delay to its first operator'."""
    rows = table(STEP, variant, "matmul_add_label_gaps")
    first, *later = _gaps(variant)
    gemm = [int(r["gemm_self_ns"]) for r in rows]
    widest_later = max(later, key=lambda r: r["label_ns"])
    extra_width = first["label_ns"] - widest_later["label_ns"]
    extra_self = first["label_self_ns"] - widest_later["label_self_ns"]
    extra_gemm = gemm[0] - max(gemm[1:])
    assert extra_width > 0
    assert extra_self + extra_gemm > extra_width / 2
    if shown_device(STEP, variant) == "cuda":
        assert gemm[0] > 2 * max(gemm[1:])
    else:
        assert extra_self > 0.8 * extra_width
    assert first["label_self_ns"] > 2 * max(r["label_self_ns"] for r in later)
    assert first["longest_gap_ns"] > max(r["longest_gap_ns"] for r in later)
    assert first["first_op_delay_ns"] > max(r["first_op_delay_ns"] for r in later)


@needs_cuda(STEP, "large_fp32")
@needs_cuda(STEP, "variance")
def test_fp32_gemm_is_a_plain_ffma_kernel_ten_times_slower() -> None:
    """'a different library kernel (sm80_xmma, ffma ...), more than ten times as long at the
    median'."""
    bf16 = table(STEP, "variance", "matmul_add_gemm_kernels", cpu_ok=False)
    fp32 = table(STEP, "large_fp32", "matmul_add_gemm_kernels", cpu_ok=False)
    assert len(bf16) == len(fp32) == 1
    assert fp32[0]["kernel_name"] != bf16[0]["kernel_name"]
    assert fp32[0]["kernel_name"].startswith("sm80_xmma") and "ffma" in fp32[0]["kernel_name"]
    assert int(fp32[0]["median_ns"]) > 10 * int(bf16[0]["median_ns"])


def test_first_op_delay_is_only_part_of_the_self_time() -> None:
    """'The delay before aten::matmul is the longest of the three steps too, but it is only part
    of the self time: the rest falls between the operators and after the last one'."""
    first = _gaps("small_cold")[0]
    assert first["first_op_delay_ns"] < 0.9 * first["label_self_ns"]


def test_first_calls_happen_in_skipped_steps() -> None:
    """'the wait step has already run the code untraced, and the warmup step has traced it and
    thrown the trace away'; the warm run adds ten untraced calls before that."""
    cold = capture_record(STEP, "small_cold")
    warm = capture_record(STEP, "small_warm")
    assert cold["schedule"]["wait"] >= 1 and cold["schedule"]["warmup"] >= 1
    assert cold["settings"]["warmup"] == 0 and warm["settings"]["warmup"] == 10
    assert warm["schedule"] == cold["schedule"]


def test_variance_spread_is_ordered() -> None:
    """The spread table: twenty GEMMs, min <= median <= max, and the slowest step named."""
    spread = values(STEP, "variance")["matmul_add_gemm_spread"]
    assert spread["gemms"] == 20
    assert spread["min_ns"] <= spread["median_ns"] <= spread["max_ns"]
    assert spread["slowest_ns"] == spread["max_ns"]
    assert spread["max_over_min"] > 1  # 'the slowest instance takes longer than the fastest'
    assert spread["mean_ns"] > spread["median_ns"]  # 'here it sits above the median'
    steps = [int(r["step"]) for r in table(STEP, "variance", "matmul_add_gemm_steps")]
    assert spread["slowest_step"] in steps
    expected = "kernel" if shown_device(STEP, "variance") == "cuda" else "cpu self"
    assert spread["measured"] == expected


@needs_cuda(STEP, "variance")
def test_same_gemm_kernel_every_step() -> None:
    """'On a GPU, expect the same GEMM kernel in every step'."""
    rows = table(STEP, "variance", "matmul_add_gemm_kernels", cpu_ok=False)
    assert len(rows) == 1 and int(rows[0]["instances"]) == 20


# ---- 05-torch-compile ----------------------------------------------------------------------------
def test_compiled_rows_once_per_step_same_hash() -> None:
    """'One of each per step, and the same graph hash every step'; mm and add replaced by one
    addmm; 'In the CUDA capture nothing else is left: no aten::copy_' (on a CPU, a copy_ under
    addmm, once per step)."""
    c = values(STEP, "compiled")["matmul_add_compiled"]
    steps = c["steps"]
    for key in ("cache_lookups", "compiled_regions", "aot_prologues", "graph_calls"):
        assert c[key] == steps, key
    assert c["graph_names"] == 1
    assert c["addmm_calls"] == steps
    assert c["mm_calls"] == c["add_calls"] == 0
    if shown_device(STEP, "compiled") == "cuda":
        assert c["copy_calls"] == 0
    cpu = ARTIFACTS / "cpu" / STEP / "compiled"
    if (cpu / "values.json").exists():
        on_cpu = json.loads((cpu / "values.json").read_text())["matmul_add_compiled"]
        assert on_cpu["copy_calls"] == on_cpu["steps"]
        with (cpu / "timeline.csv").open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        copy = next(r for r in rows if r["name"] == "aten::copy_")
        addmm = next(r for r in rows if r["name"] == "aten::addmm")
        assert int(copy["depth"]) == int(addmm["depth"]) + 1


@needs_cuda(STEP, "compiled")
def test_compiled_cuda_step_keeps_one_aten_operator() -> None:
    """'In the CUDA capture, one: aten::mm and aten::add are gone, replaced by one aten::addmm,
    inside a few new rows that compiling adds'."""
    ops = table(STEP, "compiled", "ops", cpu_ok=False)
    assert [r["name"] for r in ops if r["name"].startswith("aten::")] == ["aten::addmm"]
    names = {r["name"] for r in ops}
    assert {"TorchDynamo Cache Lookup", "AOTDispatcher Runtime Wrapper Prologue"} <= names
    assert any(n.startswith("Torch-Compiled Region") for n in names)


def test_compiled_sizes_match_eager() -> None:
    """The eager vs compiled comparison uses the same size and dtype."""
    eager = values(STEP, "large_cold")["matmul_add_settings"]
    compiled = values(STEP, "compiled")["matmul_add_settings"]
    assert (eager["size"], eager["dtype"]) == (compiled["size"], compiled["dtype"])


@needs_cuda(STEP, "compiled")
@needs_cuda(STEP, "large_cold")
def test_compiled_step_slower_and_why() -> None:
    """'not in this capture, although the GPU does less': one kernel fewer per step, less kernel
    time; 'the GEMM call is still one library call with about the same self time'; the rows
    compiling adds; 'Eager mode's CPU got through its steps in less time than the GPU needed for
    their kernels, so the GPU ran behind it and stayed busy for most of the steps. The compiled
    steps take longer on the CPU than their kernels take on the GPU, so the GPU waits, its busy
    share drops, and the label is wider'."""
    eager, compiled = _cuda_values("large_cold"), _cuda_values("compiled")
    eo, co = eager["matmul_add_overhead"], compiled["matmul_add_overhead"]
    assert co["label_median_ns"] > eo["label_median_ns"]
    e, c = eager["matmul_add_compiled"], compiled["matmul_add_compiled"]
    assert (e["mm_calls"], e["add_calls"], e["addmm_calls"]) == (e["steps"], e["steps"], 0)
    assert (c["addmm_calls"], c["copy_calls"]) == (c["steps"], 0)
    assert eo["kernels"] == 2 * e["steps"] and co["kernels"] == c["steps"]
    assert co["kernel_time_ns"] < eo["kernel_time_ns"]
    ratio = c["gemm_self_ns_per_step"] / e["gemm_self_ns_per_step"]
    assert 0.75 < ratio < 1.33
    assert e["bias_ns_per_step"] > 0 and c["bias_ns_per_step"] is None
    assert e["compile_rows_self_ns_per_step"] == 0 < c["compile_rows_self_ns_per_step"]
    assert eo["steps_total_ns"] < eo["kernel_time_ns"]
    assert co["steps_total_ns"] > co["kernel_time_ns"]
    assert eo["gpu_busy_pct"] > 50 > co["gpu_busy_pct"]


def test_compiled_gpu_columns_blank_on_a_cpu_capture() -> None:
    """GPU counts are unknown, not zero, on a CPU capture."""
    if shown_device(STEP, "compiled") != "cpu":
        pytest.skip("the page shows a CUDA capture")
    c = values(STEP, "compiled")["matmul_add_compiled"]
    for key in ("memcpy_calls", "dtod_copies", "copy_gpu_work", "copy_gpu_name", "kernels"):
        assert c[key] is None, key


@needs_cuda(STEP, "compiled")
@needs_cuda(STEP, "large_cold")
def test_compiled_gemm_kernel_takes_the_bias() -> None:
    """'The two kernel names differ only in a bias before the layout suffix'; no copy on the GPU;
    'a Memset (Device), launched by a cudaMemsetAsync inside aten::addmm'."""
    c = _cuda_values("compiled")["matmul_add_compiled"]
    eager = _cuda_values("large_cold")["matmul_add_compiled"]
    head, _, suffix = eager["gemm_kernel"].rpartition("_")
    assert c["gemm_kernel"] == f"{head}_bias_{suffix}"
    assert c["copy_gpu_work"] == c["memcpy_calls"] == c["dtod_copies"] == 0
    rows = table(STEP, "compiled", "timeline", cpu_ok=False)
    memset = next(r for r in rows if r["name"] == "cudaMemsetAsync")
    addmm = next(r for r in rows if r["name"] == "aten::addmm")
    assert int(memset["depth"]) == int(addmm["depth"]) + 1
    gpu = sorted((r for r in rows if r["lane"].startswith("GPU")), key=lambda r: int(r["start_ns"]))
    assert gpu[0]["name"] == "Memset (Device)" and gpu[0]["launched_by"] == memset["id"]
    assert gpu[1]["name"] == c["gemm_kernel"]


@needs_cuda(STEP, "compiled")
@needs_cuda(STEP, "large_cold")
def test_both_steps_memset_before_the_gemm() -> None:
    """'Both timelines show ... before the GEMM kernel, every step: a Memset (Device) of well
    under a microsecond, launched by a cudaMemsetAsync inside the GEMM operator (aten::mm eager,
    aten::addmm compiled)'; 'GPU kernels in the active steps counts kernels only ... eager
    mode's count is the GEMM and the add per step, the compiled one the GEMM alone'."""
    from tests.open_traces import shared_trace

    sql = (
        "INCLUDE PERFETTO MODULE guide.launch; "
        "SELECT st.id AS step, c.op_name, c.leaf_name, c.gpu_name, c.gpu_category, c.gpu_dur "
        "FROM guide_launch_chain AS c JOIN guide_kineto_profiler_step AS st "
        "ON c.ts >= st.ts AND c.ts < st.ts + st.dur WHERE c.gpu_id IS NOT NULL ORDER BY c.gpu_ts"
    )
    for variant, op in (("large_cold", "aten::mm"), ("compiled", "aten::addmm")):
        v = _cuda_values(variant)
        with shared_trace(variant_dir(STEP, variant, cpu_ok=False) / "trace.json.gz") as tp:
            rows = list(tp.query(sql))
        steps = v["matmul_add_compiled"]["steps"]
        memsets = [r for r in rows if r.gpu_category == "gpu_memset"]
        assert len(memsets) == steps and len({r.step for r in memsets}) == steps
        for m in memsets:
            assert m.gpu_name == "Memset (Device)" and m.leaf_name == "cudaMemsetAsync"
            assert m.op_name == op and m.gpu_dur < 1000
            after = rows[rows.index(m) + 1]
            assert after.gpu_name == v["matmul_add_compiled"]["gemm_kernel"]
        kernels = [r for r in rows if r.gpu_category == "kernel"]
        assert v["matmul_add_overhead"]["kernels"] == len(kernels)
        assert len(kernels) == (2 if variant == "large_cold" else 1) * steps


# ---- claims added with the busy share, occupancy and launch-queue definitions -------------------
def _key_average_row(text: str, name: str) -> list[list[str]]:
    """The fields of every key_averages() row called ``name`` (split on runs of spaces)."""
    return [
        re.split(r"\s{2,}", line.strip())
        for line in text.splitlines()
        if re.split(r"\s{2,}", line.strip())[0] == name
    ]


@needs_cuda(STEP, "small_cold")
def test_self_cuda_percent_above_100_is_the_label_span_over_gpu_time() -> None:
    """'Its Self CUDA is the width of those slices ... divides that by the table's Self CUDA time
    total ... far above 100'; 'The span counts the GPU idling between the two kernels'."""
    overhead = _cuda_values("small_cold")["matmul_add_overhead"]
    text = (variant_dir(STEP, "small_cold", cpu_ok=False) / "key_averages.txt").read_text()
    gpu_row = next(r for r in _key_average_row(text, "matmul_add") if r[1] == "0.00%")
    printed_pct = float(gpu_row[7].rstrip("%"))
    assert printed_pct > 100
    assert printed_pct == pytest.approx(100 * overhead["label_gpu_span_ratio"], rel=1e-3)
    total_us = float(re.search(r"Self CUDA time total: ([\d.]+)us", text).group(1))
    assert overhead["gpu_time_total_ns"] == pytest.approx(total_us * 1e3, abs=1)
    # The span is wider than the kernels it covers: idle time counted as if it were work.
    assert overhead["label_gpu_span_ns"] > overhead["kernel_time_ns"]


@needs_cuda(STEP, "small_cold")
@needs_cuda(STEP, "large_cold")
@needs_cuda(STEP, "compiled")
def test_busy_share_is_one_definition() -> None:
    """'GPU busy share ... is one quantity: ... at least one GPU activity ... running inside a
    window, divided by the window's width'; the kernel-time sum over the steps' width 'would
    overstate the busy share'; 'For the large GEMM it is longer than the GPU's busy time inside
    the window'."""
    for variant in ("small_cold", "large_cold", "compiled"):
        v = _cuda_values(variant)
        o = v["matmul_add_overhead"]
        assert o["gpu_busy_pct"] == pytest.approx(100 * o["gpu_busy_ns"] / o["window_ns"])
        assert o["gpu_busy_pct"] == pytest.approx(v["step_summary"]["gpu_busy_pct"])
        assert 0 <= o["gpu_busy_pct"] <= 100
        assert o["gpu_busy_ns"] <= o["window_ns"]
    large = _cuda_values("large_cold")["matmul_add_overhead"]
    assert large["kernel_time_ns"] > large["gpu_busy_ns"]
    assert 100 * large["kernel_time_ns"] / large["steps_total_ns"] > large["gpu_busy_pct"] + 10


@needs_cuda(STEP, "small_cold")
@needs_cuda(STEP, "large_cold")
def test_the_two_shares_name_their_denominators() -> None:
    """'The GEMM share divides the GEMM's CPU self time by the step time, the sum of the active
    steps' widths. The GPU busy share divides by the window ... a little wider than the step
    time'."""
    for variant in ("small_cold", "large_cold"):
        o = _cuda_values(variant)["matmul_add_overhead"]
        assert o["gemm_self_pct"] == pytest.approx(100 * o["gemm_self_ns"] / o["steps_total_ns"])
        assert o["gpu_busy_pct"] == pytest.approx(100 * o["gpu_busy_ns"] / o["window_ns"])
        assert o["steps_total_ns"] < o["window_ns"] < 1.2 * o["steps_total_ns"]


def _union_ns(intervals: list[tuple[int, int]]) -> int:
    total, covered = 0, None
    for start, end in sorted(intervals):
        if covered is None or start >= covered:
            total += end - start
            covered = end
        elif end > covered:
            total += end - covered
            covered = end
    return total


@needs_cuda(STEP, "large_cold")
def test_busy_time_is_a_union_recomputed_from_the_trace() -> None:
    """The busy time is the union of GPU activity clipped to the steps' window, recomputed here
    from the trace's GPU activities."""
    from tests.open_traces import shared_trace

    path = variant_dir(STEP, "large_cold", cpu_ok=False) / "trace.json.gz"
    sql = (
        "INCLUDE PERFETTO MODULE guide.kineto; "
        "SELECT (SELECT MIN(ts) FROM guide_kineto_profiler_step) AS lo, "
        "(SELECT MAX(ts + dur) FROM guide_kineto_profiler_step) AS hi, g.ts, g.dur "
        "FROM guide_kineto_gpu_activity AS g"
    )
    with shared_trace(path) as tp:
        rows = list(tp.query(sql))
    lo, hi = rows[0].lo, rows[0].hi
    clipped = [
        (max(r.ts, lo), min(r.ts + r.dur, hi)) for r in rows if r.ts < hi and r.ts + r.dur > lo
    ]
    overhead = _cuda_values("large_cold")["matmul_add_overhead"]
    assert overhead["gpu_busy_ns"] == _union_ns(clipped)
    assert overhead["window_ns"] == hi - lo


@needs_cuda(STEP, "large_cold")
def test_longest_delay_is_queueing_not_launch_latency() -> None:
    """'The longest delay is not a slow launch: it is the bias add's kernel waiting behind the
    GEMM'; 'Launch latency itself is short here: only 1 launch found its stream idle, so the
    table's shortest and longest latency are that one launch's L' (and the page's summary: 'launch
    latency: L under the profiler, on the only launch in this capture that found its stream
    idle'); 'A delay of hundreds of microseconds is queueing'."""
    lanes = _cuda_values("large_cold")["matmul_add_lanes"]
    assert lanes["longest_delay_queued"] == 1
    assert lanes["idle_launches"] + lanes["queued_launches"] == 6
    assert lanes["idle_launches"] == 1
    assert lanes["latency_min_ns"] == lanes["latency_max_ns"] < 100_000
    assert 100_000 <= lanes["queue_max_ns"] < 1_000_000
    assert lanes["queue_max_ns"] > 5 * lanes["latency_max_ns"]
    assert lanes["turnaround_max_ns"] < 0.05 * lanes["queue_max_ns"]
    assert lanes["launch_to_kernel_max_ns"] > lanes["queue_max_ns"]
    rows = table(STEP, "large_cold", "timeline", cpu_ok=False)
    gpu = sorted((r for r in rows if r["lane"].startswith("GPU")), key=lambda r: int(r["start_ns"]))
    assert "nvjet" in gpu[1]["name"] and "CUDAFunctor_add" in gpu[2]["name"]


@needs_cuda(STEP, "large_cold")
def test_launch_latency_is_mostly_the_launch_call() -> None:
    """'That one launch latency, L, is measured under the profiler, and most of it is the launch
    call's own CPU time'; the cheatsheet: 'launch latency alone was L under the profiler in the
    guide's one idle launch, mostly the launch call itself'."""
    from tests.open_traces import shared_trace

    lanes = _cuda_values("large_cold")["matmul_add_lanes"]
    sql = (
        "INCLUDE PERFETTO MODULE guide.launch; "
        "SELECT dur, launch_to_start_ns FROM guide_launch_chain WHERE gpu_category = 'kernel'"
    )
    path = variant_dir(STEP, "large_cold", cpu_ok=False) / "trace.json.gz"
    with shared_trace(path) as tp:
        launches = {r.launch_to_start_ns: r.dur for r in tp.query(sql)}
    for latency in (lanes["latency_min_ns"], lanes["latency_max_ns"]):
        call_ns = launches[latency]
        assert call_ns > 0.5 * latency


@needs_cuda(STEP, "startup")
def test_occupancy_queried_once_per_shape_as_cluster_query() -> None:
    """'the first aten::mm of the run asks, and mostly about clusters ..., then never again';
    'The elementwise add never asks'."""
    calls = _cuda_values("startup")["matmul_add_occupancy_calls"]
    assert calls["occupancy_calls"] == (
        calls["cluster_calls"] + calls["blocks_per_sm_calls"] + calls["dynamic_smem_calls"]
    )
    assert calls["cluster_calls"] > calls["blocks_per_sm_calls"] + calls["dynamic_smem_calls"]
    assert calls["blocks_per_sm_calls"] == calls["dynamic_smem_calls"] == 1
    assert calls["blocks_per_sm_call"].startswith("cudaOccupancyMaxActiveBlocksPerMultiprocessor")
    assert (calls["asking_ops"], calls["asking_op_names"]) == (1, "aten::mm")
    assert calls["asking_steps"] == 1 and calls["asking_step"] == 0
    assert calls["gemm_calls"] == calls["steps"] == 20
    assert calls["silent_gemm_calls"] == calls["gemm_calls"] - 1
    rows = table(STEP, "startup", "matmul_add_occupancy", cpu_ok=False)
    by_op = {r["op_name"]: int(r["occupancy_calls"]) for r in rows}
    assert by_op == {"aten::mm": calls["occupancy_calls"], "aten::add": 0}
    assert capture_record(STEP, "startup")["schedule"] == {"wait": 0, "warmup": 0, "active": 20}


def _theoretical_blocks(regs: int, threads: int, smem: int) -> int:
    """Blocks per SM on compute capability 9.0, restated from the CUDA occupancy rules."""
    warps = -(-threads // 32)
    per_warp = -(-regs * 32 // 256) * 256
    by_regs = 32 if per_warp == 0 else (16384 // per_warp) * 4 // warps
    alloc = -(-(smem + 1024) // 128) * 128
    by_smem = 0 if smem > 232448 else 233472 // alloc
    return min(32, 64 // warps, by_regs, by_smem)


@needs_cuda(STEP, "small_cold")
def test_shared_memory_per_sm_is_the_occupancy_rules_limit() -> None:
    """'228 KiB of shared memory per SM', the limit the guide's occupancy function divides by,
    in the same binary unit as the footprint table's shared memory column."""
    from tests.open_traces import shared_trace

    per_sm, reserved = 228 * 1024, 1024  # per SM; the runtime reserves 1 KiB per block
    half = per_sm // 2 - reserved  # two blocks asking for this fill the SM exactly
    sql = (
        "INCLUDE PERFETTO MODULE guide.occupancy; "
        f"SELECT guide_occupancy_blocks_per_sm(32, 32, {half}) AS two, "
        f"guide_occupancy_blocks_per_sm(32, 32, {half + 128}) AS one"
    )
    with shared_trace(variant_dir(STEP, "small_cold", cpu_ok=False) / "trace.json.gz") as tp:
        (row,) = list(tp.query(sql))
    assert (row.two, row.one) == (2, 1)


@needs_cuda(STEP, "large_cold")
@needs_cuda(STEP, "large_fp32")
def test_theoretical_occupancy_and_kineto_estimate() -> None:
    """'168 registers for each of 384 threads fill the register file with one block, 12 warps of
    64'; Kineto's estimate: the calculator's blocks 'capped at the grid's blocks per SM, and
    rounds to a whole percent'; 'reads zero for the GEMM' and for the fp32 sm80_xmma kernel;
    'What the zero kernels share is shared memory above 48 KiB per block'."""
    rows = table(STEP, "large_cold", "matmul_add_footprint", cpu_ok=False)
    rows += table(STEP, "large_fp32", "matmul_add_footprint", cpu_ok=False)
    for row in rows:
        regs, smem = int(row["registers_per_thread"]), int(row["shared_memory_bytes"])
        threads = 1
        for n in row["block"].split(" × "):
            threads *= int(n)
        blocks = _theoretical_blocks(regs, threads, smem)
        theoretical = 100 * blocks * -(-threads // 32) / 64
        assert float(row["theoretical_occupancy_pct"]) == pytest.approx(theoretical)
        assert 0 < theoretical <= 100
        # Kineto: the calculator without the >48 KB opt-in, capped by the grid, whole percent.
        calculator = 0 if smem > 48 * 1024 else blocks
        kineto = int(0.5 + 100 * min(calculator, float(row["blocks_per_sm"])) * threads / 2048)
        assert row["est_occupancy"] == f"{kineto} %"
        assert (row["est_occupancy"] == "0 %") == (smem > 48 * 1024)
    gemm = next(r for r in rows if r["name"].startswith("nvjet"))
    assert (gemm["registers_per_thread"], gemm["block"]) == ("168", "384 × 1 × 1")
    assert float(gemm["theoretical_occupancy_pct"]) == 100 * 12 / 64
    assert gemm["occupancy_limit"] == "registers"
    fp32 = next(r for r in rows if r["name"].startswith("sm80_xmma"))
    assert fp32["est_occupancy"] == "0 %" and "cga" not in fp32["name"]


def test_profiling_slows_the_llm_decode_step() -> None:
    """'Part 4 measures a decode step ... under the profiler against ... with the profiler off'
    (the point: profiling slows what it measures)."""
    llm = values("llm", "eager_b1")
    assert llm["llm_decode"]["token_ns"] > 1.5 * llm["capture"]["tpot_s"] * 1e9


@needs_cuda(STEP, "small_cold")
def test_first_step_extra_time_differs_from_the_reference() -> None:
    """The reference saw a 228 µs stretch before aten::matmul; 'Our first step's delay before
    aten::matmul is <value> ... aten::mm's own time holds <pct> of it'."""
    first = _cuda_values("small_cold")["matmul_add_first_step"]
    assert first["first_op_delay_ns"] < 227_757 / 2
    assert first["first_op_delay_ns"] > first["later_op_delay_max_ns"]
    assert first["extra_gemm_self_pct"] > 2 * first["extra_delay_pct"]
    assert 0 < first["extra_delay_pct"] < first["extra_gemm_self_pct"] < 100


@needs_cuda(STEP, "variance")
def test_variance_spread_far_below_the_reference() -> None:
    """The reference: '~580 µs except when the GPU throws a fit', a mean of five of 1084 µs, so
    'the fifth took about 3.1 ms, over five times as long: one outlier nearly doubled the mean';
    'On our H200 the slowest of twenty is <ratio> times the fastest'; 'warmed up by the
    untraced calls'."""
    typical_us, mean_us = 580, 1084  # the reference post's two numbers
    outlier_us = 5 * mean_us - 4 * typical_us
    assert round(outlier_us / 1000, 1) == 3.1
    assert outlier_us > 5 * typical_us
    assert 1.8 < mean_us / typical_us < 2
    spread = _cuda_values("variance")["matmul_add_gemm_spread"]
    assert 1 < spread["max_over_min"] < 1.5
    assert capture_record(STEP, "variance")["settings"]["warmup"] > 0


def test_bias2d_variant_registered_for_cuda() -> None:
    """'The compiled_bias2d variant runs our code with a matrix bias (--bias2d)'."""
    from generators.steps import get_step

    variant = get_step(STEP).variant("compiled_bias2d")
    assert variant.needs_cuda and "--bias2d" in variant.args_for("cuda")
    assert "--compile" in variant.args_for("cuda")


@needs_cuda(STEP, "compiled_bias2d")
@needs_cuda(STEP, "large_cold")
def test_bias2d_copies_the_matrix_then_accumulates_onto_it() -> None:
    """'With a matrix bias the copy is back, one per step ...: a cudaMemcpyAsync inside
    aten::addmm (there is no aten::copy_ row ...) starts a Memcpy DtoD of the whole bias matrix,
    and the GEMM kernel runs after it. That kernel has no bias in its name. It differs from eager
    mode's GEMM kernel in one part only, badd where eager's has bz'."""
    from generators.trace_json import load_events
    from tests.open_traces import shared_trace

    c = _cuda_values("compiled_bias2d")["matmul_add_compiled"]
    settings = _cuda_values("compiled_bias2d")["matmul_add_settings"]
    eager = _cuda_values("large_cold")["matmul_add_compiled"]
    steps = c["steps"]
    assert c["memcpy_calls"] == c["dtod_copies"] == steps
    assert c["copy_calls"] == 0 and c["addmm_calls"] == steps
    assert "_bias_" not in c["gemm_kernel"]
    assert "_bz_" in eager["gemm_kernel"]
    assert c["gemm_kernel"] == eager["gemm_kernel"].replace("_bz_", "_badd_")
    sql = (
        "INCLUDE PERFETTO MODULE guide.launch; "
        "SELECT st.id AS step, c.op_name, c.leaf_name, c.gpu_name, c.gpu_category "
        "FROM guide_launch_chain AS c JOIN guide_kineto_profiler_step AS st "
        "ON c.ts >= st.ts AND c.ts < st.ts + st.dur WHERE c.gpu_id IS NOT NULL ORDER BY c.gpu_ts"
    )
    path = variant_dir(STEP, "compiled_bias2d", cpu_ok=False) / "trace.json.gz"
    with shared_trace(path) as tp:
        rows = list(tp.query(sql))
    copies = [r for r in rows if r.gpu_category == "gpu_memcpy"]
    assert len(copies) == steps and len({r.step for r in copies}) == steps
    for copy in copies:
        assert copy.gpu_name.startswith("Memcpy DtoD")
        assert (copy.op_name, copy.leaf_name) == ("aten::addmm", "cudaMemcpyAsync")
        later = [r for r in rows[rows.index(copy) + 1 :] if r.step == copy.step]
        assert [r.gpu_name for r in later if r.gpu_category == "kernel"] == [c["gemm_kernel"]]
    element = {"bf16": 2, "fp16": 2, "fp32": 4}[settings["dtype"]]
    copied = [e["args"]["bytes"] for e in load_events(path) if e.get("cat") == "gpu_memcpy"]
    assert copied == [settings["size"] ** 2 * element] * steps


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_capture_command_on_the_first_page_is_the_recorded_one(device: str) -> None:
    """'To capture the same trace yourself, run the command its capture record names': one
    command per device tab, printed from that device's record by `command()` (never retyped),
    whose output folder is the `<folder>` the page explains."""
    path = ARTIFACTS / device / STEP / VARIANT / "capture.json"
    if not path.exists():
        pytest.skip(f"no {device} capture of {STEP}/{VARIANT} committed")
    command = json.loads(path.read_text())["command"]
    assert command[-2:] == ["--out", "<folder>"]
    pin = "cpu=False" if device == "cuda" else 'device="cpu"'
    page = (ARTIFACTS.parent / "docs" / "part-1" / "01-first-trace.md").read_text()
    assert f'    {{{{ command("{STEP}", "{VARIANT}", {pin}) }}}}\n' in page
