"""Every claim the Part 5 pages (docs/part-5/) make about their traces, checked on the artifacts.

The pages read the CUDA capture (one NVIDIA H200) and show the CPU capture where a CPU behaves
differently, pinned with ``device="cpu"``: claims about the CPU capture read ``artifacts/cpu``
explicitly, whichever set the rest of the page shows. Claims about GPU-only concepts are skipped
until a CUDA capture exists; tests/test_train_sql.py also runs part of the SQL behind them (the
engine's thread, cross-thread `fwdbwd` links, optimizer kernels, copies) on a real GPU training
trace from another project.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.claims import ARTIFACTS, capture_record, needs_cuda, shown_device, table, values
from tests.open_traces import shared_trace
from tests.sql_rows import rows as sql_rows

# Tests that read the same traces run in one worker process when `make test TEST_WORKERS=N` shares
# the suite out, so that each trace is imported once (tests/open_traces.py).
pytestmark = pytest.mark.xdist_group("train-traces")

STEP = "train"
NAIVE, FOREACH, TUNED, COMPILED = "naive", "foreach", "tuned", "compiled"
MEMORY, MEMORY_FP32 = "memory", "memory_fp32"
ALL = (NAIVE, FOREACH, TUNED, COMPILED, MEMORY, MEMORY_FP32)
INCLUDE = "INCLUDE PERFETTO MODULE guide.train;\nINCLUDE PERFETTO MODULE guide.shapes;\n"
GPU = needs_cuda(STEP, *ALL)


# ---- reading the artifacts ----------------------------------------------------------------------
def _values(variant: str, query: str, *, cpu_ok: bool = True) -> dict[str, object]:
    """What a page's default placeholder shows (the CUDA capture when there is one)."""
    return values(STEP, variant, cpu_ok=cpu_ok)[query]


def _gpu(variant: str, query: str) -> dict[str, object]:
    """What a `cpu=False` placeholder shows."""
    return _values(variant, query, cpu_ok=False)


def _cpu_dir(variant: str) -> Path:
    return ARTIFACTS / "cpu" / STEP / variant


def _cpu_values(variant: str, query: str) -> dict[str, object]:
    """What a page's `device="cpu"` placeholder shows, whichever set the rest of the page shows."""
    return json.loads((_cpu_dir(variant) / "values.json").read_text())[query]


def _cpu_table(variant: str, query: str) -> list[dict[str, str]]:
    with (_cpu_dir(variant) / f"{query}.csv").open(newline="") as fh:
        return list(csv.DictReader(fh))


def _settings(variant: str) -> dict:
    return capture_record(STEP, variant)["settings"]


def _cpu_record(variant: str) -> dict:
    return json.loads((_cpu_dir(variant) / "capture.json").read_text())


def _layers(variant: str = NAIVE) -> int:
    return _settings(variant)["model"]["num_hidden_layers"]


def _number(text: str) -> float | None:
    """A CSV cell as a number; an empty cell is SQL NULL (shown as "–")."""
    return None if text == "" else float(text)


def _by_phase(rows: list[dict[str, str]]) -> dict[str, dict[str, float | None]]:
    return {r["phase"]: {k: _number(v) for k, v in r.items() if k != "phase"} for r in rows}


def _phases(variant: str) -> dict[str, dict[str, float | None]]:
    return _by_phase(table(STEP, variant, "train_phases"))


def _cpu_phases(variant: str) -> dict[str, dict[str, float | None]]:
    return _by_phase(_cpu_table(variant, "train_phases"))


def _steps(variant: str, device: str | None = None) -> int:
    record = _cpu_record(variant) if device == "cpu" else capture_record(STEP, variant)
    return record["schedule"]["active"]


# ---- asking the traces --------------------------------------------------------------------------
def _trace_rows(variant: str, sql: str, *, device: str | None = None) -> list[dict[str, object]]:
    """Rows of ``sql`` (with the Part 5 modules) on the variant's committed trace: the set the
    page shows, or ``device``'s. Each trace is imported once per test run (tests/open_traces.py)."""
    device = device or shown_device(STEP, variant)
    assert device, f"no capture of {STEP}/{variant}"
    with shared_trace(ARTIFACTS / device / STEP / variant / "trace.json.gz") as tp:
        return sql_rows(tp, INCLUDE + sql)


# ---- the variants are what the pages say they are -----------------------------------------------
def test_variants_differ_as_the_table_says() -> None:
    """'naive: fp32, no workers, ..., single-tensor AdamW, zero_grad(set_to_none=False), loss.item()
    every step'; 'tuned: bf16 autocast, two workers, pinned memory with non_blocking=True copies
    (on a GPU), fused AdamW, set_to_none=True, every ten'."""
    naive, tuned = _settings(NAIVE), _settings(TUNED)
    assert (naive["dtype"], naive["workers"], naive["optimizer"]) == ("fp32", 0, "single")
    assert (naive["set_to_none"], naive["item_every"]) == (False, 1)
    assert (tuned["dtype"], tuned["workers"], tuned["optimizer"]) == ("bf16", 2, "fused")
    assert (tuned["set_to_none"], tuned["item_every"]) == (True, 10)
    assert not naive["pin_memory"] and not naive["non_blocking"]
    if shown_device(STEP, TUNED) == "cuda":
        assert tuned["pin_memory"] and tuned["non_blocking"]
    cpu_tuned = _cpu_record(TUNED)["settings"]
    assert not cpu_tuned["pin_memory"] and not cpu_tuned["non_blocking"]
    assert _settings(FOREACH)["optimizer"] == "foreach"
    assert _settings(COMPILED)["compile"] is True
    assert _settings(MEMORY)["profile_memory"] and _settings(MEMORY)["dtype"] == "bf16"
    assert _settings(MEMORY_FP32)["profile_memory"] and _settings(MEMORY_FP32)["dtype"] == "fp32"
    for variant in (MEMORY, MEMORY_FP32):  # 'from the very first step (wait=0, warmup=0)'
        schedule = capture_record(STEP, variant)["schedule"]
        assert (schedule["wait"], schedule["warmup"]) == (0, 0)


@GPU
def test_the_pages_read_an_h200_capture_of_a_few_hundred_million_parameters() -> None:
    """'The pages read a capture on one NVIDIA H200, where the model has a few hundred million
    parameters ... The CPU captures use a toy shape of the same architecture'."""
    for variant in ALL:
        record = capture_record(STEP, variant, cpu_ok=False)
        assert record["environment"]["gpu"] == "NVIDIA H200", variant
    gpu, cpu = _settings(NAIVE)["model"], _cpu_record(NAIVE)["settings"]["model"]
    assert 1e8 <= gpu["parameters"] < 1e9
    assert cpu["parameters"] < gpu["parameters"] / 100
    assert set(cpu) == set(gpu)


# ---- page 1: the phases -------------------------------------------------------------------------
@pytest.mark.parametrize("variant", [NAIVE, TUNED, COMPILED])
@pytest.mark.parametrize("device", ["shown", "cpu"])
def test_every_phase_once_per_step_and_shares_add_up(variant: str, device: str) -> None:
    """'Each row is one phase, averaged over the profiled steps ... the last row is the step's time
    outside every phase'."""
    phases = _cpu_phases(variant) if device == "cpu" else _phases(variant)
    expected = ["data", "to_device", "forward", "backward", "optimizer", "zero_grad"]
    if _settings(variant)["item_every"] == 1:
        expected.append("log_loss")
    assert list(phases) == [*expected, "rest of the step"]
    assert all(phases[p]["calls_per_step"] == 1 for p in expected)
    assert sum(p["step_pct"] for p in phases.values()) == pytest.approx(100, abs=0.5)
    assert 0 <= phases["rest of the step"]["cpu_ns"] < phases["forward"]["cpu_ns"]


@GPU
def test_naive_gpu_time_and_cpu_time_rank_the_phases_differently() -> None:
    """'the GPU time column says where that time goes: the backward's work is the largest part,
    the forward's the next, the optimizer's a small share. The CPU time column ranks the phases
    differently: the backward, then the optimizer, then the forward'; 'its CPU time is several
    times the GPU time of those kernels'; 'The data and to_device rows are each under one
    percent of the step'."""
    phases = _phases(NAIVE)
    by_gpu = sorted(phases, key=lambda p: phases[p]["gpu_ns"] or 0, reverse=True)
    by_cpu = sorted(phases, key=lambda p: phases[p]["cpu_ns"] or 0, reverse=True)
    assert by_gpu[:3] == ["backward", "forward", "optimizer"]
    assert phases["optimizer"]["gpu_pct"] < 10
    assert by_cpu[:3] == ["backward", "optimizer", "forward"]
    assert phases["optimizer"]["cpu_ns"] > 4 * phases["optimizer"]["gpu_ns"]
    assert phases["data"]["step_pct"] < 1 and phases["to_device"]["step_pct"] < 1
    assert _gpu(NAIVE, "train_readback")["gpu_busy_pct"] > 90


@GPU
def test_the_cpu_runs_ahead_of_the_gpu_in_the_naive_loop() -> None:
    """'in every profiled step the forward's and the backward's GPU work ends after their labels
    have ended on the CPU'."""
    rows = _trace_rows(
        NAIVE,
        "SELECT p.step, p.phase, p.ts + p.dur AS cpu_end, MAX(g.ts + g.dur) AS gpu_end "
        "FROM guide_train_phase AS p JOIN guide_train_phase_gpu AS g ON g.phase_id = p.id "
        "WHERE p.phase IN ('forward', 'backward') GROUP BY p.id",
    )
    assert len(rows) == 2 * _steps(NAIVE)
    assert all(r["gpu_end"] > r["cpu_end"] for r in rows), rows


def test_in_the_cpu_capture_the_backward_then_the_forward_and_to_device_is_the_call() -> None:
    """'In the CPU capture there is no GPU column, and the CPU time is the work itself: the
    backward is the largest phase, then the forward, then the optimizer. Its to_device row ...
    holds only those calls' (and page 2: 'the CPU capture's to_device rows hold only that
    call')."""
    phases = _cpu_phases(NAIVE)
    assert all(p["gpu_ns"] is None for p in phases.values())
    ranked = sorted(phases, key=lambda p: phases[p]["cpu_ns"] or 0, reverse=True)
    assert ranked[:3] == ["backward", "forward", "optimizer"]
    for variant in (NAIVE, TUNED):
        assert _cpu_phases(variant)["to_device"]["cpu_ops"] == 2  # inputs and targets


@GPU
def test_tuned_is_faster_on_the_h200_and_paced_by_the_cpu() -> None:
    """'On the H200 it is faster: its step takes X against the naive loop's Y. Its GPU work shrank
    far more than that: the forward's GPU time falls from A to B, the backward's from C to D';
    'the GPU is busy P of the tuned steps, and the forward's and the backward's CPU time are each
    longer than the GPU time of the work they launch. The forward's CPU time even grew'."""
    naive, tuned = _values(NAIVE, "train_casts"), _values(TUNED, "train_casts")
    step_ratio = tuned["step_cpu_ns"] / naive["step_cpu_ns"]
    assert step_ratio < 1
    nb, tb = _gpu(NAIVE, "train_backward"), _gpu(TUNED, "train_backward")
    n, t = _phases(NAIVE), _phases(TUNED)
    for phase in ("forward", "backward"):
        assert nb[f"{phase}_gpu_ns"] == n[phase]["gpu_ns"], phase
        assert tb[f"{phase}_gpu_ns"] == t[phase]["gpu_ns"], phase
        assert tb[f"{phase}_gpu_ns"] / nb[f"{phase}_gpu_ns"] < step_ratio / 2, phase
        assert t[phase]["cpu_ns"] > t[phase]["gpu_ns"], phase
    assert t["forward"]["cpu_ns"] > n["forward"]["cpu_ns"]
    assert _gpu(TUNED, "train_readback")["gpu_busy_pct"] < 50


def test_tuned_changes_the_step_less_on_a_cpu_than_on_the_h200() -> None:
    """'In the CPU capture the same tuned loop's median step takes X against the naive loop's Y
    with the profiler on, and A against B with it off: less of a change than on the H200, because
    on a CPU the bf16 GEMMs save far less ... and the workers' batches take longer to arrive'."""
    naive, tuned = _cpu_values(NAIVE, "train_casts"), _cpu_values(TUNED, "train_casts")
    if shown_device(STEP, TUNED) == "cuda":
        median = "step_median_ns"
        gpu_steps = {v: _values(v, "train_backward")[median] for v in (NAIVE, TUNED)}
        cpu_steps = {v: _cpu_values(v, "train_backward")[median] for v in (NAIVE, TUNED)}
        gpu_saving = 1 - gpu_steps[TUNED] / gpu_steps[NAIVE]
        assert 1 - cpu_steps[TUNED] / cpu_steps[NAIVE] < gpu_saving
        off = _cpu_values(TUNED, "capture")["step_median_s"]
        assert 1 - off / _cpu_values(NAIVE, "capture")["step_median_s"] < gpu_saving
        # The GEMMs' own time: GPU time on the H200, CPU time on a CPU.
        phases = ("forward_gemm_gpu_ns", "backward_gemm_gpu_ns")
        gemm = {v: sum(_values(v, "train_backward")[k] for k in phases) for v in (NAIVE, TUNED)}
        gpu_gemm_saving = 1 - gemm[TUNED] / gemm[NAIVE]
        assert 1 - tuned["gemm_cpu_ns"] / naive["gemm_cpu_ns"] < 0.75 * gpu_gemm_saving
    n, t = _cpu_phases(NAIVE), _cpu_phases(TUNED)
    assert t["data"]["cpu_ns"] > n["data"]["cpu_ns"]
    phase_sum = sum(p["cpu_ns"] for p in n.values())
    assert phase_sum == pytest.approx(naive["step_cpu_ns"], rel=0.01)


