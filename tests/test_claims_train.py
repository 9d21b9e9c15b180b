"""Every claim the Part 5 pages (docs/part-5/) make about their traces, checked on the artifacts.

Claims about GPU-only concepts are checked on the CUDA capture and skipped until one exists;
tests/test_train_sql.py runs part of the SQL behind them (the engine's thread, cross-thread
`fwdbwd` links, optimizer kernels, copies) on a real GPU training trace from another project.
"""

from __future__ import annotations

import pytest

from tests.claims import capture_record, needs_cuda, table, values, variant_dir
from tests.sql_rows import trace_rows

STEP = "train"
NAIVE, FOREACH, TUNED, COMPILED = "naive", "foreach", "tuned", "compiled"
MEMORY, MEMORY_FP32 = "memory", "memory_fp32"


def _values(variant: str, query: str, *, cpu_ok: bool = True) -> dict[str, object]:
    return values(STEP, variant, cpu_ok=cpu_ok)[query]


def _settings(variant: str) -> dict:
    return capture_record(STEP, variant)["settings"]


def _number(text: str) -> float | None:
    """A CSV cell as a number; an empty cell is SQL NULL (shown as "–")."""
    return None if text == "" else float(text)


def _trace_rows(variant: str, sql: str) -> list[dict[str, object]]:
    """Rows of ``sql`` (with the Part 5 module) on the variant's committed trace."""
    trace = variant_dir(STEP, variant) / "trace.json.gz"
    include = "INCLUDE PERFETTO MODULE guide.train;\nINCLUDE PERFETTO MODULE guide.shapes;\n"
    return trace_rows(trace, include + sql)


def _steps(variant: str) -> int:
    return capture_record(STEP, variant)["schedule"]["active"]


def _phases(variant: str) -> dict[str, dict[str, float | None]]:
    rows = table(STEP, variant, "train_phases")
    return {r["phase"]: {k: _number(v) for k, v in r.items() if k != "phase"} for r in rows}


# ---- the variants are what the pages say they are -----------------------------------------------
def test_variants_differ_as_the_table_says() -> None:
    """'naive: fp32, no workers, ..., single-tensor AdamW, zero_grad(set_to_none=False), loss.item()
    every step'; 'tuned: bf16 autocast, two workers, fused AdamW, set_to_none=True, every ten'."""
    naive, tuned = _settings(NAIVE), _settings(TUNED)
    assert (naive["dtype"], naive["workers"], naive["optimizer"]) == ("fp32", 0, "single")
    assert (naive["set_to_none"], naive["item_every"]) == (False, 1)
    assert (tuned["dtype"], tuned["workers"], tuned["optimizer"]) == ("bf16", 2, "fused")
    assert (tuned["set_to_none"], tuned["item_every"]) == (True, 10)
    assert _settings(FOREACH)["optimizer"] == "foreach"
    assert _settings(COMPILED)["compile"] is True
    assert _settings(MEMORY)["profile_memory"] and _settings(MEMORY)["dtype"] == "bf16"
    assert _settings(MEMORY_FP32)["profile_memory"] and _settings(MEMORY_FP32)["dtype"] == "fp32"
    for variant in (MEMORY, MEMORY_FP32):  # 'from the very first step (wait=0, warmup=0)'
        schedule = capture_record(STEP, variant)["schedule"]
        assert (schedule["wait"], schedule["warmup"]) == (0, 0)


# ---- page 1: the phases, the backward -----------------------------------------------------------
@pytest.mark.parametrize("variant", [NAIVE, TUNED, COMPILED])
def test_every_phase_once_per_step_and_shares_add_up(variant: str) -> None:
    """'Each row is one phase, averaged over the profiled steps ... the last row is the step's time
    outside every phase'."""
    phases = _phases(variant)
    expected = ["data", "to_device", "forward", "backward", "optimizer", "zero_grad"]
    if _settings(variant)["item_every"] == 1:
        expected.append("log_loss")
    assert list(phases) == [*expected, "rest of the step"]
    assert all(phases[p]["calls_per_step"] == 1 for p in expected)
    assert sum(p["step_pct"] for p in phases.values()) == pytest.approx(100, abs=0.5)
    assert 0 <= phases["rest of the step"]["cpu_ns"] < phases["forward"]["cpu_ns"]


def test_naive_backward_is_the_largest_phase_then_the_forward() -> None:
    """'In this CPU capture the backward is the largest phase, and the forward the next. The
    optimizer step is a smaller but visible share'; 'The data and to_device rows are small'."""
    phases = _phases(NAIVE)
    ranked = sorted(phases, key=lambda p: phases[p]["cpu_ns"] or 0, reverse=True)
    assert ranked[:3] == ["backward", "forward", "optimizer"]
    assert phases["optimizer"]["step_pct"] >= 5
    assert phases["data"]["step_pct"] < 5 and phases["to_device"]["step_pct"] < 1


@pytest.mark.parametrize("variant", [NAIVE, TUNED, COMPILED])
def test_backward_gemm_flops_are_twice_the_forward(variant: str) -> None:
    """'The forward runs N GEMMs per step, the backward M, and the backward's floating-point work
    is X times the forward's ... here exactly'."""
    b = _values(variant, "train_backward")
    assert b["backward_gemms_per_step"] == 2 * b["forward_gemms_per_step"]
    assert b["backward_gemm_flops_per_step"] == 2 * b["forward_gemm_flops_per_step"]
    assert b["backward_over_forward_flops"] == 2.0
    rows = (
        {r["phase"]: r for r in table(STEP, variant, "train_gemm")} if variant != COMPILED else {}
    )
    if rows:
        assert set(rows) == {"forward", "backward"}


def test_twice_the_work_but_not_twice_the_time() -> None:
    """'The backward takes X times the forward's CPU time ... Its GEMMs alone take Y times the
    forward's GEMM time ..., close to the work's factor of two. The rest of the backward grows
    less: it runs Z times the forward's operators ...'; 'the GEMMs are about a third of each
    phase's time, so the phase's ratio lies between the GEMMs' and the other operators'."""
    b = _values(NAIVE, "train_backward")
    phases = _phases(NAIVE)
    assert b["forward_cpu_ns"] == phases["forward"]["cpu_ns"]
    assert b["backward_cpu_ns"] == phases["backward"]["cpu_ns"]
    assert b["forward_ops_per_step"] == phases["forward"]["cpu_ops"]
    assert b["backward_ops_per_step"] == phases["backward"]["cpu_ops"]
    time = b["backward_cpu_ns"] / b["forward_cpu_ns"]
    gemm = b["backward_gemm_cpu_ns"] / b["forward_gemm_cpu_ns"]
    rest = (b["backward_cpu_ns"] - b["backward_gemm_cpu_ns"]) / (
        b["forward_cpu_ns"] - b["forward_gemm_cpu_ns"]
    )
    ops = b["backward_ops_per_step"] / b["forward_ops_per_step"]
    assert b["backward_over_forward_time"] == pytest.approx(time, abs=0.005)
    assert b["backward_over_forward_gemm_time"] == pytest.approx(gemm, abs=0.005)
    assert b["backward_over_forward_ops"] == pytest.approx(ops, abs=0.005)
    assert time < 2 and 1.6 <= gemm <= 2.2, (time, gemm)
    assert rest < gemm and ops < gemm, (rest, ops, gemm)
    assert rest <= time <= gemm
    for phase in ("forward", "backward"):
        share = b[f"{phase}_gemm_cpu_ns"] / b[f"{phase}_cpu_ns"]
        assert 0.25 <= share <= 0.45, (phase, share)