# ---- page 1: the backward -----------------------------------------------------------------------
@pytest.mark.parametrize("variant", [NAIVE, TUNED, COMPILED])
def test_backward_gemms_are_two_per_forward_gemm_but_one(variant: str) -> None:
    """'The forward runs N GEMMs per step, the backward M, and the backward's floating-point work
    is 2 times the forward's'; 'One forward GEMM has no backward, which is why the backward runs
    two fewer than twice the forward's count ... its work is too small to move the ratio'."""
    b = _values(variant, "train_backward")
    assert b["backward_gemms_per_step"] == 2 * (b["forward_gemms_per_step"] - 1)
    assert b["backward_over_forward_flops"] == 2.0
    missing = 2 * b["forward_gemm_flops_per_step"] - b["backward_gemm_flops_per_step"]
    assert 0 < missing < 1e-6 * b["forward_gemm_flops_per_step"]
    if variant != COMPILED:
        assert {r["phase"] for r in table(STEP, variant, "train_gemm")} == {"forward", "backward"}


@GPU
@pytest.mark.parametrize("variant", [NAIVE, TUNED])
def test_the_gemm_without_a_backward_is_the_rotary_embeddings(variant: str) -> None:
    """'the rotary position embedding's tiny product of its frequencies and the token positions (an
    aten::bmm the model's own code calls)'."""
    rows = _trace_rows(
        variant,
        "SELECT g.name, g.flops, g.dtype, par.name AS caller, up.name AS label "
        "FROM guide_train_gemm AS g JOIN slice AS s ON s.id = g.id "
        "JOIN slice AS par ON par.id = s.parent_id JOIN slice AS up ON up.id = par.parent_id "
        "WHERE g.phase = 'forward' AND up.name = 'forward'",
    )
    assert len(rows) == _steps(variant)
    assert {(r["name"], r["caller"], r["dtype"]) for r in rows} == {
        ("aten::bmm", "aten::matmul", "float")
    }
    forward = _values(variant, "train_backward")["forward_gemm_flops_per_step"]
    assert all(r["flops"] < 1e-6 * forward for r in rows)


@GPU
def test_the_attention_is_gemms_in_fp32_and_one_cudnn_operator_in_bf16() -> None:
    """'In this fp32 loop the attention runs as aten::_scaled_dot_product_attention_math, whose two
    products per layer are aten::bmm and are in these counts; under bf16 autocast it runs as one
    cuDNN attention operator ..., so the tuned loop counts fewer GEMMs for the same model'."""
    sql = (
        "SELECT o.name, COUNT(*) AS n FROM guide_train_phase_op AS o "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id WHERE p.phase = 'forward' "
        "AND o.name GLOB 'aten::_scaled_dot_product_*' GROUP BY 1"
    )
    layers = _layers()
    naive = {r["name"]: r["n"] for r in _trace_rows(NAIVE, sql)}
    assert naive == {"aten::_scaled_dot_product_attention_math": layers * _steps(NAIVE)}
    (r,) = _trace_rows(
        NAIVE,
        "SELECT COUNT(*) AS n FROM guide_train_gemm AS g JOIN slice AS s ON s.id = g.id "
        "JOIN slice AS par ON par.id = s.parent_id JOIN slice AS up ON up.id = par.parent_id "
        "WHERE g.phase = 'forward' AND g.name = 'aten::bmm' "
        "AND up.name = 'aten::_scaled_dot_product_attention_math'",
    )
    assert r["n"] == 2 * layers * _steps(NAIVE)
    tuned = {r["name"]: r["n"] for r in _trace_rows(TUNED, sql)}
    assert tuned == {"aten::_scaled_dot_product_cudnn_attention": layers * _steps(TUNED)}
    n, t = _values(NAIVE, "train_backward"), _values(TUNED, "train_backward")
    assert t["forward_gemms_per_step"] == n["forward_gemms_per_step"] - 2 * layers


@GPU
def test_twice_the_work_but_not_quite_twice_the_time_on_the_gpu() -> None:
    """'the backward's GEMM kernels take X times the forward's (A against B, the Kernel time
    column), close to the work's factor of two. The rest of the backward's GPU work grows less
    than its GEMMs do, so the whole backward's GPU time is Y times the forward's ...: in fp32 the
    GEMMs are most of each phase's GPU time'; 'The backward also runs Z times the forward's
    operators (the Operators per step column)'."""
    b = _gpu(NAIVE, "train_backward")
    gemm = {r["phase"]: float(r["kernel_ns"]) for r in table(STEP, NAIVE, "train_gemm")}
    assert b["forward_gemm_gpu_ns"] == gemm["forward"]
    assert b["backward_gemm_gpu_ns"] == gemm["backward"]
    gemm_ratio = b["backward_gemm_gpu_ns"] / b["forward_gemm_gpu_ns"]
    phase_ratio = b["backward_gpu_ns"] / b["forward_gpu_ns"]
    rest_ratio = (b["backward_gpu_ns"] - b["backward_gemm_gpu_ns"]) / (
        b["forward_gpu_ns"] - b["forward_gemm_gpu_ns"]
    )
    assert b["backward_over_forward_gemm_gpu_time"] == pytest.approx(gemm_ratio, abs=0.005)
    assert b["backward_over_forward_gpu_time"] == pytest.approx(phase_ratio, abs=0.005)
    assert 1.6 <= gemm_ratio < 2 and phase_ratio < 2
    assert rest_ratio < gemm_ratio and rest_ratio <= phase_ratio <= gemm_ratio
    for phase in ("forward", "backward"):
        assert b[f"{phase}_gemm_gpu_ns"] > 0.5 * b[f"{phase}_gpu_ns"], phase
    ops = b["backward_ops_per_step"] / b["forward_ops_per_step"]
    assert b["backward_over_forward_ops"] == pytest.approx(ops, abs=0.005)
    phases = _phases(NAIVE)
    assert b["forward_ops_per_step"] == phases["forward"]["cpu_ops"]
    assert b["backward_ops_per_step"] == phases["backward"]["cpu_ops"]


def test_the_cpu_capture_gives_the_same_answer() -> None:
    """'The CPU capture, where CPU time is the work itself, gives the same answer: its backward
    takes X times the forward's CPU time, and its GEMMs Y times the forward's GEMMs''."""
    b = _cpu_values(NAIVE, "train_backward")
    assert b["backward_over_forward_flops"] == 2.0
    assert b["backward_over_forward_time"] < 2
    assert 1.6 <= b["backward_over_forward_gemm_time"] <= 2.2
    phases = _cpu_phases(NAIVE)
    time = phases["backward"]["cpu_ns"] / phases["forward"]["cpu_ns"]
    assert b["backward_over_forward_time"] == pytest.approx(time, abs=0.005)


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


def test_one_accumulate_grad_per_parameter_tensor() -> None:
    """'N nodes per step here, among them M torch::autograd::AccumulateGrad, one per parameter
    tensor'."""
    b = _values(NAIVE, "train_backward")
    assert b["accumulate_grad_per_step"] == _settings(NAIVE)["model"]["parameter_tensors"]
    assert b["autograd_nodes_per_step"] > b["accumulate_grad_per_step"]


@GPU
def test_on_the_gpu_the_backward_runs_on_the_engines_thread() -> None:
    """'In this capture every node is on one thread, which the trace names pt_autograd_0, and none
    is on the step's thread'; 'The backward label on the step's thread holds a single operator,
    aten::ones_like'."""
    b = _gpu(NAIVE, "train_backward")
    assert b["backward_on_own_thread"] == 1 and b["backward_threads"] == 1
    threads = _trace_rows(
        NAIVE,
        "SELECT th.role, t.name FROM guide_train_thread AS th "
        "JOIN thread_track AS tt ON tt.id = th.track_id JOIN thread AS t USING (utid)",
    )
    autograd = [r["name"] for r in threads if r["role"] == "autograd"]
    assert len(autograd) == 1 and "pt_autograd_0" in autograd[0]
    ops = _trace_rows(
        NAIVE,
        "SELECT DISTINCT o.name FROM guide_train_phase_op AS o "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id "
        "WHERE p.phase = 'backward' AND o.thread_role = 'step' AND o.level = 1",
    )
    assert [r["name"] for r in ops] == ["aten::ones_like"]


def test_on_a_cpu_the_backward_runs_on_the_calling_thread() -> None:
    """'On a CPU the engine runs the backward on the calling thread: in the CPU capture every node
    is on the step's own thread'."""
    b = _cpu_values(NAIVE, "train_backward")
    assert b["backward_on_own_thread"] == 0 and b["backward_threads"] == 1
    assert b["fwdbwd_links_across_threads"] == 0


def test_fwdbwd_links_and_the_mm_pair() -> None:
    """'a fwdbwd flow from each forward operator to the backward node ... N per step here, every
    one of them from the step's thread to the engine's'; 'Select an aten::mm in the forward and
    follow its arrow: it lands on the MmBackward0, on the engine's thread'."""
    b = _values(NAIVE, "train_backward")
    rows = table(STEP, NAIVE, "train_fwdbwd")
    assert 0 < len(rows) <= 10
    assert b["fwdbwd_links_per_step"] >= sum(float(r["links_per_step"]) for r in rows)
    pairs = {(r["forward_name"], r["backward_name"]) for r in rows}
    assert ("aten::mm", "MmBackward0") in pairs
    if shown_device(STEP, NAIVE) == "cuda":
        assert b["fwdbwd_links_across_threads"] == b["fwdbwd_links_per_step"] * _steps(NAIVE)
        assert {r["same_thread"] for r in rows} == {"no"}
    mm = next(r for r in rows if r["forward_name"] == "aten::mm")
    (n,) = _trace_rows(
        NAIVE,
        "SELECT COUNT(*) AS mm FROM guide_train_gemm WHERE phase = 'forward' AND name = 'aten::mm'",
    )
    assert float(mm["links_per_step"]) * _steps(NAIVE) == n["mm"]


# ---- page 2: the optimizer ----------------------------------------------------------------------
def test_single_tensor_adamw_is_ten_operators_per_parameter() -> None:
    """'With N parameter tensors that is ten operators per tensor', and 'no _single_tensor_adamw in
    the trace'."""
    o = _values(NAIVE, "train_optimizer")
    assert o["optimizer"] == "AdamW.step"
    assert o["optimizer_top_ops"] == 10 * o["gradients_per_step"]
    names = {r["name"] for r in table(STEP, NAIVE, "train_optimizer_ops")}
    assert {"aten::mul_", "aten::lerp_", "aten::addcmul_", "aten::sqrt", "aten::addcdiv_"} <= names
    assert not any("single_tensor" in n for n in names)


@GPU
def test_single_tensor_launches_eight_kernels_per_tensor_and_waits_to_launch() -> None:
    """'eight of which launch a kernel each on the GPU. On the H200 its CPU time is several times
    the GPU time of its kernels ... each of its launch calls (cudaLaunchKernel) takes X on
    average, against Y in the forward'."""
    o = _gpu(NAIVE, "train_optimizer")
    assert o["optimizer_kernels"] == 8 * o["gradients_per_step"]
    assert o["optimizer_cpu_ns"] > 4 * o["optimizer_gpu_ns"]
    launches = {
        r["phase"]: r["avg_ns"]
        for r in _trace_rows(
            NAIVE,
            "SELECT p.phase, AVG(r.dur) AS avg_ns FROM guide_train_phase AS p "
            "JOIN slice AS r ON r.ts >= p.ts AND r.ts < p.ts + p.dur "
            "JOIN guide_train_thread AS th ON th.track_id = r.track_id "
            "WHERE r.name = 'cudaLaunchKernel' GROUP BY p.phase",
        )
    }
    assert launches["optimizer"] > 3 * launches["forward"], launches


def test_item_calls_read_the_step_counters() -> None:
    """'aten::item calls: one per parameter in the single-tensor loop, two per parameter in the
    foreach one'; 'in the H200 capture they launch no kernel and no copy'; 'The fused optimizer
    reads no counter: its table has no aten::item'."""
    for variant, per_tensor in ((NAIVE, 1), (FOREACH, 2)):
        rows = {r["name"]: r for r in table(STEP, variant, "train_optimizer_ops")}
        n = _values(variant, "train_optimizer")["gradients_per_step"]
        assert float(rows["aten::item"]["calls_per_step"]) == per_tensor * n, variant
        if shown_device(STEP, variant) == "cuda":
            assert float(rows["aten::item"]["kernels"]) == 0, variant
    if shown_device(STEP, NAIVE) == "cuda":
        assert _phases(NAIVE)["optimizer"]["copies"] == 0
    assert not any(r["name"] == "aten::item" for r in table(STEP, TUNED, "train_optimizer_ops"))