def test_operators_leave_out_the_autograd_engines_rows() -> None:
    """'It leaves out the autograd engine's own rows: ... evaluate_function: <Node> and the node's
    row under it ..., two per node'."""
    b = _values(NAIVE, "train_backward")
    (r,) = _trace_rows(
        NAIVE,
        "SELECT SUM(NOT o.is_operator) AS rows, SUM(o.is_operator) AS ops, "
        "SUM(o.is_operator AND o.name GLOB '*Backward*') AS node_named_ops "
        "FROM guide_train_phase_op AS o JOIN guide_train_phase AS p ON p.id = o.phase_id "
        "WHERE p.phase = 'backward'",
    )
    steps = _steps(NAIVE)
    assert r["rows"] == 2 * b["autograd_nodes_per_step"] * steps
    assert r["ops"] == b["backward_ops_per_step"] * steps
    assert r["node_named_ops"] == 0


def test_tuned_is_slower_than_naive_on_this_cpu() -> None:
    """'on this CPU it is not faster: its step takes X against the naive loop's Y. The fused
    optimizer saves time, but bf16 autocast costs more than it saves ..., and the workers' batches
    take longer to arrive'."""
    naive, tuned = _values(NAIVE, "train_casts"), _values(TUNED, "train_casts")
    assert tuned["step_cpu_ns"] > naive["step_cpu_ns"]
    n, t = _phases(NAIVE), _phases(TUNED)
    assert t["optimizer"]["cpu_ns"] < n["optimizer"]["cpu_ns"]
    for phase in ("data", "forward", "backward"):
        assert t[phase]["cpu_ns"] > n[phase]["cpu_ns"], phase
    phase_sum = sum(p["cpu_ns"] for p in n.values())
    assert phase_sum == pytest.approx(naive["step_cpu_ns"], rel=0.01)


def test_one_accumulate_grad_per_parameter_tensor() -> None:
    """'N nodes per step here, among them M torch::autograd::AccumulateGrad, one per parameter
    tensor'."""
    b = _values(NAIVE, "train_backward")
    assert b["accumulate_grad_per_step"] == _settings(NAIVE)["model"]["parameter_tensors"]
    assert b["autograd_nodes_per_step"] > b["accumulate_grad_per_step"]


def test_on_a_cpu_the_backward_runs_on_the_calling_thread() -> None:
    """'On a CPU the engine runs the backward on the calling thread: every node of this capture is
    on the step's own thread (1 thread in all)'."""
    b = _values(NAIVE, "train_backward")
    assert b["backward_on_own_thread"] == 0 and b["backward_threads"] == 1
    assert b["fwdbwd_links_across_threads"] == 0


def test_fwdbwd_links_and_the_mm_pair() -> None:
    """'a fwdbwd flow from each forward operator to the backward node ... N per step'; 'Select an
    aten::mm in the forward and follow its arrow: it lands on the MmBackward0'."""
    b = _values(NAIVE, "train_backward")
    rows = table(STEP, NAIVE, "train_fwdbwd")
    assert 0 < len(rows) <= 10
    assert b["fwdbwd_links_per_step"] >= sum(float(r["links_per_step"]) for r in rows)
    pairs = {(r["forward_name"], r["backward_name"]) for r in rows}
    assert ("aten::mm", "MmBackward0") in pairs
    mm = next(r for r in rows if r["forward_name"] == "aten::mm")
    assert float(mm["links_per_step"]) == b["forward_gemms_per_step"]


# ---- page 2: optimizer, zero_grad, data, readback -----------------------------------------------
def test_single_tensor_adamw_is_ten_operators_per_parameter() -> None:
    """'With N parameter tensors that is ten operators per tensor', and 'no _single_tensor_adamw in
    the trace'."""
    o = _values(NAIVE, "train_optimizer")
    assert o["optimizer"] == "AdamW.step"
    assert o["optimizer_top_ops"] == 10 * o["gradients_per_step"]
    names = {r["name"] for r in table(STEP, NAIVE, "train_optimizer_ops")}
    assert {"aten::mul_", "aten::lerp_", "aten::addcmul_", "aten::sqrt", "aten::addcdiv_"} <= names
    assert not any("single_tensor" in n for n in names)