@GPU
def test_foreach_launches_a_few_kernels_and_saves_cpu_time_not_gpu_time() -> None:
    """'aten::_foreach_mul_, aten::_foreach_lerp_, aten::_foreach_sqrt ...'; 'the optimizer's
    kernels fall from N to M per step and its CPU time by far more than half, while the GPU time
    of its kernels barely changes'."""
    names = {r["name"] for r in table(STEP, FOREACH, "train_optimizer_ops")}
    assert {"aten::_foreach_mul_", "aten::_foreach_lerp_", "aten::_foreach_sqrt"} <= names
    single, foreach = _gpu(NAIVE, "train_optimizer"), _gpu(FOREACH, "train_optimizer")
    assert foreach["optimizer_top_ops"] < single["optimizer_top_ops"]
    assert foreach["optimizer_multi_tensor_kernels"] == foreach["optimizer_kernels"] > 0
    assert foreach["optimizer_kernels"] < single["optimizer_kernels"] / 10
    assert foreach["optimizer_cpu_ns"] < 0.25 * single["optimizer_cpu_ns"]
    assert 0.9 <= foreach["optimizer_gpu_ns"] / single["optimizer_gpu_ns"] <= 1.1


def test_in_the_cpu_capture_foreach_costs_the_same_order_as_single_tensor() -> None:
    """'In the CPU capture foreach saves the Python loop but not the per-tensor work, and its
    optimizer step costs the same order of CPU time as the single-tensor one (the table's last
    row)'; 'the count of operators at every level shows it'."""
    single, foreach = _cpu_values(NAIVE, "train_optimizer"), _cpu_values(FOREACH, "train_optimizer")
    assert foreach["optimizer_top_ops"] < single["optimizer_top_ops"]
    assert foreach["optimizer_cpu_ops"] > 0.5 * single["optimizer_cpu_ops"]
    ratio = foreach["optimizer_cpu_ns"] / single["optimizer_cpu_ns"]
    assert 0.5 <= ratio <= 1.5, ratio


def test_fused_is_one_operator_plus_the_step_counters_and_the_cheapest() -> None:
    """'the whole update in one operator, aten::_fused_adamw_, plus one aten::_foreach_add_ that
    advances the step counters; fused AdamW keeps those counters on the device, so that operator
    launches kernels too. All of its kernels are multi_tensor_apply kernels ...: the GPU time of
    the optimizer's kernels is less than half the foreach's'; 'the cheapest of the three on the
    H200, on the CPU side as on the GPU, and in the CPU capture too'."""
    rows = table(STEP, TUNED, "train_optimizer_ops")
    assert sorted(r["name"] for r in rows) == ["aten::_foreach_add_", "aten::_fused_adamw_"]
    assert all(float(r["calls_per_step"]) == 1 for r in rows)
    cpu = {
        v: _cpu_values(v, "train_optimizer")["optimizer_cpu_ns"] for v in (NAIVE, FOREACH, TUNED)
    }
    assert cpu[TUNED] < min(cpu[NAIVE], cpu[FOREACH]), cpu
    if shown_device(STEP, TUNED) != "cuda":
        return
    assert all(float(r["kernels"]) > 0 for r in rows)
    o = {v: _gpu(v, "train_optimizer") for v in (NAIVE, FOREACH, TUNED)}
    assert o[TUNED]["optimizer_multi_tensor_kernels"] == o[TUNED]["optimizer_kernels"] > 0
    assert o[TUNED]["optimizer_gpu_ns"] < 0.5 * o[FOREACH]["optimizer_gpu_ns"]
    for key in ("optimizer_cpu_ns", "optimizer_gpu_ns"):
        assert o[TUNED][key] < min(o[NAIVE][key], o[FOREACH][key]), key


# ---- page 2: zero_grad --------------------------------------------------------------------------
def test_zero_grad_per_implementation() -> None:
    """'one aten::zero_ per gradient with a single-tensor optimizer, and one aten::_foreach_zero_
    ... with a foreach one'; 'With set_to_none=True the label is still there, with no operator'."""
    naive, foreach, tuned = (_values(v, "train_optimizer") for v in (NAIVE, FOREACH, TUNED))
    assert naive["zero_grad_zero_calls"] == naive["gradients_per_step"]
    assert naive["zero_grad_foreach_calls"] == 0
    assert (foreach["zero_grad_zero_calls"], foreach["zero_grad_foreach_calls"]) == (0, 1)
    assert tuned["zero_grad_cpu_ops"] == 0 and tuned["zero_grad_cpu_ns"] is not None


@GPU
def test_set_to_none_removes_the_zeroing_gpu_work() -> None:
    """'On the H200 they are all kernels: one fill kernel per gradient with the single-tensor
    optimizer, a few multi_tensor_apply kernels with the foreach one; set_to_none=True removes them
    all'."""
    naive, foreach, tuned = (_gpu(v, "train_optimizer") for v in (NAIVE, FOREACH, TUNED))
    assert naive["zero_grad_kernels"] == naive["gradients_per_step"]
    assert naive["zero_grad_memsets"] == 0 and foreach["zero_grad_memsets"] == 0
    assert 0 < foreach["zero_grad_kernels"] < naive["gradients_per_step"] / 5
    rows = {r["name"]: r for r in table(STEP, NAIVE, "train_optimizer_ops", cpu_ok=False)}
    assert "FillFunctor" in rows["aten::zero_"]["kernel_name"]
    rows = {r["name"]: r for r in table(STEP, FOREACH, "train_optimizer_ops", cpu_ok=False)}
    assert "multi_tensor_apply_kernel" in rows["aten::_foreach_zero_"]["kernel_name"]
    assert tuned["zero_grad_kernels"] == 0 and tuned["zero_grad_memsets"] == 0


# ---- page 2: the data ---------------------------------------------------------------------------
def test_data_iterator_classes() -> None:
    """'the iterator is _SingleProcessDataLoaderIter.__next__ without workers (the naive loop) and
    _MultiProcessingDataLoaderIter.__next__ with them'."""
    assert _settings(NAIVE)["workers"] == 0 and _settings(TUNED)["workers"] > 0
    assert _values(NAIVE, "train_data")["iterator"] == "_SingleProcessDataLoaderIter.__next__"
    assert _values(TUNED, "train_data")["iterator"] == "_MultiProcessingDataLoaderIter.__next__"


@GPU
def test_with_pinned_memory_the_loop_takes_a_finished_batch() -> None:
    """'the naive loop's main process builds each batch in X, with N operators. With two workers
    and pinned memory the tuned loop's label takes Y on average and runs no operator in any
    profiled step'; 'Neither that thread nor the workers' processes have an operator in this
    trace. Either way the data row is well under one percent of the step here'."""
    naive, tuned = _gpu(NAIVE, "train_data"), _gpu(TUNED, "train_data")
    assert naive["later_data_min_ops"] == naive["later_data_max_ops"] > 0
    assert (
        tuned["first_data_ops"] == tuned["later_data_min_ops"] == tuned["later_data_max_ops"] == 0
    )
    assert _phases(TUNED)["data"]["cpu_ops"] == 0
    assert tuned["later_data_cpu_ns"] < naive["later_data_cpu_ns"]
    for variant in (NAIVE, TUNED):
        assert _phases(variant)["data"]["step_pct"] < 1, variant
    threads = _trace_rows(
        TUNED,
        "SELECT DISTINCT s.track_id FROM slice AS s WHERE s.category = 'cpu_op' "
        "AND s.track_id NOT IN (SELECT track_id FROM guide_train_thread)",
    )
    assert threads == []


def test_cpu_capture_workers_hand_over_slower_than_the_main_process_builds() -> None:
    """'Its toy dataset builds a batch in a fraction of a millisecond (X in the naive loop's main
    process, far less than a step), and with two workers the loop waits longer for a batch than
    that'; 'an aten::empty and an aten::set_ under the label for each of the batch's two
    tensors'; 'In the first profiled step the label took X and ran 0 operators ... The labels of
    the later steps took Y on average and ran 4 operators each when they rebuilt a batch; how
    many of them found their batch already received instead varies from run to run. That mix is
    the fraction in the CPU tuned table's Operators per step column'."""
    naive, d = _cpu_values(NAIVE, "train_data"), _cpu_values(TUNED, "train_data")
    assert naive["later_data_cpu_ns"] < 1e6
    assert naive["later_data_cpu_ns"] < 0.05 * _cpu_values(NAIVE, "train_casts")["step_cpu_ns"]
    assert d["later_data_cpu_ns"] > naive["later_data_cpu_ns"]
    assert _cpu_phases(TUNED)["data"]["cpu_ns"] > _cpu_phases(NAIVE)["data"]["cpu_ns"]
    assert d["first_data_ops"] == 0
    assert d["later_data_max_ops"] == 4 and d["later_data_min_ops"] in (0, 4)
    # 'only returned it': no operators, and less time than a hand-over (how much less varies
    # with the machine's load: the label holds the process's own waits too).
    assert d["first_data_cpu_ns"] < d["later_data_cpu_ns"]
    steps = _steps(TUNED, "cpu")
    names = _trace_rows(
        TUNED,
        "SELECT o.name, COUNT(*) AS n FROM guide_train_phase_op AS o "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id WHERE p.phase = 'data' "
        "GROUP BY o.name ORDER BY o.name",
        device="cpu",
    )
    counts = {r["name"]: r["n"] for r in names}
    assert set(counts) == {"aten::empty", "aten::set_"}
    assert counts["aten::empty"] == counts["aten::set_"]
    rebuilt = counts["aten::empty"] // 2  # labels that rebuilt a batch: two tensors each
    assert 1 <= rebuilt <= steps - 1 and counts["aten::empty"] == 2 * rebuilt
    row = _cpu_phases(TUNED)["data"]["cpu_ops"]
    assert row == pytest.approx(4 * rebuilt / steps) and not float(row).is_integer()


# ---- page 2: copies -----------------------------------------------------------------------------
def _copies(variant: str) -> list[dict[str, str]]:
    return table(STEP, variant, "train_copies", cpu_ok=False)


@GPU
def test_pageable_copies_naive_pinned_copies_tuned() -> None:
    """'Memcpy HtoD (Pageable -> Device)' in the naive loop, '(Pinned -> Device)' in the tuned one;
    'each copy (two per step: the inputs and the targets)'; 'Neither loop's copies overlap a
    kernel'."""
    naive = {r["name"]: r for r in _copies(NAIVE) if "HtoD" in r["name"]}
    tuned = {r["name"]: r for r in _copies(TUNED) if "HtoD" in r["name"]}
    assert list(naive) == ["Memcpy HtoD (Pageable -> Device)"]
    assert list(tuned) == ["Memcpy HtoD (Pinned -> Device)"]
    for r in (*naive.values(), *tuned.values()):
        assert r["phase"] == "to_device" and float(r["copies_per_step"]) == 2
    for variant in (NAIVE, TUNED):
        assert all(float(r["overlap_ns"]) == 0 for r in _copies(variant)), variant


@GPU
def test_blocking_copies_synchronise_and_non_blocking_ones_do_not() -> None:
    """'In the naive loop each copy ... is a cudaMemcpyAsync followed by a cudaStreamSynchronize
    ... Here that wait is short'; 'In the tuned loop the pinned copies, with non_blocking=True,
    have no synchronisation'."""
    sql = (
        "SELECT s.name, COUNT(*) AS n, AVG(s.dur) AS avg_ns FROM guide_train_phase AS p "
        "JOIN slice AS s ON s.track_id = p.track_id AND s.ts >= p.ts AND s.ts < p.ts + p.dur "
        "WHERE p.phase = 'to_device' AND s.name IN ('cudaMemcpyAsync', 'cudaStreamSynchronize') "
        "GROUP BY s.name"
    )
    naive = {r["name"]: r for r in _trace_rows(NAIVE, sql)}
    assert naive["cudaMemcpyAsync"]["n"] == naive["cudaStreamSynchronize"]["n"] == 2 * _steps(NAIVE)
    assert naive["cudaStreamSynchronize"]["avg_ns"] < 100_000
    tuned = {r["name"]: r["n"] for r in _trace_rows(TUNED, sql)}
    assert tuned == {"cudaMemcpyAsync": 2 * _steps(TUNED)}


@GPU
def test_the_backwards_device_copies_come_from_the_rmsnorms_pow() -> None:
    """'The backward's Memcpy DtoD (Device -> Device) rows ... are copies ... that aten::pow makes
    (an aten::copy_ under it) in the RMSNorms' PowBackward0 nodes, one per norm'."""
    (row,) = [r for r in _copies(NAIVE) if r["phase"] == "backward"]
    assert row["name"] == "Memcpy DtoD (Device -> Device)"
    assert float(row["copies_per_step"]) == 2 * _layers() + 1  # two norms per layer, the final one
    callers = _trace_rows(
        NAIVE,
        "SELECT op.name AS op, up.name AS caller, node.name AS node, COUNT(*) AS n "
        "FROM guide_train_phase_gpu AS g JOIN guide_train_phase AS p ON p.id = g.phase_id "
        "JOIN slice AS r ON r.id = g.launch_id JOIN slice AS op ON op.id = r.parent_id "
        "JOIN slice AS up ON up.id = op.parent_id JOIN slice AS node ON node.id = up.parent_id "
        "WHERE p.phase = 'backward' AND g.category = 'gpu_memcpy' GROUP BY 1, 2, 3",
    )
    assert [(r["op"], r["caller"], r["node"]) for r in callers] == [
        ("aten::copy_", "aten::pow", "PowBackward0")
    ]


# ---- page 2: reading the loss back --------------------------------------------------------------
def test_loss_read_every_naive_step_and_in_no_tuned_step() -> None:
    """'reads per step' 1 in the naive loop; the tuned loop reads every ten steps, 'so none of its
    profiled steps reads it'."""
    assert _values(NAIVE, "train_readback")["reads_per_step"] == 1
    assert _values(NAIVE, "train_readback")["item_calls"] == _steps(NAIVE)
    assert _values(TUNED, "train_readback")["reads_per_step"] == 0


@GPU
def test_reading_the_loss_copies_it_waits_and_leaves_the_gpu_idle() -> None:
    """'a cudaMemcpyAsync of the one-element loss (the naive copies table's Memcpy DtoH (Device ->
    Pinned) row) and a cudaStreamSynchronize'; 'the idle each read leaves is about one percent of
    a step'; 'Its GPU busy share is nevertheless lower'."""
    (copy,) = [r for r in _copies(NAIVE) if r["phase"] == "log_loss"]
    assert copy["name"] == "Memcpy DtoH (Device -> Pinned)"
    assert float(copy["copies_per_step"]) == 1 and int(copy["copy_bytes"]) == 4
    (r,) = _trace_rows(
        NAIVE,
        "SELECT COUNT(*) AS n FROM guide_train_phase AS p JOIN slice AS s ON s.track_id = "
        "p.track_id AND s.ts >= p.ts AND s.ts < p.ts + p.dur WHERE p.phase = 'log_loss' "
        "AND s.name = 'cudaStreamSynchronize'",
    )
    assert r["n"] == _steps(NAIVE)
    naive, tuned = _gpu(NAIVE, "train_readback"), _gpu(TUNED, "train_readback")
    assert naive["read_wait_ns"] > 0 and naive["gpu_idle_after_read_ns"] > 0
    share = naive["gpu_idle_after_read_ns"] / _values(NAIVE, "train_casts")["step_cpu_ns"]
    assert 0.005 <= share <= 0.02, share
    assert tuned["gpu_busy_pct"] < naive["gpu_busy_pct"]


# ---- page 3: memory -----------------------------------------------------------------------------
@GPU
@pytest.mark.parametrize("variant", [MEMORY, MEMORY_FP32])
def test_adamw_state_is_a_little_over_eight_bytes_per_parameter_and_stays(variant: str) -> None:
    """'two tensors the size of each parameter ..., plus a step counter per parameter, which fused
    AdamW keeps on the GPU: ... a little over eight bytes per parameter'; 'each counter takes a
    small block of its own'; 'the second optimizer step keeps nothing new'."""
    m = _gpu(variant, "train_memory")
    model = _settings(variant)["model"]
    state = m["first_optimizer_kept_bytes"]
    assert 8 * model["parameters"] < state < 1.05 * 8 * model["parameters"]
    assert m["second_optimizer_kept_bytes"] == 0
    assert m["second_start_bytes"] >= m["first_start_bytes"] + state
    allocs = _trace_rows(
        variant,
        "WITH st AS (SELECT step FROM guide_kineto_profiler_step ORDER BY step LIMIT 1), "
        "ph AS (SELECT p.ts, p.dur FROM guide_train_phase AS p, st "
        "WHERE p.step = st.step AND p.phase = 'optimizer') "
        "SELECT m.bytes FROM guide_train_memory AS m, ph WHERE m.device = 'CUDA' "
        "AND m.ts >= ph.ts AND m.ts < ph.ts + ph.dur",
        device="cuda",
    )
    sizes = [r["bytes"] for r in allocs]
    assert all(b > 0 for b in sizes) and sum(sizes) == state
    tensors = model["parameter_tensors"]
    assert len(sizes) == 3 * tensors
    smallest = min(sizes)
    assert sizes.count(smallest) == tensors and smallest <= 512


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


def test_how_the_allocator_counts_on_each_device() -> None:
    """'On a GPU the CUDA caching allocator's total counts every live tensor on the device,
    parameters included: the H200 capture's first step starts at X, more than the fp32
    parameters' own size. On a CPU ... the CPU capture's curve starts near zero'."""
    cpu = _cpu_values(MEMORY, "train_memory")
    assert cpu["device"] == "CPU"
    assert cpu["first_start_bytes"] < 0.01 * cpu["first_peak_bytes"]
    if shown_device(STEP, MEMORY) == "cuda":
        m = _values(MEMORY, "train_memory")
        assert m["device"] == "CUDA"
        assert m["first_start_bytes"] > 4 * _settings(MEMORY)["model"]["parameters"]


def test_the_memory_snapshot_is_kept_with_the_gpu_captures_only() -> None:
    """'Run on a GPU, the workload also records PyTorch's own memory snapshot of the profiled
    steps (torch.cuda.memory._record_memory_history) ... writes it beside the trace as
    memory_snapshot.html ... The guide keeps it with the GPU captures. The file ... fetches the
    visualiser's script from a public CDN'."""
    from torch.cuda import _memory_viz

    from generators.store import MEMORY_SNAPSHOT_FILE
    from generators.workloads import train

    source = (ARTIFACTS.parent / "generators" / "workloads" / "train.py").read_text()
    assert "_record_memory_history" in source and "trace_plot(snapshot)" in source
    assert train.MEMORY_SNAPSHOT_FILE == MEMORY_SNAPSHOT_FILE
    assert "snapshot = args.profile_memory and cuda" in source  # never on a CPU
    assert "https://cdn." in _memory_viz._memory_viz_template
    cpu = json.loads((ARTIFACTS / "cpu" / "MANIFEST.json").read_text())
    assert not [f for f in cpu["files"] if f.endswith(MEMORY_SNAPSHOT_FILE)]
    cuda_manifest = ARTIFACTS / "cuda" / "MANIFEST.json"
    cuda = json.loads(cuda_manifest.read_text()) if cuda_manifest.exists() else {"files": {}}
    for variant in (MEMORY, MEMORY_FP32):
        rel = f"{STEP}/{variant}/{MEMORY_SNAPSHOT_FILE}"
        if rel in cuda["files"]:
            assert cuda["files"][rel]["kind"] == "memory-snapshot"
            assert "https://cdn." in (ARTIFACTS / "cuda" / rel).read_text()


@GPU
def test_the_gpu_series_continues_its_running_total() -> None:
    """'in a GPU trace the GPU's, where every event continues the total of the events before it';
    'allocated memory jumping once in the first Optimizer.step# and never coming back'
    (cheatsheet)."""
    for variant in (MEMORY, MEMORY_FP32):
        assert _gpu(variant, "train_memory")["other_counter_events"] == 0, variant
    m = _gpu(MEMORY, "train_memory")
    rows = table(STEP, MEMORY, "train_memory_timeline", cpu_ok=False)
    first = min(int(r["step"]) for r in rows)
    later = [int(r["allocated_bytes"]) for r in rows if int(r["step"]) > first]
    assert min(later) >= m["first_start_bytes"] + m["first_optimizer_kept_bytes"]


def test_cpu_memory_series_leaves_out_the_shared_memory_counter() -> None:
    """'those blocks report their own allocations and frees, with a Total Allocated of 0 ... The SQL
    keeps an event only when it continues the running total ..., which leaves out N events in the
    CPU capture'."""
    m = _cpu_values(MEMORY, "train_memory")
    assert m["other_counter_events"] > 0
    dropped = _trace_rows(
        MEMORY,
        "SELECT extract_arg(s.arg_set_id, 'args.Total Allocated') AS total FROM slice AS s "
        "WHERE s.name = '[memory]' AND s.ts NOT IN (SELECT ts FROM guide_train_memory)",
        device="cpu",
    )
    assert len(dropped) == m["other_counter_events"]
    assert {r["total"] for r in dropped} == {0}
    rows = _cpu_table(MEMORY, "train_memory_timeline")
    first = min(int(r["step"]) for r in rows)
    later = [int(r["allocated_bytes"]) for r in rows if int(r["step"]) > first]
    assert min(later) >= m["first_optimizer_kept_bytes"]


def test_autocast_lowers_activations_and_peak_by_far_less_than_half() -> None:
    """'Autocast lowers the saved activations and the peak, but by less than half ... the state
    is the same in both columns'."""
    bf16, fp32 = _values(MEMORY, "train_memory"), _values(MEMORY_FP32, "train_memory")
    for key in ("forward_kept_bytes", "second_peak_bytes"):
        assert 0.5 * fp32[key] < bf16[key] < fp32[key], key
    assert bf16["first_optimizer_kept_bytes"] == fp32["first_optimizer_kept_bytes"]


@GPU
def test_what_autocast_keeps_in_fp32_and_what_it_runs_in_bf16() -> None:
    """'the RMSNorms compute in fp32 too, because LlamaRMSNorm converts its input to fp32'; 'under
    CUDA autocast scaled_dot_product_attention runs in bf16, as cuDNN's attention
    (aten::_scaled_dot_product_cudnn_attention)'."""
    rows = _trace_rows(
        TUNED,
        "SELECT o.name, extract_arg(s.arg_set_id, 'args.Input type[0]') AS dtype "
        "FROM guide_train_phase_op AS o JOIN slice AS s ON s.id = o.id "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id WHERE p.phase = 'forward' "
        "AND o.name IN ('aten::_scaled_dot_product_cudnn_attention', 'aten::rsqrt') "
        "GROUP BY 1, 2 ORDER BY 1",
    )
    assert [(r["name"], r["dtype"]) for r in rows] == [
        ("aten::_scaled_dot_product_cudnn_attention", "c10::BFloat16"),
        ("aten::rsqrt", "float"),
    ]


# ---- page 3: the GEMMs and the casts ------------------------------------------------------------
@GPU
def test_autocast_gemms_are_bf16_but_the_rotary_product() -> None:
    """'Under autocast every GEMM of the model's layers, forward and backward, takes bf16 inputs ...
    The one fp32 row is the rotary embedding's tiny product'; 'the naive loop's fp32 GEMMs run on
    the FMA units ..., the tuned loop's bf16 GEMMs on the tensor cores, and ... the bf16 GEMMs'
    kernel time is a small fraction of the fp32 ones''; 'sgemm or ffma in the name'."""
    naive = table(STEP, NAIVE, "train_gemm", cpu_ok=False)
    tuned = table(STEP, TUNED, "train_gemm", cpu_ok=False)
    assert {r["dtype"] for r in naive} == {"fp32"}
    assert {r["math"] for r in naive} == {"fp32 on CUDA cores (FMA)"}
    assert all("ffma" in r["kernel_name"] or "sgemm" in r["kernel_name"] for r in naive)
    bf16 = [r for r in tuned if r["dtype"] == "bf16"]
    assert {r["phase"] for r in bf16} == {"forward", "backward"}
    assert {r["math"] for r in bf16} == {"bf16 on tensor cores"}
    (fp32,) = [r for r in tuned if r["dtype"] != "bf16"]
    assert (fp32["phase"], fp32["dtype"], float(fp32["gemms"])) == ("forward", "fp32", 1)
    assert float(fp32["gflop"]) < 1e-3
    bf16_ns = sum(float(r["kernel_ns"]) for r in bf16)
    assert bf16_ns < 0.1 * sum(float(r["kernel_ns"]) for r in naive)