def test_foreach_calls_each_update_once_and_costs_the_same_order_on_a_cpu() -> None:
    """'aten::_foreach_mul_, aten::_foreach_lerp_, aten::_foreach_sqrt ...'; 'its optimizer step
    costs the same order of CPU time as the single-tensor one'."""
    names = {r["name"] for r in table(STEP, FOREACH, "train_optimizer_ops")}
    assert {"aten::_foreach_mul_", "aten::_foreach_lerp_", "aten::_foreach_sqrt"} <= names
    single, foreach = _values(NAIVE, "train_optimizer"), _values(FOREACH, "train_optimizer")
    assert foreach["optimizer_top_ops"] < single["optimizer_top_ops"]
    ratio = foreach["optimizer_cpu_ns"] / single["optimizer_cpu_ns"]
    assert 0.5 <= ratio <= 1.5, ratio


def test_fused_is_one_operator_plus_the_step_counters_and_the_cheapest() -> None:
    """'the whole update in one operator, aten::_fused_adamw_ (plus one aten::_foreach_add_ that
    advances the step counters) ... the cheapest of the three here'."""
    rows = table(STEP, TUNED, "train_optimizer_ops")
    assert sorted(r["name"] for r in rows) == ["aten::_foreach_add_", "aten::_fused_adamw_"]
    assert all(float(r["calls_per_step"]) == 1 for r in rows)
    cost = {v: _values(v, "train_optimizer")["optimizer_cpu_ns"] for v in (NAIVE, FOREACH, TUNED)}
    assert cost[TUNED] < min(cost[NAIVE], cost[FOREACH]), cost


def test_item_calls_read_the_step_counters() -> None:
    """'aten::item calls: one per parameter in the single-tensor loop, two per parameter in the
    foreach one'; 'The fused optimizer reads no counter'."""
    for variant, per_tensor in ((NAIVE, 1), (FOREACH, 2)):
        rows = {r["name"]: r for r in table(STEP, variant, "train_optimizer_ops")}
        n = _values(variant, "train_optimizer")["gradients_per_step"]
        assert float(rows["aten::item"]["calls_per_step"]) == per_tensor * n, variant
    assert not any(r["name"] == "aten::item" for r in table(STEP, TUNED, "train_optimizer_ops"))


def test_data_iterator_classes() -> None:
    """'the iterator is _SingleProcessDataLoaderIter.__next__ without workers (the naive loop) and
    _MultiProcessingDataLoaderIter.__next__ with them'."""
    assert _settings(NAIVE)["workers"] == 0 and _settings(TUNED)["workers"] > 0
    assert _values(NAIVE, "train_data")["iterator"] == "_SingleProcessDataLoaderIter.__next__"
    assert _values(TUNED, "train_data")["iterator"] == "_MultiProcessingDataLoaderIter.__next__"


def test_tuned_data_row_averages_two_kinds_of_call() -> None:
    """'In the first profiled step the label took X and ran 0 operators ... In the later steps it
    took Y on average, with 4 operators each: that average of the two is the fraction in the
    Operators per step column'; 'an aten::empty and an aten::set_ under the label for each of
    the batch's two tensors'; building a batch takes the main process far less than a step."""
    d = _values(TUNED, "train_data")
    assert d["first_data_ops"] == 0
    assert d["later_data_min_ops"] == d["later_data_max_ops"] == 4
    assert d["first_data_cpu_ns"] < 0.1 * d["later_data_cpu_ns"]
    steps = _steps(TUNED)
    average = (d["first_data_ops"] + (steps - 1) * d["later_data_max_ops"]) / steps
    row = _phases(TUNED)["data"]["cpu_ops"]
    assert row == pytest.approx(average) and not float(row).is_integer()
    names = _trace_rows(
        TUNED,
        "SELECT o.name, COUNT(*) AS n FROM guide_train_phase_op AS o "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id WHERE p.phase = 'data' "
        "GROUP BY o.name ORDER BY o.name",
    )
    assert [(r["name"], r["n"]) for r in names] == [
        ("aten::empty", 2 * (steps - 1)),
        ("aten::set_", 2 * (steps - 1)),
    ]
    naive = _values(NAIVE, "train_data")
    assert naive["later_data_cpu_ns"] < 0.05 * _values(NAIVE, "train_casts")["step_cpu_ns"]
    assert d["later_data_cpu_ns"] > naive["later_data_cpu_ns"]


def test_zero_grad_per_implementation() -> None:
    """'one aten::zero_ per gradient with a single-tensor optimizer, and one aten::_foreach_zero_
    ... with a foreach one'; 'With set_to_none=True the label is still there, with no operator'."""
    naive, foreach, tuned = (_values(v, "train_optimizer") for v in (NAIVE, FOREACH, TUNED))
    assert naive["zero_grad_zero_calls"] == naive["gradients_per_step"]
    assert naive["zero_grad_foreach_calls"] == 0
    assert (foreach["zero_grad_zero_calls"], foreach["zero_grad_foreach_calls"]) == (0, 1)
    assert tuned["zero_grad_cpu_ops"] == 0 and tuned["zero_grad_cpu_ns"] is not None


@needs_cuda(STEP, NAIVE, FOREACH, TUNED)
def test_set_to_none_removes_the_zeroing_gpu_work() -> None:
    """'On a GPU each zeroing is GPU work too, kernels or memsets ...; set_to_none=True removes them
    all'; foreach and fused launch multi_tensor_apply kernels."""
    naive = _values(NAIVE, "train_optimizer", cpu_ok=False)
    tuned = _values(TUNED, "train_optimizer", cpu_ok=False)
    assert naive["zero_grad_kernels"] + naive["zero_grad_memsets"] >= naive["gradients_per_step"]
    assert tuned["zero_grad_kernels"] == 0 and tuned["zero_grad_memsets"] == 0
    foreach = _values(FOREACH, "train_optimizer", cpu_ok=False)
    assert foreach["optimizer_multi_tensor_kernels"] > 0
    assert foreach["optimizer_kernels"] < naive["optimizer_kernels"]


def test_workers_make_the_toy_batches_slower_to_arrive() -> None:
    """'This toy dataset builds a batch in a fraction of a millisecond ... with two workers the loop
    waits longer for a batch than it took to build one in the main process'."""
    naive, tuned = _phases(NAIVE)["data"], _phases(TUNED)["data"]
    assert naive["cpu_ns"] < 1e6
    assert tuned["cpu_ns"] > naive["cpu_ns"]


def test_to_device_on_a_cpu_holds_only_the_call() -> None:
    """'On a CPU there is no copy: .to("cpu") returns the tensor itself, and the to_device rows
    above hold only that call'."""
    for variant in (NAIVE, TUNED):
        assert _phases(variant)["to_device"]["cpu_ops"] == 2  # inputs and targets


@needs_cuda(STEP, NAIVE, TUNED)
def test_pageable_copies_naive_pinned_copies_tuned() -> None:
    """'Memcpy HtoD (Pageable -> Device)' in the naive loop, '(Pinned -> Device)' in the tuned
    one."""
    naive = {
        r["name"] for r in table(STEP, NAIVE, "train_copies", cpu_ok=False) if "HtoD" in r["name"]
    }
    tuned = {
        r["name"] for r in table(STEP, TUNED, "train_copies", cpu_ok=False) if "HtoD" in r["name"]
    }
    assert any("Pageable" in n for n in naive)
    assert any("Pinned" in n for n in tuned) and not any("Pageable" in n for n in tuned)


def test_loss_read_every_naive_step_and_in_no_tuned_step() -> None:
    """'reads per step' 1 in the naive loop; the tuned loop reads every ten steps, 'so none of its
    profiled steps reads it'."""
    assert _values(NAIVE, "train_readback")["reads_per_step"] == 1
    assert (
        _values(NAIVE, "train_readback")["item_calls"]
        == capture_record(STEP, NAIVE)["schedule"]["active"]
    )
    assert _values(TUNED, "train_readback")["reads_per_step"] == 0