@GPU
def test_the_tuned_forwards_casts_by_kind() -> None:
    """'weights to bf16 ..., one per linear layer'; 'each linear layer that reads [the fp32
    residual stream] casts its input ...: the query, key and value projections read the same input
    and each cast it again'; 'The attention's inputs are cast too ... the query and the key ...;
    the value reaches the attention in fp32 as well ... the trace shows each layer concatenating
    its key and its value to an empty tensor (an aten::cat whose first input has the shape [0])';
    'The cache's empty tensors are the rest of the forward's casts, two per layer, fp32 to fp32';
    'the loss converts the bf16 logits to fp32, the one bf16 result converted back'; 'the backward
    casts no weight again (0 casts ...)'; 'In the backward most casts are the forward casts'
    gradients, cast back the other way (ToCopyBackward0)'."""
    c = _gpu(TUNED, "train_casts")
    layers, steps = _layers(TUNED), _steps(TUNED)
    linear = 7 * layers + 1  # q, k, v, o, gate, up, down per layer; the LM head
    assert c["forward_weight_casts"] == linear
    (mm,) = _trace_rows(
        TUNED,
        "SELECT COUNT(*) AS n FROM guide_train_gemm WHERE phase = 'forward' AND name = 'aten::mm'",
    )
    assert mm["n"] == linear * steps
    kinds = ("weight", "activation", "number")
    assert all(c[f"forward_{k}_casts"] > 0 for k in kinds)
    assert c["forward_upcasts"] == 1
    assert (
        sum(c[f"forward_{k}_casts"] for k in kinds) + c["forward_upcasts"] + 2 * layers
        == (c["forward_casts"])
    )
    assert c["backward_weight_casts"] == 0
    rows = _trace_rows(
        TUNED,
        "SELECT up.name AS caller, i.dims, extract_arg(s.arg_set_id, 'args.Input type[0]') AS src, "
        "extract_arg(s.arg_set_id, 'args.Concrete Inputs[1]') AS dst, COUNT(*) AS n "
        "FROM guide_train_phase_op AS o "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id JOIN slice AS s ON s.id = o.id "
        "JOIN slice AS mid ON mid.id = s.parent_id JOIN slice AS up ON up.id = mid.parent_id "
        "JOIN guide_shapes_input AS i ON i.slice_id = o.id AND i.input_index = 0 "
        "WHERE p.phase = 'forward' AND o.name = 'aten::_to_copy' "
        "AND extract_arg(s.arg_set_id, 'args.Input type[0]') = 'float' "
        "AND (i.ndim >= 3 OR i.dims = '[0]') GROUP BY 1, 2, 3, 4 ORDER BY 1, 2",
    )
    heads = _settings(TUNED)["model"]
    batch, seq = _settings(TUNED)["batch"], _settings(TUNED)["seq"]
    head_dim = heads["hidden_size"] // heads["num_attention_heads"]
    query = f"[{batch}, {heads['num_attention_heads']}, {seq}, {head_dim}]"
    key_value = f"[{batch}, {heads['num_key_value_heads']}, {seq}, {head_dim}]"
    found = {(r["caller"], r["dims"], r["src"], r["dst"]): r["n"] for r in rows}
    assert found == {
        ("aten::linear", f"[{batch}, {seq}, {heads['hidden_size']}]", "float", "15"): (
            (5 * layers + 1) * steps
        ),
        ("aten::scaled_dot_product_attention", query, "float", "15"): layers * steps,
        ("aten::scaled_dot_product_attention", key_value, "float", "15"): 2 * layers * steps,
        ("forward", "[0]", "float", "6"): 2 * layers * steps,
    }
    assert (5 * layers + 1) + 3 * layers == c["forward_activation_casts"]
    (cat,) = _trace_rows(
        TUNED,
        "SELECT COUNT(*) AS n FROM guide_train_phase_op AS o JOIN slice AS s ON s.id = o.id "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id WHERE p.phase = 'forward' "
        "AND o.name = 'aten::cat' AND extract_arg(s.arg_set_id, 'args.Input Dims[0][0][0]') = 0 "
        "AND extract_arg(s.arg_set_id, 'args.Input Dims[0][0][1]') IS NULL "
        "AND extract_arg(s.arg_set_id, 'args.Input Dims[0][1][1]') = "
        f"{heads['num_key_value_heads']}",
    )
    assert cat["n"] == 2 * layers * steps
    (loss,) = _trace_rows(
        TUNED,
        "SELECT up.name AS caller FROM guide_train_phase_op AS o JOIN slice AS s ON s.id = o.id "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id "
        "JOIN slice AS mid ON mid.id = s.parent_id "
        "JOIN slice AS up ON up.id = mid.parent_id WHERE p.phase = 'forward' "
        "AND o.name = 'aten::_to_copy' "
        "AND extract_arg(s.arg_set_id, 'args.Input type[0]') = 'c10::BFloat16' GROUP BY 1",
    )
    assert loss["caller"] == "aten::nll_loss"
    (back,) = _trace_rows(
        TUNED,
        "SELECT SUM(up.name = 'ToCopyBackward0') AS to_copy, COUNT(*) AS n "
        "FROM guide_train_phase_op AS o JOIN guide_train_phase AS p ON p.id = o.phase_id "
        "JOIN slice AS s ON s.id = o.id JOIN slice AS mid ON mid.id = s.parent_id "
        "JOIN slice AS up ON up.id = mid.parent_id "
        "WHERE p.phase = 'backward' AND o.name = 'aten::_to_copy'",
    )
    assert back["n"] == c["backward_casts"] * steps
    assert back["to_copy"] > back["n"] / 2


@GPU
def test_the_fp32_models_few_casts_and_autocasts_many() -> None:
    """'The fp32 model has a few casts too: the cache's empty tensors, and the token positions, an
    integer tensor converted to float ... Autocast adds several times as many'."""
    naive, tuned = _gpu(NAIVE, "train_casts"), _gpu(TUNED, "train_casts")
    assert naive["forward_number_casts"] == 1
    assert naive["forward_casts"] == 2 * _layers() + naive["forward_number_casts"]
    assert naive["backward_casts"] == 0 < tuned["backward_casts"]
    assert tuned["forward_casts"] >= 3 * naive["forward_casts"]


@GPU
def test_on_the_h200_the_gemms_save_more_gpu_time_than_the_casts_cost() -> None:
    """'the bf16 GEMMs save far more kernel time than the casts' small kernels cost. It costs on the
    CPU side: the casts take X of CPU time per step and a launch each, and the tuned step is paced
    by the CPU'."""
    naive = table(STEP, NAIVE, "train_gemm", cpu_ok=False)
    tuned = table(STEP, TUNED, "train_gemm", cpu_ok=False)
    saved = sum(float(r["kernel_ns"]) for r in naive) - sum(float(r["kernel_ns"]) for r in tuned)
    (casts,) = _trace_rows(
        TUNED,
        "SELECT COUNT(*) AS kernels, SUM(g.dur) AS ns FROM guide_train_phase_gpu AS g "
        "JOIN slice AS r ON r.id = g.launch_id JOIN guide_train_phase_op AS o "
        "ON o.phase_id = g.phase_id AND o.name = 'aten::_to_copy' "
        "AND r.ts >= o.ts AND r.ts < o.ts + o.dur "
        "JOIN guide_train_phase AS p ON p.id = g.phase_id "
        "WHERE g.category = 'kernel' AND p.phase IN ('forward', 'backward')",
    )
    c = _gpu(TUNED, "train_casts")
    assert casts["kernels"] == c["cast_kernels"] * _steps(TUNED)
    assert casts["ns"] / _steps(TUNED) < 0.2 * saved
    assert c["cast_cpu_ns"] > 0.05 * c["step_cpu_ns"]
    assert _gpu(TUNED, "train_readback")["gpu_busy_pct"] < 50


@GPU
def test_the_large_gemm_rows_reach_a_similar_share_of_very_different_peaks() -> None:
    """Page 3: 'The large fp32 and bf16 rows reach a similar share of their peaks, from about two
    thirds to three quarters, but the tensor cores' bf16 peak is many times the FMA units' fp32
    one: the same share is many times the rate. The rotary embedding's tiny product is far below
    its peak: a kernel of a few microseconds with almost no work to do'."""
    rows = table(STEP, NAIVE, "train_gemm", cpu_ok=False) + table(
        STEP, TUNED, "train_gemm", cpu_ok=False
    )
    large = [r for r in rows if float(r["gflop"]) > 1]
    tiny = [r for r in rows if float(r["gflop"]) <= 1]
    assert {r["dtype"] for r in large} == {"fp32", "bf16"}
    assert {r["math"] for r in large} == {"fp32 on CUDA cores (FMA)", "bf16 on tensor cores"}
    for r in large:
        assert 62 <= float(r["tflops_peak_pct"]) <= 75, r  # "about two thirds to three quarters"
        # Achieved is the work over the kernel time (per step both).
        rate = float(r["gflop"]) * 1e9 / (float(r["kernel_ns"]) * 1e3)
        assert float(r["achieved_tflops"]) == pytest.approx(rate, rel=1e-3)
    fp32 = min(float(r["achieved_tflops"]) for r in large if r["dtype"] == "fp32")
    bf16 = max(float(r["achieved_tflops"]) for r in large if r["dtype"] == "bf16")
    assert bf16 > 10 * fp32  # "many times the rate"
    (rotary,) = tiny
    assert rotary["dtype"] == "fp32" and float(rotary["tflops_peak_pct"]) < 1
    assert float(rotary["kernel_ns"]) < 10_000


def test_in_the_cpu_capture_the_casts_take_back_part_of_the_gemms_saving() -> None:
    """'In the CPU capture the bf16 GEMMs take X per step against the fp32 ones' Y, the casts take
    back part of that saving (Z), and the forward and backward run more operators in all; the
    tuned step changes less there than on the H200' (the last part: the test above)."""
    naive, tuned = _cpu_values(NAIVE, "train_casts"), _cpu_values(TUNED, "train_casts")
    saved = naive["gemm_cpu_ns"] - tuned["gemm_cpu_ns"]
    assert 0 < tuned["cast_cpu_ns"] < saved, (tuned["cast_cpu_ns"], saved)
    for phase in ("forward", "backward"):
        assert _cpu_phases(TUNED)[phase]["cpu_ops"] > _cpu_phases(NAIVE)[phase]["cpu_ops"], phase


# ---- page 4: torch.compile ----------------------------------------------------------------------
def test_compiled_step_is_one_region_one_forward_and_one_backward_graph() -> None:
    """'one Torch-Compiled Region per step, and inside it one CompiledFunction'; 'one node,
    CompiledFunctionBackward'; 'the few nodes left ... the loss ... and the AccumulateGrad of each
    parameter'; 'The GEMMs are left to the library: aten::mm under the graph call ..., as many as
    in the eager step'."""
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
    for key in ("forward_gemms_per_step", "backward_gemms_per_step"):
        assert b[key] == eager[key], key
    callers = _trace_rows(
        COMPILED,
        "SELECT DISTINCT g.name, par.name GLOB '## Call CompiledFxGraph * ##' AS under_graph "
        "FROM guide_train_gemm AS g JOIN slice AS s ON s.id = g.id "
        "JOIN slice AS par ON par.id = s.parent_id",
    )
    assert [(r["name"], r["under_graph"]) for r in callers] == [("aten::mm", 1)]


def test_traced_compiled_steps_hold_no_compiler_work() -> None:
    """'the traced steps hold 0 of them' (dynamo_timed rows); 'AOTDispatcher Runtime Wrapper
    Prologue, 1 per step'."""
    c = _values(COMPILED, "train_compiled")
    assert c["compiler_rows"] == 0 and c["runtime_wrappers"] == 1


@GPU
def test_on_a_gpu_inductors_kernels_are_triton_kernels_each_with_its_launch_row() -> None:
    """'Inductor kernels (triton_* here on the GPU ...)'; the longest quoted; 'On a GPU they are
    Triton kernels, and each has a CPU row of the same name too: its launch'."""
    c = _gpu(COMPILED, "train_compiled")
    assert str(c["longest_inductor_kernel"]).startswith("triton_")
    rows = {
        r["category"]: r
        for r in _trace_rows(
            COMPILED,
            "SELECT category, COUNT(*) AS n, COUNT(DISTINCT name) AS names FROM slice "
            "WHERE name GLOB 'triton_*' GROUP BY category",
        )
    }
    assert set(rows) == {"kernel", "cpu_op"}
    assert rows["kernel"]["n"] == c["inductor_kernels"] * _steps(COMPILED) == rows["cpu_op"]["n"]
    assert rows["kernel"]["names"] == c["inductor_kernel_names"]


def test_on_a_cpu_inductors_kernels_are_cpp_kernels() -> None:
    """'on a CPU Inductor's C++ kernels, graph_<n>_cpp_fused_*' (recorded with
    enable_kernel_profile)."""
    c = _cpu_values(COMPILED, "train_compiled")
    (r,) = _trace_rows(
        COMPILED,
        "SELECT COUNT(*) AS n, SUM(name GLOB 'graph_[0-9]*_cpp_fused_*') AS named "
        "FROM slice WHERE name GLOB '*cpp_fused*'",
        device="cpu",
    )
    assert r["n"] == c["inductor_kernels"] * _steps(COMPILED, "cpu") and r["named"] == r["n"]


def test_compiled_runs_far_fewer_operators_per_phase() -> None:
    """'far fewer operators per phase than in the tuned eager loop's phase table'; 'The optimizer
    step is not compiled'."""
    compiled, eager = _phases(COMPILED), _phases(TUNED)
    for phase in ("forward", "backward"):
        assert compiled[phase]["cpu_ops"] < eager[phase]["cpu_ops"] / 2, phase
    assert compiled["optimizer"]["cpu_ops"] == eager["optimizer"]["cpu_ops"]


@GPU
def test_compiling_halves_the_cpu_paced_step_which_stays_cpu_paced() -> None:
    """'that cost is small against what compiling saves: ... the compiled one has far fewer
    operators to run and kernels to launch in its forward and backward, so its step takes about
    half the eager one's CPU time. The compiled step is still paced by the CPU: in its forward and
    its backward the CPU time is longer than the GPU time of the work launched, and the GPU is busy
    little more than a third of the steps'; 'The CPU time left, most of it in the compiled forward
    region and in the backward'."""
    c = _gpu(COMPILED, "train_compiled")
    tuned_step = _values(TUNED, "train_casts")["step_cpu_ns"]
    assert 0.4 <= c["step_cpu_ns"] / tuned_step <= 0.6
    assert c["guard_ns"] < 0.05 * (tuned_step - c["step_cpu_ns"])
    compiled, eager = _phases(COMPILED), _phases(TUNED)
    for phase in ("forward", "backward"):
        assert compiled[phase]["kernels"] < eager[phase]["kernels"], phase
        assert compiled[phase]["cpu_ns"] > compiled[phase]["gpu_ns"], phase
    assert 100 / 3 < c["gpu_busy_pct"] < 45
    assert c["gpu_busy_pct"] > _gpu(TUNED, "train_readback")["gpu_busy_pct"]
    assert c["compiled_region_ns"] + compiled["backward"]["cpu_ns"] > 0.5 * c["step_cpu_ns"]


# ---- review of the H200 capture: pace, waiting, backends, caveats -------------------------------
@GPU
def test_the_naive_optimizers_cpu_time_is_mostly_waiting_to_launch() -> None:
    """Page 1: 'its CPU time is several times the GPU time of those kernels: most of it is likely
    waiting for room in the GPU's launch queue'. Page 2: 'each of its launch calls
    (cudaLaunchKernel) takes X on average, against Y in the forward and Z in the backward';
    'The optimizer's launches take E per step more than as many launches would at the forward's
    pace: more than half of its T'."""
    o = _gpu(NAIVE, "train_optimizer")
    assert o["optimizer_launch_avg_ns"] > 3 * o["forward_launch_avg_ns"]
    assert o["optimizer_launch_avg_ns"] > o["backward_launch_avg_ns"] > o["forward_launch_avg_ns"]
    assert 0.5 * o["optimizer_cpu_ns"] < o["optimizer_launch_excess_ns"] < o["optimizer_cpu_ns"]
    assert o["step_cpu_ns"] == _values(NAIVE, "train_casts")["step_cpu_ns"]