@needs_cuda(STEP, NAIVE, TUNED)
def test_reading_the_loss_leaves_the_gpu_idle() -> None:
    """'once the wait ends the GPU has nothing queued: it idles until the CPU has launched the next
    step's first kernels'."""
    naive = _values(NAIVE, "train_readback", cpu_ok=False)
    tuned = _values(TUNED, "train_readback", cpu_ok=False)
    assert naive["read_wait_ns"] > 0 and naive["gpu_idle_after_read_ns"] > 0
    assert tuned["gpu_busy_pct"] > naive["gpu_busy_pct"]


# ---- page 3: memory and precision ---------------------------------------------------------------
@pytest.mark.parametrize("variant", [MEMORY, MEMORY_FP32])
def test_adamw_state_is_eight_bytes_per_parameter_and_stays(variant: str) -> None:
    """'two tensors the size of each parameter ... plus a step counter per parameter ... eight bytes
    per parameter'; 'the second optimizer step keeps nothing new'."""
    m = _values(variant, "train_memory")
    model = _settings(variant)["model"]
    state = m["first_optimizer_kept_bytes"]
    assert (
        8 * model["parameters"] <= state <= 8 * model["parameters"] + 8 * model["parameter_tensors"]
    )
    assert m["second_optimizer_kept_bytes"] == 0
    assert m["second_start_bytes"] >= state


@pytest.mark.parametrize("variant", [MEMORY, MEMORY_FP32])
def test_second_peak_higher_by_about_the_state(variant: str) -> None:
    """'the second step's peak is higher than the first's by about the size of the state'; the
    peak falls in a backward."""
    m = _values(variant, "train_memory")
    state = m["first_optimizer_kept_bytes"]
    assert m["second_peak_bytes"] - m["first_peak_bytes"] == pytest.approx(state, rel=0.1)
    assert m["first_peak_phase"] == "backward" and m["second_peak_phase"] == "backward"


def test_forward_builds_up_and_backward_frees() -> None:
    """'the curve climbs through the forward and falls through the backward'."""
    m = _values(MEMORY, "train_memory")
    assert m["forward_kept_bytes"] > 0
    assert m["after_backward_bytes"] < m["first_peak_bytes"]
    rows = table(STEP, MEMORY, "train_memory_timeline")
    first = min(int(r["step"]) for r in rows)
    fwd = [
        int(r["allocated_bytes"])
        for r in rows
        if int(r["step"]) == first and r["phase"] == "forward"
    ]
    bwd = [
        int(r["allocated_bytes"])
        for r in rows
        if int(r["step"]) == first and r["phase"] == "backward"
    ]
    assert fwd[-1] > fwd[0] and bwd[-1] < max(bwd)


def test_cpu_running_total_starts_near_zero() -> None:
    """'On a CPU the running total counts only what was allocated since the profiler started ...
    so the curve starts near zero'."""
    m = _values(MEMORY, "train_memory")
    if m["device"] == "CPU":
        assert m["first_start_bytes"] < 0.01 * m["first_peak_bytes"]


def test_autocast_lowers_activations_and_peak_by_far_less_than_half() -> None:
    """'Autocast lowers the saved activations and the peak, but by far less than half ... the state
    is the same in both columns'."""
    bf16, fp32 = _values(MEMORY, "train_memory"), _values(MEMORY_FP32, "train_memory")
    for key in ("forward_kept_bytes", "second_peak_bytes"):
        assert 0.5 * fp32[key] < bf16[key] < fp32[key], key
    assert bf16["first_optimizer_kept_bytes"] == fp32["first_optimizer_kept_bytes"]


def test_memory_series_leaves_out_the_shared_memory_counter() -> None:
    """'those blocks report their own allocations and frees, with a Total Allocated of 0 ... The SQL
    keeps an event only when it continues the running total ..., which leaves out those N events';
    'AdamW creating its state ... never coming back' (cheatsheet)."""
    m = _values(MEMORY, "train_memory")
    assert m["other_counter_events"] > 0
    dropped = _trace_rows(
        MEMORY,
        "SELECT extract_arg(s.arg_set_id, 'args.Total Allocated') AS total FROM slice AS s "
        "WHERE s.name = '[memory]' AND s.ts NOT IN (SELECT ts FROM guide_train_memory)",
    )
    assert len(dropped) == m["other_counter_events"]
    assert {r["total"] for r in dropped} == {0}
    rows = table(STEP, MEMORY, "train_memory_timeline")
    first = min(int(r["step"]) for r in rows)
    later = [int(r["allocated_bytes"]) for r in rows if int(r["step"]) > first]
    assert min(later) >= m["first_optimizer_kept_bytes"]


def test_autocast_gemms_are_bf16_forward_and_backward() -> None:
    """'Under autocast every GEMM of the step, forward and backward, takes bf16 inputs'."""
    assert {r["dtype"] for r in table(STEP, NAIVE, "train_gemm")} == {"fp32"}
    assert {r["dtype"] for r in table(STEP, TUNED, "train_gemm")} == {"bf16"}
    assert {r["phase"] for r in table(STEP, TUNED, "train_gemm")} == {"forward", "backward"}


def test_what_autocast_keeps_in_fp32_and_what_it_runs_in_bf16() -> None:
    """'the RMSNorms compute in fp32 too, because LlamaRMSNorm converts its input to fp32'; 'under
    CPU autocast scaled_dot_product_attention runs in bf16'."""
    rows = _trace_rows(
        TUNED,
        "SELECT o.name, extract_arg(s.arg_set_id, 'args.Input type[0]') AS dtype "
        "FROM guide_train_phase_op AS o JOIN slice AS s ON s.id = o.id "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id WHERE p.phase = 'forward' "
        "AND o.name IN ('aten::_scaled_dot_product_flash_attention_for_cpu', 'aten::rsqrt') "
        "GROUP BY 1, 2 ORDER BY 1",
    )
    assert [(r["name"], r["dtype"]) for r in rows] == [
        ("aten::_scaled_dot_product_flash_attention_for_cpu", "c10::BFloat16"),
        ("aten::rsqrt", "float"),
    ]


def test_the_tuned_forwards_casts_by_kind() -> None:
    """'weights to bf16 ..., one per linear layer'; activations, upcasts and numbers add up to the
    forward's casts; 'the backward casts no weight again (0 casts ...)'."""
    c = _values(TUNED, "train_casts")
    assert c["forward_weight_casts"] == _values(TUNED, "train_backward")["forward_gemms_per_step"]
    kinds = ("weight", "activation", "number")
    assert all(c[f"forward_{k}_casts"] > 0 for k in kinds) and c["forward_upcasts"] > 0
    assert sum(c[f"forward_{k}_casts"] for k in kinds) + c["forward_upcasts"] == c["forward_casts"]
    assert c["backward_weight_casts"] == 0
    # 'each linear layer that reads [the fp32 residual stream] casts its input ...: the query, key
    # and value projections read the same input and each cast it again'; 'The attention's query
    # and key are cast too'. Per decoder layer: q, k, v, gate and up read fp32 inputs (o_proj and
    # down_proj read bf16 results); the LM head reads the final norm's fp32 output.
    rows = _trace_rows(
        TUNED,
        "SELECT up.name AS caller, COUNT(*) AS n FROM guide_train_phase_op AS o "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id JOIN slice AS s ON s.id = o.id "
        "JOIN slice AS mid ON mid.id = s.parent_id JOIN slice AS up ON up.id = mid.parent_id "
        "JOIN guide_shapes_input AS i ON i.slice_id = o.id AND i.input_index = 0 "
        "WHERE p.phase = 'forward' AND o.name = 'aten::_to_copy' AND i.ndim >= 3 "
        "AND i.dtype = 'float' GROUP BY up.name ORDER BY up.name",
    )
    layers, steps = _settings(TUNED)["model"]["num_hidden_layers"], _steps(TUNED)
    assert [(r["caller"], r["n"]) for r in rows] == [
        ("aten::linear", (5 * layers + 1) * steps),
        ("aten::scaled_dot_product_attention", 2 * layers * steps),
    ]
    assert (5 * layers + 1) + 2 * layers == c["forward_activation_casts"]