@GPU
def test_the_naive_optimizers_kernels_start_long_after_their_launch_calls() -> None:
    """Pages 1 and 2: 'After the first profiled step, each optimizer kernel starts a median of A
    to B after its launch call has returned, and the optimizer's first kernel starts C to D into
    its label'; 'in those steps a launch call (cudaLaunchKernel) takes E to F on average, against
    G in the forward and H in the backward'; 'The first profiled step is the exception ... its
    optimizer took T instead of a median M. It is not a cold step (the step itself is no longer
    than the others)'."""
    o = _gpu(NAIVE, "train_optimizer")
    median = o["optimizer_median_ns"]
    # The wait behind the queue is most of the label: half of it at the median kernel, and the
    # first kernel starts in the label's last tenth.
    assert o["optimizer_queue_later_min_ns"] > 0.4 * median
    assert o["optimizer_queue_later_max_ns"] < median
    assert 0.85 * median < o["optimizer_first_kernel_later_min_ns"]
    assert o["optimizer_first_kernel_later_max_ns"] < o["optimizer_max_ns"]
    assert o["optimizer_launch_later_min_avg_ns"] > 3 * o["forward_launch_avg_ns"]
    assert o["optimizer_launch_later_min_avg_ns"] > o["backward_launch_avg_ns"]
    # The first profiled step: less queued, shorter calls, a far shorter optimizer.
    assert o["optimizer_first_ns"] == o["optimizer_min_ns"] < 0.5 * median
    assert o["optimizer_first_kernel_first_ns"] < 0.5 * o["optimizer_first_kernel_later_min_ns"]
    assert o["optimizer_queue_first_ns"] < 0.6 * o["optimizer_queue_later_min_ns"]
    assert o["optimizer_launch_first_avg_ns"] < 0.5 * o["optimizer_launch_later_min_avg_ns"]
    assert o["step_max_ns"] < 1.05 * o["step_min_ns"]
    assert (
        _trace_rows(
            NAIVE,
            "INCLUDE PERFETTO MODULE guide.windows;\nSELECT step FROM guide_windows_cold_step",
        )
        == []
    )


@GPU
def test_the_steps_one_by_one() -> None:
    """Page 1: the table of the shortest, median and longest step per loop, 'the steps one by
    one differ more in the tuned loop than in the naive one'; page 4: 'the median step takes
    about half the eager one's CPU time'; the optimizer table's median and extreme rows."""
    spread = {}
    for v in (NAIVE, TUNED, COMPILED):
        b = _values(v, "train_backward")
        assert b["step_min_ns"] <= b["step_median_ns"] <= b["step_max_ns"]
        spread[v] = (b["step_max_ns"] - b["step_min_ns"]) / b["step_median_ns"]
    assert spread[TUNED] > 3 * spread[NAIVE]
    half = (
        _values(COMPILED, "train_backward")["step_median_ns"]
        / _values(TUNED, "train_backward")["step_median_ns"]
    )
    assert 0.4 < half < 0.6
    for v in (NAIVE, FOREACH, TUNED):
        o = _values(v, "train_optimizer")
        assert o["optimizer_min_ns"] <= o["optimizer_median_ns"] <= o["optimizer_max_ns"]
        if v != FOREACH:
            assert o["step_median_ns"] == _values(v, "train_backward")["step_median_ns"]


@GPU
def test_foreach_saves_optimizer_cpu_time_but_not_step_time_in_a_gpu_paced_loop() -> None:
    """Page 2: 'The step, though, does not get shorter: the foreach loop's step takes A against
    the single-tensor loop's B'; 'The naive loop's GPU is busy P of its steps, so the GPU sets the
    pace, and the CPU time foreach saves reappears as waiting in the loss read that follows:
    log_loss takes C per step against D'; the fused column 'reads no loss in its profiled
    steps'."""
    single, foreach = _gpu(NAIVE, "train_optimizer"), _gpu(FOREACH, "train_optimizer")
    assert 0.97 < foreach["step_median_ns"] / single["step_median_ns"] < 1.03
    assert _gpu(NAIVE, "train_readback")["gpu_busy_pct"] > 90
    saved = single["optimizer_cpu_ns"] - foreach["optimizer_cpu_ns"]
    grew = foreach["log_loss_cpu_ns"] - single["log_loss_cpu_ns"]
    assert 0.8 * saved < grew < 1.5 * saved, (saved, grew)
    # The tuned loop reads no loss back in its profiled steps: no time, shown "–", not 0 ns.
    assert _gpu(TUNED, "train_optimizer")["log_loss_cpu_ns"] is None
    assert _values(NAIVE, "train_readback")["read_cpu_ns"] == single["log_loss_cpu_ns"]


@GPU
def test_the_tuned_forwards_growth_is_less_than_half_its_casts_attention_and_gemms() -> None:
    """Page 1: 'The forward's CPU time even grew, from A to B (+C)'; the casts take more per
    step, the attention operator less the casts and GEMMs inside it less, 'The GEMM operators
    take a little more in bf16'; 'Together these three come to only +D, less than half of the
    growth. The other +E lies in the rest of the forward ... which grew ..., although the tuned
    forward runs fewer operators'."""
    n, t = _values(NAIVE, "train_casts"), _values(TUNED, "train_casts")
    for v in (NAIVE, TUNED):  # the same forward as the phase table's and train_backward's
        assert (
            _values(v, "train_casts")["forward_cpu_ns"]
            == _values(v, "train_backward")["forward_cpu_ns"]
        )
        assert (
            _values(v, "train_casts")["forward_gemm_cpu_ns"]
            == _values(v, "train_backward")["forward_gemm_cpu_ns"]
        )

    def change(column: str) -> int:
        return t[column] - n[column]

    grew = change("forward_cpu_ns")
    assert grew > 0
    assert change("forward_cast_cpu_ns") > 0
    assert change("forward_attention_own_cpu_ns") < 0
    assert 0 < change("forward_gemm_cpu_ns") < 0.5 * n["forward_gemm_cpu_ns"]  # "a little more"
    # "and that for fewer of them ... the fp32 count includes the math attention's products"
    gemms = "forward_gemms_per_step"
    assert _values(TUNED, "train_backward")[gemms] < _values(NAIVE, "train_backward")[gemms]
    three = change("forward_cast_gemm_attention_cpu_ns")
    for v in (n, t):  # the parts add up: three kinds of operator and the rest
        assert v["forward_cast_gemm_attention_cpu_ns"] == pytest.approx(
            v["forward_cast_cpu_ns"] + v["forward_attention_own_cpu_ns"] + v["forward_gemm_cpu_ns"],
            abs=2,
        )
        assert v["forward_rest_cpu_ns"] == pytest.approx(
            v["forward_cpu_ns"] - v["forward_cast_gemm_attention_cpu_ns"], abs=2
        )
    assert 0 < three < 0.25 * grew, (three, grew)  # "a small part of the growth"
    assert change("forward_rest_cpu_ns") > three
    ops = "forward_ops_per_step"
    assert _values(TUNED, "train_backward")[ops] < _values(NAIVE, "train_backward")[ops]
    # 'That rest runs more operators: R per step against S, among them autocast's outer rows';
    # 'The tuned forward has W such outer rows per step against V same-name pairs in fp32, whose
    # own time ... is X against Y'.
    assert change("forward_rest_ops_per_step") > 0
    assert change("forward_wrappers_per_step") > 100
    assert change("forward_wrapper_own_cpu_ns") > 0
    # 'what else the tuned loop changes, such as the DataLoader's worker processes and the thread
    # that pins their batches': the tuned capture ran with both, the naive one with neither.
    tuned, naive = _settings(TUNED), _settings(NAIVE)
    assert tuned["workers"] > 0 and tuned["pin_memory"] is True
    assert naive["workers"] == 0 and naive["pin_memory"] is False


@GPU
@pytest.mark.parametrize("variant", [NAIVE, TUNED])
def test_the_forwards_casts_gemms_and_attention_are_counted_once(variant: str) -> None:
    """Page 1: 'each operator counted once': no forward cast runs inside a GEMM operator or
    another cast, and no GEMM operator inside a cast, so the three parts do not overlap (the
    casts and GEMMs inside the attention operator are taken out of its own time)."""
    (row,) = _trace_rows(
        variant,
        """
        WITH fwd AS (
          SELECT o.id, o.name FROM guide_train_phase_op AS o
          JOIN guide_train_phase AS p ON p.id = o.phase_id WHERE p.phase = 'forward'
        ),
        gemm AS (SELECT id FROM guide_train_gemm WHERE phase = 'forward'),
        cast AS (SELECT id FROM fwd WHERE name = 'aten::_to_copy')
        SELECT
          (SELECT COUNT(*) FROM cast AS c WHERE EXISTS (
            SELECT 1 FROM ancestor_slice(c.id) AS a
            WHERE a.id IN (SELECT id FROM gemm) OR a.name = 'aten::_to_copy')) AS cast_nested,
          (SELECT COUNT(*) FROM gemm AS g WHERE EXISTS (
            SELECT 1 FROM ancestor_slice(g.id) AS a
            WHERE a.name = 'aten::_to_copy' OR a.id IN (SELECT id FROM gemm))) AS gemm_nested
        """,
    )
    assert row == {"cast_nested": 0, "gemm_nested": 0}


@GPU
def test_autocasts_wrapper_is_an_outer_row_of_the_same_name() -> None:
    """Page 1: 'some operators appear twice, one inside the other under the same name
    (aten::linear in aten::linear). The outer row is autocast's wrapper, which casts the inputs
    (the casts are its children) and calls the operator again. The attention is one of them, and
    is counted above at its outer row only'. Page 3: 'many of them [the casts] sit inside an outer
    row that bears the name of the operator they feed'."""
    sql = """
        WITH fwd AS (
          SELECT o.id, o.name FROM guide_train_phase_op AS o
          JOIN guide_train_phase AS p ON p.id = o.phase_id WHERE p.phase = 'forward'
        ),
        outer_row AS (
          SELECT f.id, f.name FROM fwd AS f
          WHERE EXISTS (SELECT 1 FROM slice AS c WHERE c.parent_id = f.id AND c.name = f.name)
        ),
        child AS (
          SELECT o.name AS outer_name, c.name FROM outer_row AS o
          JOIN slice AS c ON c.parent_id = o.id
        )
        SELECT
          (SELECT COUNT(*) FROM outer_row WHERE name = 'aten::linear') AS linear_outer,
          (SELECT COUNT(*) FROM outer_row
            WHERE name = 'aten::scaled_dot_product_attention') AS attention_outer,
          (SELECT COUNT(*) FROM child WHERE outer_name = 'aten::linear'
            AND name NOT IN ('aten::linear', 'aten::to')) AS linear_other_children,
          (SELECT COUNT(*) FROM fwd AS c JOIN slice AS s ON s.id = c.id
            JOIN slice AS t ON t.id = s.parent_id
            WHERE c.name = 'aten::_to_copy' AND t.parent_id IN (SELECT id FROM outer_row))
            AS casts_in_outer_rows
    """
    (tuned,) = _trace_rows(TUNED, sql)
    steps = _steps(TUNED)
    gemms = _values(TUNED, "train_backward")["forward_gemms_per_step"]
    # One wrapper per linear layer (every forward GEMM but the rotary embedding's bmm).
    assert tuned["linear_outer"] == (gemms - 1) * steps
    assert tuned["attention_outer"] == _layers(TUNED) * steps
    assert tuned["linear_other_children"] == 0
    assert (
        tuned["casts_in_outer_rows"] > 0.5 * _values(TUNED, "train_casts")["forward_casts"] * steps
    )
    (naive,) = _trace_rows(NAIVE, sql)
    assert naive["linear_outer"] == 0 and naive["attention_outer"] == 0


def test_the_pace_is_measured_with_the_profiler_recording_shapes() -> None:
    """Pages 1 and 4: 'All of these times are measured with the profiler on, recording every
    operator's shapes (record_shapes=True)'; 'this one measures the pace with the profiler on'."""
    source = (Path(__file__).parents[1] / "generators" / "profiling.py").read_text()
    assert "record_shapes=True" in source
    assert (
        "from generators.profiling import"
        in (Path(__file__).parents[1] / "generators" / "workloads" / "train.py").read_text()
    )


def test_the_h200_capture_predates_use_cache_false() -> None:
    """Page 3: 'In the H200 capture some come from the key-value cache that transformers built
    even in training, because the workload did not yet pass use_cache=False when it was made (it
    does now)'; the cheatsheet: 'the H200 capture's workload did'."""
    from generators.store import sources_changed

    source = (Path(__file__).parents[1] / "generators" / "workloads" / "train.py").read_text()
    assert "forward(input_ids=inputs, use_cache=False)" in source
    assert shown_device(STEP, TUNED) == "cuda"
    assert sources_changed(capture_record(STEP, TUNED)["sources"])


@GPU
def test_set_to_none_also_removes_the_accumulate_grad_additions() -> None:
    """Page 2: 'with zeroed gradients each AccumulateGrad node adds the new gradient into the
    existing .grad, an aten::add_ ..., N per step in the naive loop; with set_to_none=True ... the
    tuned loop's backward runs 0 of these additions'."""
    naive, tuned = _values(NAIVE, "train_backward"), _values(TUNED, "train_backward")
    assert naive["accumulate_grad_adds_per_step"] == naive["accumulate_grad_per_step"]
    assert tuned["accumulate_grad_adds_per_step"] == 0
    assert not _settings(NAIVE)["set_to_none"] and _settings(TUNED)["set_to_none"]


@GPU
def test_pinned_non_blocking_copies_cost_more_cpu_time_here() -> None:
    """Page 2: 'the tuned loop's to_device takes more CPU time than the naive one's: A per step
    against B'."""
    naive, tuned = _values(NAIVE, "train_data"), _values(TUNED, "train_data")
    assert tuned["to_device_cpu_ns"] > naive["to_device_cpu_ns"]
    assert naive["to_device_cpu_ns"] == pytest.approx(
        _phases(NAIVE)["to_device"]["cpu_ns"], rel=0.01
    )


@GPU
def test_fp32_saves_attention_matrices_the_bf16_run_does_not() -> None:
    """Page 3: 'In the fp32 capture's first forward these matrices are allocations of one size,
    which the bf16 capture does not make'; the fp32 attention is the math fallback."""
    s = _settings(MEMORY_FP32)
    model = s["model"]
    matrix = s["batch"] * model["num_attention_heads"] * s["seq"] * s["seq"] * 4
    sql = (
        "SELECT COUNT(*) AS n FROM guide_train_memory AS m "
        f"WHERE m.bytes = {matrix} AND m.ts < (SELECT MIN(ts + dur) FROM guide_train_phase "
        "WHERE phase = 'forward')"
    )
    fp32 = _trace_rows(MEMORY_FP32, sql)[0]["n"]
    bf16 = _trace_rows(MEMORY, sql)[0]["n"]
    assert fp32 >= _layers(MEMORY_FP32) and bf16 == 0, (fp32, bf16)


def test_the_fp32_baseline_does_not_allow_tf32() -> None:
    """Page 3: fp32 training 'usually allows tf32 ..., which this capture does not'."""
    source = (Path(__file__).parents[1] / "generators" / "workloads" / "train.py").read_text()
    assert "set_float32_matmul_precision" not in source and "allow_tf32 = True" not in source


# ---- model-FLOPs utilisation, the optimizer's bytes, compile time, reserved memory ---------------
@GPU
def test_mfu_is_the_gemm_work_over_the_step_at_the_bf16_peak() -> None:
    """Page 3: 'MFU = model FLOPs per step / (step time × dense bf16 peak)', the model FLOPs being
    'the sum of the tables' GFLOP per step' and the step time 'the profiled steps' mean width';
    'The tuned step's GEMMs run at two thirds of the bf16 peak while they run, yet the step turns
    only about one twentieth of the GPU's peak into model work'; 'The compiled step halves the
    step's time for the same GEMMs and about doubles the MFU'; the naive loop's 'share of the
    bf16 peak is lower still'. Page 4: 'about twice the eager step's'."""
    bf16_peak = None
    for variant in (NAIVE, TUNED):
        m = _gpu(variant, "train_mfu")
        gemm = table(STEP, variant, "train_gemm", cpu_ok=False)
        assert m["gemm_gflop_per_step"] == pytest.approx(sum(float(r["gflop"]) for r in gemm), 1e-4)
        assert m["step_mean_ns"] == _values(variant, "train_optimizer")["step_cpu_ns"]
        peak = m["gemm_gflop_per_step"] * 1e9 / (m["step_mean_ns"] * 1e3) / m["mfu_pct"] * 100
        bf16_peak = bf16_peak or peak
        assert peak == pytest.approx(bf16_peak, rel=1e-6)  # one peak, the dense bf16 one
        # 6 x parameters x tokens, with the capture's own model and batch.
        settings = _settings(variant)
        tokens = settings["batch"] * settings["seq"]
        assert m["parameters"] == settings["model"]["parameters"]
        assert m["tokens_per_step"] == tokens
        assert m["six_nt_gflop_per_step"] == pytest.approx(6 * m["parameters"] * tokens / 1e9)
    naive, tuned, compiled = (_gpu(v, "train_mfu") for v in (NAIVE, TUNED, COMPILED))
    assert compiled["gemm_gflop_per_step"] == tuned["gemm_gflop_per_step"]  # the same GEMMs
    assert 4 <= tuned["mfu_pct"] <= 6.5  # "about one twentieth"
    tuned_bf16 = next(
        r
        for r in table(STEP, TUNED, "train_gemm", cpu_ok=False)
        if r["dtype"] == "bf16" and r["phase"] == "forward"
    )
    assert 60 <= float(tuned_bf16["tflops_peak_pct"]) <= 75  # "two thirds"
    assert 0.4 <= compiled["step_mean_ns"] / tuned["step_mean_ns"] <= 0.6  # "halves"
    assert 1.7 <= compiled["mfu_pct"] / tuned["mfu_pct"] <= 2.3  # "about doubles"
    assert naive["mfu_pct"] < tuned["mfu_pct"]  # "lower still"
    # The GEMM count includes the naive loop's attention products, which 6NT leaves out.
    assert naive["gemm_gflop_per_step"] > tuned["gemm_gflop_per_step"]
    # "its second MFU is '–'": the compiled trace has no parameters or tokens to read.
    assert compiled["parameters"] is None and compiled["mfu_six_nt_pct"] is None


@GPU
def test_the_optimizers_bytes_per_parameter_and_bandwidth() -> None:
    """Page 2: the parameters 'of 4 bytes (fp32 ...)'; bytes per parameter per implementation
    (fused: param, grad, exp_avg, exp_avg_sq read, three written: 7 operands); 'All three run at
    a large share of the H200's peak memory bandwidth'; single-tensor and foreach 'three times the
    bytes of the fused update'; 'At about the same bandwidth, the fused update's kernels take a
    little over a third of the time'; both counts read the gradient twice in addcmul_(grad,
    grad), one parameter's element size more than a kernel reading it once; 'The single-tensor
    count comes from the recorded shapes, and it agrees with the per-operator model the other two
    use'; 'A call over the one-element step counters moves a few bytes and is left out'."""
    naive, foreach, fused = (_gpu(v, "train_optimizer_traffic") for v in (NAIVE, FOREACH, TUNED))
    params = _settings(TUNED)["model"]["parameters"]
    for t in (naive, foreach, fused):
        assert t["parameters"] == params and t["parameter_elem_bytes"] == 4
        assert t["optimizer_traffic_bytes"] == pytest.approx(
            t["bytes_per_parameter"] * params, rel=1e-3
        )
        assert 60 <= t["optimizer_bytes_peak_pct"] <= 100  # "a large share"
    assert fused["bytes_per_parameter"] == 7 * 4
    # Single-tensor, from the shapes: lerp 3, two mul 2+2, addcmul 4, sqrt 2, div 2, add 2,
    # addcdiv 4 operands per element (21), the same sum as foreach's per-operator model.
    assert naive["bytes_per_parameter"] == foreach["bytes_per_parameter"] == 21 * 4
    assert naive["counted_calls"] == _values(NAIVE, "train_optimizer")["optimizer_kernels"]
    assert fused["small_list_calls"] == 1  # the step counters' _foreach_add_
    assert foreach["optimizer_traffic_bytes"] == 3 * fused["optimizer_traffic_bytes"]
    bw = [t["optimizer_achieved_bytes_per_s"] for t in (naive, foreach, fused)]
    assert max(bw) / min(bw) < 1.25  # "about the same bandwidth"
    # "a little over a third"
    assert 1 / 3 < fused["optimizer_gpu_ns"] / foreach["optimizer_gpu_ns"] <= 0.45
    assert fused["optimizer_gpu_ns"] == _gpu(TUNED, "train_optimizer")["optimizer_gpu_ns"]


def test_compiling_takes_the_two_warmup_steps_many_steps_worth() -> None:
    """Page 4: 'Those two steps took <warmup_s> of wall-clock time ..., nearly all of it compiling:
    a compiled step afterwards takes <median step>'."""
    v = _values(COMPILED, "capture")
    assert _settings(COMPILED)["warmup_steps_untraced"] == 2
    median_s = _values(COMPILED, "train_backward")["step_median_ns"] / 1e9
    assert v["warmup_s"] > 50 * 2 * median_s  # two steps' own time is a small part of it


@GPU
def test_reserved_against_allocated_and_what_the_forward_keeps() -> None:
    """Page 3: 'At the second step's allocated peak it held <reserved> reserved against
    <allocated> allocated (the most over the two steps: ...)'; the forward keeps <n> blocks, 'The
    largest ... is the size of the logits in fp32 (tokens × vocabulary elements of four bytes)';
    the blocks the logits' size or a multiple of it hold '<logits> of the <kept> kept'."""
    m = _values(MEMORY, "train_memory")
    assert m["device"] == "CUDA"
    assert m["second_peak_reserved_bytes"] > m["second_peak_bytes"]
    assert m["first_peak_reserved_bytes"] > m["first_peak_bytes"]
    assert m["max_reserved_bytes"] >= m["second_peak_reserved_bytes"]
    s = _settings(MEMORY)
    logits = s["batch"] * s["seq"] * s["model"]["vocab_size"]
    assert m["forward_held_largest_bytes"] == 4 * logits
    assert m["logits_held_bytes"] % logits == 0 and m["logits_held_blocks"] >= 1
    assert m["logits_held_bytes"] < m["forward_kept_bytes"]
    assert 0.1 <= m["logits_held_bytes"] / m["forward_kept_bytes"] <= 0.3  # "one of the largest"


def test_the_profiler_off_steps_follow_the_profiled_ones_and_wait_for_nothing() -> None:
    """'After its profiled steps the workload runs more warm steps with the profiler off and
    reads the clock after each one. As in the profiled loop, nothing waits for the GPU between
    steps except the loop's own loss.item()' (page 1), and the table's min, median and max of
    every loop; 'the timed ones follow the profiled ones'."""
    import inspect

    from generators.workloads import train

    main = inspect.getsource(train.main)
    assert main.index("profile_steps(") < main.index("time_steps(train_step")
    loop = inspect.getsource(train.time_steps)
    body = loop[loop.index("for _ in range(count):") : loop.index("synchronize(device)\n    total")]
    assert "synchronize" not in body and "perf_counter()" in body
    for variant in ALL:
        timed = _cpu_record(variant)["settings"]["wall_clock"]
        assert timed["timed_steps"] > 0
        assert 0 < timed["step_min_s"] <= timed["step_median_s"] <= timed["step_max_s"]
        assert _cpu_values(variant, "capture")["step_median_s"] == timed["step_median_s"]


# ---- which statistic, which model, what the profiler leaves open --------------------------------
@GPU
def test_the_training_model_is_a_smaller_one_of_part_4s_architecture() -> None:
    """Page 1: 'this part profiles training steps of a smaller model of Part 4's architecture';
    'as many decoder layers and the same vocabulary as Part 4's model, with a smaller hidden
    size'."""
    train = _settings(NAIVE)["model"]
    llm = capture_record("llm", "eager_b1", cpu_ok=False)["settings"]["model"]
    assert capture_record("llm", "eager_b1", cpu_ok=False)["environment"]["gpu"] == "NVIDIA H200"
    assert train["num_hidden_layers"] == llm["num_hidden_layers"]
    assert train["vocab_size"] == llm["vocab_size"]
    assert train["hidden_size"] < llm["hidden_size"]
    assert train["parameters"] < llm["parameters"]


@GPU
def test_the_phase_tables_are_means_over_steps_that_differ() -> None:
    """Page 1: 'its times are the mean over the five profiled steps, which differ: the naive
    optimizer, for one, is much shorter in the first of them than in the other four (next page,
    which gives its median step)'; the figure's caption: 'The table's means'; page 2: 'The log_loss
    row is the exception, a mean over the five, as the phase tables' rows are'; page 3: the MFU's
    step time is 'the profiled steps' mean width'."""
    assert _steps(NAIVE) == 5  # "the five profiled steps"
    o = _values(NAIVE, "train_optimizer")
    assert _phases(NAIVE)["optimizer"]["cpu_ns"] == pytest.approx(o["optimizer_cpu_ns"], abs=1)
    assert o["optimizer_first_ns"] == o["optimizer_min_ns"] < 0.5 * o["optimizer_median_ns"]
    assert o["optimizer_cpu_ns"] < o["optimizer_median_ns"]  # the first step pulls the mean down
    log_loss = _phases(NAIVE)["log_loss"]["cpu_ns"]  # the phase table's row: a mean
    assert o["log_loss_cpu_ns"] == pytest.approx(log_loss, abs=1)
    for variant in (NAIVE, TUNED):
        assert (
            _gpu(variant, "train_mfu")["step_mean_ns"]
            == _values(variant, "train_casts")["step_cpu_ns"]
        )


@pytest.mark.parametrize("device", ["shown", "cpu"])
def test_the_profiler_share_table_sets_median_against_median(device: str) -> None:
    """Page 1's box on the profiler's own share: 'the step profiled: median' beside 'the step
    with the profiler off: median', for every loop (foreach's from the optimizer's values)."""
    get = _cpu_values if device == "cpu" else _values
    for variant in (NAIVE, TUNED, COMPILED):
        b = get(variant, "train_backward")
        assert b["step_min_ns"] <= b["step_median_ns"] <= b["step_max_ns"], variant
    for variant in (NAIVE, FOREACH, TUNED):
        o = get(variant, "train_optimizer")
        assert o["step_min_ns"] <= o["step_median_ns"] <= o["step_max_ns"], variant
        if variant != FOREACH:
            assert o["step_median_ns"] == get(variant, "train_backward")["step_median_ns"]