def test_on_this_cpu_the_casts_cost_about_what_the_gemms_save() -> None:
    """'The bf16 GEMMs take X per step against the fp32 ones' Y, but the casts cost Z, about what
    the GEMMs save, and the forward and backward run more operators in all'."""
    naive, tuned = _values(NAIVE, "train_casts"), _values(TUNED, "train_casts")
    saved = naive["gemm_cpu_ns"] - tuned["gemm_cpu_ns"]
    assert saved > 0
    assert 0.75 <= tuned["cast_cpu_ns"] / saved <= 1.33, (tuned["cast_cpu_ns"], saved)
    for phase in ("forward", "backward"):
        assert _phases(TUNED)[phase]["cpu_ops"] > _phases(NAIVE)[phase]["cpu_ops"], phase


def test_autocast_adds_several_times_the_casts() -> None:
    """'The fp32 model has casts too ... (double or long int) ... Autocast adds several times as
    many'."""
    naive, tuned = _values(NAIVE, "train_casts"), _values(TUNED, "train_casts")
    assert naive["forward_casts"] > 0
    assert tuned["forward_casts"] >= 3 * naive["forward_casts"]
    assert tuned["backward_casts"] >= 3 * naive["backward_casts"]


# ---- page 4: torch.compile ----------------------------------------------------------------------
def test_compiled_step_is_one_region_one_forward_and_one_backward_graph() -> None:
    """'one Torch-Compiled Region per step, and inside it one CompiledFunction'; 'one node,
    CompiledFunctionBackward'; 'the few nodes left ... the loss ... and the AccumulateGrad of each
    parameter'."""
    c = _values(COMPILED, "train_compiled")
    assert (c["compiled_regions"], c["forward_graphs"], c["backward_graphs"]) == (1, 1, 1)
    assert c["inductor_kernels"] > 0 and c["inductor_kernel_names"] > 0
    b = _values(COMPILED, "train_backward")
    eager = _values(TUNED, "train_backward")
    assert (
        b["accumulate_grad_per_step"]
        < b["autograd_nodes_per_step"]
        <= (b["accumulate_grad_per_step"] + 5)
    )
    assert b["autograd_nodes_per_step"] < eager["autograd_nodes_per_step"] / 4
    # 'with the GEMMs left to the library: aten::mm under the graph call ..., as many as in the
    # eager step'.
    for key in ("forward_gemms_per_step", "backward_gemms_per_step"):
        assert b[key] == eager[key], key


def test_traced_compiled_steps_hold_no_compiler_work() -> None:
    """'the traced steps hold 0 of them' (dynamo_timed rows); 'AOTDispatcher Runtime Wrapper
    Prologue, 1 per step'; Inductor kernels named graph_<n>_cpp_fused_* here, the longest quoted."""
    c = _values(COMPILED, "train_compiled")
    assert c["compiler_rows"] == 0 and c["runtime_wrappers"] == 1
    (r,) = _trace_rows(
        COMPILED,
        "SELECT COUNT(*) AS n, SUM(name GLOB 'graph_[0-9]*_cpp_fused_*') AS named "
        "FROM slice WHERE name GLOB '*cpp_fused*'",
    )
    assert r["n"] == c["inductor_kernels"] * _steps(COMPILED) and r["named"] == r["n"]
    assert str(c["longest_inductor_kernel"]).startswith("graph_0_cpp_fused_")


def test_compiled_runs_far_fewer_operators_per_phase() -> None:
    """'far fewer operators per phase than in the tuned eager loop's phase table'; 'The optimizer
    step is not compiled'."""
    compiled, eager = _phases(COMPILED), _phases(TUNED)
    for phase in ("forward", "backward"):
        assert compiled[phase]["cpu_ops"] < eager[phase]["cpu_ops"] / 2, phase
    assert compiled["optimizer"]["cpu_ops"] == eager["optimizer"]["cpu_ops"]