@GPU
def test_the_naive_cpu_bar_is_the_longer_yet_the_gpu_paces_the_step() -> None:
    """Page 1's captions: 'In a loop that waits for the GPU every step the CPU bar is always the
    longer: it includes the time the CPU spends blocked in launch calls while the launch queue
    is full and in the loss read while the GPU catches up. What says the GPU sets this step's
    pace is its busy share: nearly all of the step'; the tuned one: 'the GPU bar is now far
    shorter than the CPU bar, and the GPU, busy under a third of the step, waits on the CPU'."""
    totals = {}
    for variant in (NAIVE, TUNED):
        phases = _phases(variant)
        totals[variant] = (
            sum(p["cpu_ns"] for p in phases.values()),
            sum(p["gpu_ns"] or 0 for p in phases.values()),
        )
    cpu, gpu = totals[NAIVE]
    assert gpu < cpu
    assert _values(NAIVE, "train_readback")["reads_per_step"] == 1  # waits every step
    assert _gpu(NAIVE, "train_readback")["read_wait_ns"] > 0
    assert _gpu(NAIVE, "train_optimizer")["optimizer_launch_excess_ns"] > 0  # blocked launches
    assert _gpu(NAIVE, "train_readback")["gpu_busy_pct"] > 90  # "nearly all of the step"
    cpu, gpu = totals[TUNED]
    assert gpu < 0.5 * cpu  # "far shorter"
    assert _gpu(TUNED, "train_readback")["gpu_busy_pct"] < 100 / 3  # "under a third"


@GPU
def test_the_h200_capture_has_no_profiler_off_timings_yet() -> None:
    """Page 1: 'That reading, here and in the pages that follow, is made under the profiler ...
    The H200 capture has no profiler-off timings yet (the cells that say it needs a CUDA
    recapture)'; page 3: 'the profiler-off timings that would give the unprofiled figure need a
    CUDA recapture'; page 4: 'the H200 capture's profiler-off timings (the table's last row)
    await a recapture'. A recapture makes this fail: the pages' wording must change with it."""
    for variant in ALL:
        assert "step_median_s" not in _gpu(variant, "capture"), variant
        assert "step_median_s" not in _settings(variant)["wall_clock"], variant
    # The CPU-paced loops, read under the profiler: the CPU's time exceeds the GPU's.
    assert _gpu(TUNED, "train_readback")["gpu_busy_pct"] < 50
    assert _gpu(COMPILED, "train_compiled")["gpu_busy_pct"] < 50


@GPU
def test_page_1s_cast_counts_include_the_h200_captures_key_value_cache() -> None:
    """Page 1's box on the tuned forward: 'In the H200 capture some of these casts, in both
    loops, and some of the other operators (the cache's concatenations) come from the key-value
    cache that transformers built even in training, because the workload did not yet pass
    use_cache=False when it was made (it does now)'."""
    from generators.store import sources_changed

    source = (Path(__file__).parents[1] / "generators" / "workloads" / "train.py").read_text()
    assert "forward(input_ids=inputs, use_cache=False)" in source
    layers = _layers()
    for variant in (NAIVE, TUNED):
        assert shown_device(STEP, variant) == "cuda"
        assert sources_changed(capture_record(STEP, variant)["sources"]), variant
        kv_heads = _settings(variant)["model"]["num_key_value_heads"]
        (cat,) = _trace_rows(
            variant,
            "SELECT COUNT(*) AS n FROM guide_train_phase_op AS o JOIN slice AS s ON s.id = o.id "
            "JOIN guide_train_phase AS p ON p.id = o.phase_id WHERE p.phase = 'forward' "
            "AND o.name = 'aten::cat' "
            "AND extract_arg(s.arg_set_id, 'args.Input Dims[0][0][0]') = 0 "
            "AND extract_arg(s.arg_set_id, 'args.Input Dims[0][0][1]') IS NULL "
            f"AND extract_arg(s.arg_set_id, 'args.Input Dims[0][1][1]') = {kv_heads}",
        )
        assert cat["n"] == 2 * layers * _steps(variant), variant
        casts = _gpu(variant, "train_casts")
        assert casts["forward_casts"] >= 2 * layers  # the cache's two empty tensors per layer
        assert casts["forward_rest_ops_per_step"] > 2 * layers  # the concatenations among them


@GPU
def test_the_tuned_to_device_takes_longer_for_no_reason_the_trace_shows() -> None:
    """Page 2: 'the tuned loop's to_device takes more CPU time than the naive one's: A per step
    against B (means over the steps). The trace does not show why: its cudaMemcpyAsync calls
    take no longer than the naive loop's, and it makes no synchronisation; the extra time is in
    the operators' own time (aten::to and aten::_to_copy, less what they call) and in the
    label's time outside any operator'."""
    sql = (
        "WITH lab AS (SELECT p.id, p.ts, p.dur, s.track_id, s.depth FROM guide_train_phase AS p "
        "JOIN slice AS s ON s.id = p.id WHERE p.phase = 'to_device'), "
        "inside AS (SELECT lab.id AS label, x.id, x.name, x.dur, x.depth - lab.depth AS rel "
        "FROM lab JOIN slice AS x ON x.track_id = lab.track_id AND x.ts >= lab.ts "
        "AND x.ts + x.dur <= lab.ts + lab.dur AND x.depth > lab.depth), "
        "own AS (SELECT i.id, i.dur - COALESCE((SELECT SUM(c.dur) FROM slice AS c "
        "WHERE c.parent_id = i.id), 0) AS own_ns FROM inside AS i "
        "WHERE i.name IN ('aten::to', 'aten::_to_copy')) "
        "SELECT (SELECT COUNT(*) FROM lab) AS labels, "
        "(SELECT AVG(dur) FROM inside WHERE name = 'cudaMemcpyAsync') AS memcpy_ns, "
        "(SELECT COUNT(*) FROM inside WHERE name = 'cudaStreamSynchronize') AS syncs, "
        "(SELECT SUM(own_ns) FROM own) AS own_ns, "
        "(SELECT SUM(dur) FROM lab) - (SELECT SUM(dur) FROM inside "
        "WHERE rel = 1 AND name LIKE 'aten::%') AS outside_ns"
    )
    naive, tuned = (_trace_rows(v, sql)[0] for v in (NAIVE, TUNED))
    assert naive["labels"] == tuned["labels"] == _steps(NAIVE)
    t_ns, n_ns = (_values(v, "train_data")["to_device_cpu_ns"] for v in (TUNED, NAIVE))
    assert t_ns > n_ns
    assert tuned["memcpy_ns"] <= naive["memcpy_ns"]
    assert tuned["syncs"] == 0 < naive["syncs"]
    assert tuned["own_ns"] > naive["own_ns"]
    assert tuned["outside_ns"] > naive["outside_ns"]
    # Together they are most of the difference.
    grew = (tuned["own_ns"] - naive["own_ns"]) + (tuned["outside_ns"] - naive["outside_ns"])
    assert grew > 0.5 * (t_ns - n_ns) * _steps(NAIVE)


@GPU
def test_adamws_step_counters_are_one_per_parameter_tensor() -> None:
    """Page 3: 'plus a step counter per parameter tensor (N of them)'; the cheatsheet: 'a step
    counter per parameter tensor on the GPU', 'for each of the N parameter tensors'; page 2:
    'Each parameter tensor has a step counter': one gradient, one counter per tensor."""
    tensors = _settings(MEMORY)["model"]["parameter_tensors"]
    assert tensors == _settings(NAIVE)["model"]["parameter_tensors"]
    assert _values(NAIVE, "train_optimizer")["gradients_per_step"] == tensors
    assert _values(NAIVE, "train_backward")["accumulate_grad_per_step"] == tensors
    assert tensors < _settings(MEMORY)["model"]["parameters"] / 1000


@GPU
def test_the_logits_blocks_are_tokens_times_vocabulary_elements_in_any_dtype() -> None:
    """Page 3: 'The blocks that hold tokens × vocabulary elements in any dtype (whose size in bytes
    is a whole multiple of that count), N of them (the logits and what the loss computes from
    them, some of them at bf16's two bytes per element)'."""
    m = _values(MEMORY, "train_memory")
    s = _settings(MEMORY)
    numel = s["batch"] * s["seq"] * s["model"]["vocab_size"]
    sql = (
        "WITH mem AS (SELECT * FROM guide_train_memory WHERE device = 'CUDA'), "
        "fwd AS (SELECT ts AS start_ts, ts + dur AS end_ts FROM guide_train_phase "
        "WHERE phase = 'forward' ORDER BY step LIMIT 1) "
        "SELECT m.bytes FROM mem AS m, fwd WHERE m.ts >= fwd.start_ts AND m.ts < fwd.end_ts "
        f"AND m.bytes >= {numel} AND NOT EXISTS (SELECT 1 FROM mem AS x WHERE x.addr = m.addr "
        "AND x.bytes < 0 AND x.ts > m.ts AND x.ts < fwd.end_ts)"
    )
    blocks = sorted(r["bytes"] for r in _trace_rows(MEMORY, sql) if r["bytes"] % numel == 0)
    assert len(blocks) == m["logits_held_blocks"] and sum(blocks) == m["logits_held_bytes"]
    assert max(blocks) == 4 * numel == m["forward_held_largest_bytes"]  # the fp32 logits
    assert 2 * numel in blocks  # bf16-sized: the SQL counts elements, not fp32 bytes


@GPU
def test_the_steps_work_on_the_roofline() -> None:
    """Page 3, "The step on the roofline": the GEMMs 'well past the ridge' at 'about two thirds of
    the bf16 peak'; attention 'near the ridge, yet ... only a small share of its roof, the
    backward less than the forward'; the optimizer 'less than one operation per byte ... just
    under the bandwidth's slope, using most of the bandwidth', its bytes per parameter those of
    page 2; elementwise work 'further under the slope ... about half to two thirds of the
    bandwidth'; copies 'have no place on these axes'; 'the elementwise work, the copies and the
    optimizer take more [kernel time]' than the GEMMs; In short: 'most of the step's kernel time
    is memory-bound work'; the caption: 'the largest [point] sits under the bandwidth's slope';
    'Below the ridge the % of the roof column equals the % of peak bandwidth'."""
    rows = table(STEP, TUNED, "train_roofline", cpu_ok=False)
    by = {(r["phase"], r["kind"], r["math"]): r for r in rows}

    def num(row: dict[str, str], column: str) -> float:
        return float(row[column])

    bf16_peak = num(by[("forward", "GEMM", "bf16")], "peak_tflops")
    bandwidth = num(rows[0], "peak_bytes_per_s")
    ridge = bf16_peak * 1e12 / bandwidth
    for phase in ("forward", "backward"):
        gemm = by[(phase, "GEMM", "bf16")]
        assert num(gemm, "flop_per_byte") > 2 * ridge  # "well past the ridge"
        assert 60 <= num(gemm, "roof_pct") <= 75  # "about two thirds"
        attention = by[(phase, "attention", "bf16")]
        assert 0.9 * ridge <= num(attention, "flop_per_byte") <= 1.1 * ridge  # "near the ridge"
        assert num(attention, "roof_pct") < 25  # "a small share"
        rest = by[(phase, "elementwise and reductions", "fp32")]
        assert num(rest, "flop_per_byte") < 1
        assert 45 <= num(rest, "bytes_peak_pct") <= 70  # "about half to two thirds"
        assert num(rest, "roof_pct") == pytest.approx(num(rest, "bytes_peak_pct"))
        copies = by[(phase, "copies and fills", "")]
        assert num(copies, "gflop") == 0 and not copies["roof_pct"]  # no place on the axes
    assert num(by[("backward", "attention", "bf16")], "roof_pct") < num(
        by[("forward", "attention", "bf16")], "roof_pct"
    )
    optimizer = by[("optimizer", "optimizer", "fp32")]
    assert num(optimizer, "flop_per_byte") < 1  # "less than one operation per byte"
    assert 50 < num(optimizer, "bytes_peak_pct") <= 100  # "most of the bandwidth"
    traffic = _gpu(TUNED, "train_optimizer_traffic")
    assert num(optimizer, "traffic_bytes") == traffic["optimizer_traffic_bytes"]
    # Every row's work is counted over nearly all of its time, so the rates stand for the row.
    assert all(num(r, "counted_pct") >= 85 for r in rows)

    def kernel_ns(kind: str) -> float:
        return sum(num(r, "kernel_ns") for r in rows if r["kind"] == kind)

    memory_bound = (
        kernel_ns("elementwise and reductions")
        + kernel_ns("copies and fills")
        + kernel_ns("optimizer")
    )
    assert memory_bound > kernel_ns("GEMM")
    plotted = [r for r in rows if r["gflop"] and num(r, "gflop") > 0]
    largest = max(plotted, key=lambda r: num(r, "kernel_ns") * num(r, "counted_pct"))
    assert num(largest, "flop_per_byte") < ridge and largest["kind"] != "GEMM"
    assert memory_bound > 0.5 * sum(num(r, "kernel_ns") for r in rows)  # "most of"
    # "the kernels fill under a third of the profiled step (GPU busy ...)".
    assert _gpu(TUNED, "train_readback")["gpu_busy_pct"] < 100 / 3
    # The table's kernels are the step's: the same count as the phases' table.
    phases = {r["phase"]: r for r in table(STEP, TUNED, "train_phases", cpu_ok=False)}
    for phase in ("forward", "backward", "optimizer"):
        assert sum(num(r, "kernels") for r in rows if r["phase"] == phase) == float(
            phases[phase]["kernels"]
        )
