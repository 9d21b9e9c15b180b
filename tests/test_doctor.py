"""The doctor: every detector fires on a real trace that shows its pattern and stays silent on
one that does not; the command line's formats, exit codes and errors; names from a trace are
escaped in every format; the trust gate that opens every report, and the mechanisms behind it
(dropped step markers recovered, cold first steps, floors, blocking copies on every vendor).

Traces: the guide's own artifacts, the vendored reference traces, and, only where no real trace
shows a pattern (recompilation, CUDA graphs and their capture, communication kernels, hostile
names), the small synthetic traces in tests/data/doctor-traces/ (see the README there).
"""

from __future__ import annotations

import html
import html.parser
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generators.doctor.detectors import (
    DETECTORS_DIR,
    PROSE,
    DetectorError,
    load_detectors,
    parse_detector,
    render_template,
    template_fields,
)
from generators.doctor.examine import Report, device_label, examine, small_share_demotion
from generators.doctor.render import (
    count_text,
    guide_url,
    id_list,
    page_headings,
    render_html,
    render_json,
    render_markdown,
    render_text,
)
from generators.tp import open_trace
from tests import reference_traces as ref
from tests.doctor_cli import run_doctor

REPO = Path(__file__).resolve().parent.parent
CUDA = REPO / "artifacts" / "cuda"
CPU = REPO / "artifacts" / "cpu"
SYNTHETIC = REPO / "tests" / "data" / "doctor-traces"

# (detector, trace it must fire on, trace it must stay silent on). Every detector is listed.
CASES = {
    "overhead-bound-steps": (CUDA / "matmul_add/small_warm", CUDA / "mlp/eager"),
    "gpu-idle-in-steps": (CUDA / "matmul_add/small_warm", CUDA / "matmul_add/large_cold"),
    "sync-in-loop": (ref.MI300X, CUDA / "matmul_add/small_warm"),
    "host-device-copies": (ref.A100_ADD, CUDA / "matmul_add/small_warm"),
    "hidden-copies": (CUDA / "attention/naive", CUDA / "attention/naive_inplace"),
    "fp32-gemm": (CUDA / "matmul_add/large_fp32", CUDA / "matmul_add/large_cold"),
    "launch-bound": (CUDA / "matmul_add/small_warm", CUDA / "matmul_add/large_cold"),
    "attention-materialised": (CUDA / "attention/naive", CUDA / "attention/sdpa_flash"),
    "compile-wrappers": (CUDA / "matmul_add/compiled", CUDA / "matmul_add/large_cold"),
    "recompilation": (SYNTHETIC / "recompiled.json", CUDA / "matmul_add/compiled"),
    "cuda-graphs": (SYNTHETIC / "graphs-and-comm.json", CUDA / "matmul_add/small_warm"),
    "profiler-artefacts": (CUDA / "matmul_add/startup", CPU / "llm/eager_b1"),
    "optimizer-single-tensor": (CPU / "train/naive", ref.V100),
    "zero-grad-zeroing": (CPU / "train/naive", CPU / "train/tuned"),
    "dataloader-wait": (CPU / "train/naive", ref.V100),
    "comm-exposed": (SYNTHETIC / "graphs-and-comm.json", ref.V100),
}
#: Thresholds lowered for a firing case, where the real trace shows the pattern below the
#: default threshold (the case still proves the SQL finds it).
FIRE_OVERRIDES = {"dataloader-wait": {"data_pct_min": 0.1}}


def _trace(path: Path) -> Path:
    return path / "trace.json.gz" if path.is_dir() else path


_reports: dict[tuple[Path, str], Report] = {}


def doctor(path: Path, overrides: dict | None = None) -> Report:
    """The report on a trace (each trace opened once per test session)."""
    key = (_trace(path), json.dumps(overrides, sort_keys=True))
    if key not in _reports:
        with open_trace(_trace(path)) as tp:
            _reports[key] = examine(tp, _trace(path), load_detectors(), overrides=overrides)
    return _reports[key]


def _finding(report: Report, det_id: str):
    return next((f for f in report.findings if f.detector.id == det_id), None)


def test_every_detector_has_a_firing_and_a_silent_case() -> None:
    assert sorted(CASES) == sorted(d.id for d in load_detectors())


@pytest.mark.parametrize("det_id", sorted(CASES))
def test_detector_fires(det_id: str) -> None:
    fire, _ = CASES[det_id]
    overrides = {det_id: FIRE_OVERRIDES[det_id]} if det_id in FIRE_OVERRIDES else None
    report = doctor(fire, overrides)
    assert not report.failed, report.failed
    finding = _finding(report, det_id)
    assert finding is not None, f"{det_id} stayed silent on {fire}"
    assert finding.rows and finding.cost_ns >= 0
    assert "{" not in finding.seen, finding.seen  # every placeholder filled
    assert "{" not in finding.seen_ja and finding.seen_ja, finding.seen_ja
    assert "[[" not in finding.seen + finding.seen_ja  # optional parts resolved
    for row in finding.rows:
        assert row["dur"] is None or row["dur"] >= 0
        assert row["location"] and row["what"]


@pytest.mark.parametrize("det_id", sorted(CASES))
def test_detector_stays_silent(det_id: str) -> None:
    _, silent = CASES[det_id]
    report = doctor(silent)
    assert not report.failed, report.failed
    assert _finding(report, det_id) is None, f"{det_id} fired on {silent}"
    assert det_id in {d.id for d in report.silent}, f"{det_id} did not run on {silent}"


def test_a_clause_without_its_value_is_left_out() -> None:
    """A ``[[...]]`` part of a ``seen`` template is said only when its placeholders have values:
    GPU time on a CPU-only capture is dropped from the sentence, not printed as "–"."""
    template = "{count} operators ({sum(cost_ns)} of CPU[[; GPU {sum(gpu_ns)}]])."

    def fmt(value: object, column: str) -> str:
        return "–" if value is None else str(value)

    cpu_only = [{"cost_ns": 5, "gpu_ns": None}, {"cost_ns": 7, "gpu_ns": None}]
    assert render_template(template, cpu_only, {}, fmt) == "2 operators (12 of CPU)."
    with_gpu = [{"cost_ns": 5, "gpu_ns": 3}, {"cost_ns": 7, "gpu_ns": None}]
    assert render_template(template, with_gpu, {}, fmt) == "2 operators (12 of CPU; GPU 3)."


def test_a_cpu_capture_says_no_gpu_time_in_its_findings() -> None:
    """The guide's own CPU capture of hand-written attention: the finding speaks of CPU time and
    leaves the GPU time out, in both languages (a CUDA capture of it states both)."""
    for device, has_gpu in (("cpu", False), ("cuda", True)):
        report = doctor(REPO / "artifacts" / device / "attention" / "naive" / "trace.json.gz")
        finding = _finding(report, "attention-materialised")
        assert finding is not None, device
        assert ("GPU time launched" in finding.seen) is has_gpu, finding.seen
        assert ("GPU" in finding.seen_ja) is has_gpu, finding.seen_ja
        assert "–" not in finding.seen + finding.seen_ja


def test_exact_counts_on_known_traces() -> None:
    """Counts read off the traces independently (trace JSON, the guide's own pages)."""
    # The naive attention's out-of-place masked_fill clones the scores once per step (3 steps).
    hidden = _finding(doctor(CUDA / "attention/naive"), "hidden-copies")
    assert len(hidden.rows) == 3
    assert {r["operator"] for r in hidden.rows} == {"aten::masked_fill"}
    # The A100 benchmark copies its 16 inputs from pageable memory.
    copies = _finding(doctor(ref.A100_ADD), "host-device-copies")
    assert sum(r["pageable"] for r in copies.rows) == 16
    # The BERT inference step reads one value back (.item()): one sync, 7.6 µs, under the
    # floor by default; with the floor at zero it is the one sync inside the recovered step.
    sync = _finding(doctor(ref.H100_BERT, {"sync-in-loop": {"blocked_ns_min": 0}}), "sync-in-loop")
    assert any("aten::_local_scalar_dense" in r["what"] for r in sync.rows)
    # The synthetic trace's graph launches replay four kernels each, twice.
    graphs = _finding(doctor(SYNTHETIC / "graphs-and-comm.json"), "cuda-graphs")
    assert [r["kernels"] for r in graphs.rows] == [4, 4]


def test_shares_are_shares() -> None:
    """No share above 100 %, whatever the trace."""
    for det_id, (fire, _) in CASES.items():
        overrides = {det_id: FIRE_OVERRIDES[det_id]} if det_id in FIRE_OVERRIDES else None
        for f in doctor(fire, overrides).findings:
            for row in f.rows:
                for col, value in row.items():
                    if col.endswith("_pct") and value is not None:
                        assert 0 <= value <= 100 + 1e-9, (f.detector.id, col, value)


def test_limitations_are_reported() -> None:
    cpu = doctor(CPU / "llm/eager_b1")
    ids = {lim.id for lim in cpu.limitations}
    assert "no-gpu" in ids
    gpu_detectors = {d.id for d in load_detectors() if "gpu" in d.needs}
    assert gpu_detectors <= {d.id for d in cpu.skipped}
    bert = doctor(ref.H100_BERT)
    ids = {lim.id for lim in bert.limitations}
    # Its one ProfilerStep#N was dropped by the importer and is recovered from the file.
    assert {"dropped-events", "steps", "with-stack"} <= ids and "no-steps" not in ids
    a100 = doctor(ref.A100_ADD)
    assert {"unknown-gpu", "no-shapes"} <= {lim.id for lim in a100.limitations}
    # Without shapes the math backend is still found by name: the detector runs.
    assert "attention-materialised" in {d.id for d in a100.silent}


# ------------------------------------------------------------------ the trust gate


def _trust(report: Report, line_id: str):
    return next((lim for lim in report.limitations if lim.id == line_id), None)


def test_dropped_step_markers_are_recovered_from_the_file() -> None:
    """The BERT trace's only ProfilerStep#N partly overlaps a python_function event, so the
    importer drops it: the doctor reads it back, and the profiler's closing
    cudaDeviceSynchronize after the step is no longer a sync "in the loop"."""
    report = doctor(ref.H100_BERT, {"sync-in-loop": {"blocked_ns_min": 0}})
    dropped = _trust(report, "dropped-events")
    assert "user_annotation: 1" in dropped.text and "ProfilerStep#N" in dropped.text
    assert "ProfilerStep#N" in dropped.text_ja
    assert _trust(report, "no-steps") is None
    assert "One real profiled step" in _trust(report, "steps").text
    sync = _finding(report, "sync-in-loop")
    # The syncs listed lie inside the recovered step: two of the trace's three (the closing one
    # comes after the step).
    assert len(sync.rows) == 2
    assert all(r["what"].startswith("ProfilerStep#6: ") for r in sync.rows)


def test_dropped_events_are_named_by_kind_with_what_they_weaken() -> None:
    """The V100 trace loses 8 kernels and 288 launches to the importer (test_tp.py counts them
    from the JSON): the gate says so by kind, and the kernels' loss weakens the detectors that
    add up GPU work."""
    line = _trust(doctor(ref.V100), "dropped-events")
    assert "kernel: 8" in line.text and "cuda_runtime: 288" in line.text
    assert "8 of them ran on the GPU" in line.text and "kernel 8 個" in line.text_ja
    assert line.level == "caution"
    assert {"fp32-gemm", "gpu-idle-in-steps", "hidden-copies"} <= set(line.weakens)


def test_with_stack_is_named_with_what_it_weakens() -> None:
    line = _trust(doctor(ref.H100_BERT), "with-stack")
    assert line is not None and "with_stack=True" in line.text and line.text_ja
    cpu_time = {d.id for d in load_detectors() if "cpu-time" in d.relies}
    assert set(line.weakens) == cpu_time and "launch-bound" in cpu_time
    assert _trust(doctor(ref.A100_ADD), "with-stack") is None


def test_a_stub_step_is_not_a_step() -> None:
    """Two ProfilerStep#N on an MI250: #1 (9.29 ms) runs the training step, #2 (49 µs) holds no
    operator, the stub the profiler's stop leaves. It is no warm step to call #1 cold against:
    one real step, so the per-step checks' findings (about 2.7 ms of CPU against 0.1 ms of GPU
    work) are information with the reason, and none of them is listed as silent."""
    report = doctor(ref.MI250_TOY)
    steps = _trust(report, "steps")
    assert "One real profiled step" in steps.text and "ProfilerStep#2 (49 µs)" in steps.text
    assert "ran cold" not in steps.text and "ProfilerStep#2" in steps.text_ja
    per_step = {d.id for d in load_detectors() if d.per_step and d.severity != "info"}
    assert set(steps.weakens) == per_step
    assert {"overhead-bound-steps", "launch-bound", "gpu-idle-in-steps"} <= per_step
    for det_id in ("overhead-bound-steps", "launch-bound"):
        finding = _finding(report, det_id)
        assert finding is not None and finding.severity == "info", det_id
        assert "one real profiled step" in finding.demoted[0]
    assert not per_step & {d.id for d in report.silent}
    # One definition of a cold step: the profiler's own marks do not call #1 cold either.
    artefacts = _finding(report, "profiler-artefacts")
    assert artefacts is None or all(r["kind"] != "cold first step" for r in artefacts.rows)


def test_blocking_copies_are_syncs_on_every_vendor() -> None:
    """ROCm's synchronous copy is hipMemcpyWithStream: it blocks the CPU like cudaMemcpy."""
    report = doctor(ref.MI250_TOY, {"sync-in-loop": {"blocked_ns_min": 0}})
    sync = _finding(report, "sync-in-loop")
    assert sync is not None and any("hipMemcpyWithStream" in r["what"] for r in sync.rows)
    # An async copy into pageable memory returns only once the copy is done: the recommendation
    # rank's 8 cudaMemcpyAsync whose copy is Device -> Pageable, 1,077 µs by the JSON.
    pageable = _finding(doctor(ref.GPU_UNLISTED), "sync-in-loop")
    copies = [r for r in pageable.rows if "cudaMemcpyAsync in " in r["what"]]
    assert len(copies) == 8 and sum(r["blocked_ns"] for r in copies) == 1_077_000


def test_a_sync_costs_the_gpu_idle_it_leaves_at_most_what_it_blocked() -> None:
    """The hand-written trace's second step: cudaDeviceSynchronize at 2180 µs holds the CPU 65 µs
    while the kernel it waits for runs to 2230 µs, and the step ends at 2260 µs with no more GPU
    work. From its start to the step's end the GPU idles 30 µs: that is its cost, not the 65 µs
    it blocked (the GPU was busy for 50 of them)."""
    trace = Path(__file__).parent / "data" / "mini-traces" / "steps_idle_gap_sync.json"
    sync = _finding(doctor(trace, {"sync-in-loop": {"blocked_ns_min": 0}}), "sync-in-loop")
    [row] = sync.rows
    assert (row["blocked_ns"], row["waited_gpu_ns"], row["cost_ns"]) == (65_000, 50_000, 30_000)


def test_shares_have_absolute_floors() -> None:
    """A share alone is no finding: the BERT step's 7.6 µs of sync stays silent."""
    assert _finding(doctor(ref.H100_BERT), "sync-in-loop") is None
    for det in load_detectors():
        shares = [p for p in det.params if p.name.endswith("_pct_min")]
        floors = [p for p in det.params if p.name.endswith("_ns_min")]
        if shares and det.severity != "info":
            assert floors, f"{det.id} has a share threshold and no absolute floor"


def test_a_trace_without_steps_shows_loop_findings_as_information() -> None:
    """The A100 benchmark has no step markers: its 16 pageable uploads may be one-time work."""
    report = doctor(ref.A100_ADD)
    copies = _finding(report, "host-device-copies")
    assert copies.severity == "info" and copies.detector.severity == "warning"
    assert copies.demoted and "no step markers" in copies.demoted[0] and copies.demoted[1]
    assert report.worst() != "error"
    data = json.loads(render_json([report], "https://x.test/"))[0]
    listed = next(f for f in data["findings"] if f["id"] == "host-device-copies")
    assert listed["severity"] == "info" and listed["detector_severity"] == "warning"


def test_idle_time_inside_the_allocator_is_not_a_host_gap() -> None:
    """The A100 benchmark's first convolution waits seconds in cudaFree (cuDNN's workspace):
    the GPU idles while the CPU is in the allocator, which is one-time work, not launch
    overhead to fix with compilation or CUDA graphs."""
    idle = _finding(doctor(ref.A100_ADD), "gpu-idle-in-steps")
    top = idle.breakdown[0]
    assert top.value == "allocator" and top.cost_ns > 0.9 * idle.cost_ns
    assert top.value_ja == "アロケータ"


def test_fp32_gemms_name_their_operators_and_a_volta_gets_no_tf32_advice() -> None:
    """The V100 ResNet's fp32 volta_sgemm kernels are mostly launched by cuDNN convolutions
    (aten::cudnn_convolution, aten::convolution_backward): the finding says so, and on compute
    capability 7.0, which has no TF32, it advises fp16 autocast only."""
    gemm = _finding(doctor(ref.V100), "fp32-gemm")
    convolutions = sum(r["convolutions"] or 0 for r in gemm.rows)
    matmuls = sum(r["matmuls"] or 0 for r in gemm.rows)
    # 405 of the 420 under aten::cudnn_convolution / aten::convolution_backward (trace JSON).
    assert (convolutions, matmuls, len(gemm.rows)) == (405, 15, 420)
    assert "under a convolution: " in gemm.seen and "畳み込みの下" in gemm.seen_ja
    advice = gemm.rows[0]["advice"]
    assert "float16" in advice and "no TF32" in advice and "TF32" not in advice.split("(")[0]
    assert advice in gemm.seen and gemm.rows[0]["advice_ja"] in gemm.seen_ja
    assert "float16" in gemm.rows[0]["advice_ja"] and "TF32 なし" in gemm.rows[0]["advice_ja"]
    # An Ampere GPU keeps the TF32 advice.
    ampere = _finding(doctor(CUDA / "matmul_add/large_fp32"), "fp32-gemm")
    assert "TF32" in ampere.rows[0]["advice"] and "torch.float16" not in ampere.rows[0]["advice"]


def test_a_fused_optimizer_is_not_called_per_parameter() -> None:
    """A CPU-side capture whose `Optimizer.step#FusedAdam.step` runs 257 aten::add_ on 0-dim
    int64 tensors (Input Dims [[],[],[]], Input type long): FusedAdam's step counters, named by
    the label and by the shapes, not a per-parameter update."""
    report = doctor(ref.A100_CPU_SIDE)
    assert _finding(report, "optimizer-single-tensor") is None
    assert "optimizer-single-tensor" in {d.id for d in report.silent}


def test_kernels_without_device_properties_are_a_gpu_of_unknown_model() -> None:
    """1,154 kernels and no deviceProperties: not "no GPU"; and without ac2g flows the
    correlation ids tie every kernel to its launch, so the checks that follow launches run and
    the GPU's idle gaps have causes."""
    report = doctor(ref.GPU_UNLISTED)
    assert report.device == "GPU model unknown" and report.gpu is None
    text = render_text([report], "https://x.test/")
    assert "GPU model unknown" in text and "no GPU" not in text
    assert "GPU のモデルは不明" in render_text([report], "https://x.test/", lang="ja")
    assert "1154 kernels" in _trust(report, "no-device").text
    assert "gpu-idle-in-steps" not in {d.id for d in report.skipped}
    idle = _finding(report, "gpu-idle-in-steps")
    causes = {r["cause"] for r in idle.rows} if idle is not None else set()
    assert "no flows" not in causes and causes & {"host", "other"}
    assert _trust(report, "no-flows") is None
    skipped = {d.id for d in report.skipped}
    assert not skipped & {"cuda-graphs", "hidden-copies", "launch-bound", "overhead-bound-steps"}


def test_an_unnamed_gpu_is_described_by_what_its_properties_say() -> None:
    """vLLM's ROCm traces list their GPUs with empty names but their compute capability,
    multiprocessors and memory: the label keeps the model unknown and says what is known."""
    facts = {"gpu_name": "", "gpu_activities": 425, "mtia_events": 0}
    unnamed = facts | {
        "gpu_compute": "9.4",
        "gpu_multiprocessors": 304,
        "gpu_memory_bytes": 206141652992,
    }
    assert device_label(unnamed) == (
        "GPU model unknown (compute capability 9.4, 304 multiprocessors, 192 GiB)",
        "GPU のモデルは不明（計算能力 9.4、マルチプロセッサ 304 個、192 GiB）",
    )
    assert device_label(facts) == ("GPU model unknown", "GPU のモデルは不明")


def test_all_to_all_traffic_gets_exchange_advice_on_one_rank_of_many() -> None:
    """Rank 0 of 128 (distributedInfo): its 10 communication kernels are all
    ncclKernel_SendRecv (NCCL's all-to-all), so the advice is the exchange's, not DDP's
    bucket_cap_mb; and the trust gate says exposed time may be the other ranks' lateness."""
    report = doctor(ref.GPU_UNLISTED)
    comm = _finding(report, "comm-exposed")
    assert {r["collective"] for r in comm.rows} == {"exchange"} and len(comm.rows) == 10
    assert all("SendRecv" in r["what"] for r in comm.rows)
    assert "async_op=True" in comm.seen and "bucket_cap_mb" not in comm.seen
    assert "async_op=True" in comm.seen_ja
    line = _trust(report, "one-rank")
    assert "one rank of 128" in line.text and "other ranks' lateness" in line.text
    assert "128" in line.text_ja and line.weakens == ("comm-exposed",)
    # All-reduce kernels keep DDP's advice; a trace without distributedInfo has no such line.
    synthetic = doctor(SYNTHETIC / "graphs-and-comm.json")
    assert "bucket_cap_mb" in _finding(synthetic, "comm-exposed").seen
    assert _trust(synthetic, "one-rank") is None and _trust(doctor(ref.V100), "one-rank") is None


def test_a_graph_capture_is_not_execution() -> None:
    report = doctor(SYNTHETIC / "graph-capture.json")
    line = _trust(report, "graph-capture")
    assert line is not None and "recorded, not run" in line.text and line.text_ja
    execution = {d.id for d in load_detectors() if "execution" in d.relies}
    assert execution <= {d.id for d in report.skipped} and set(line.skipped) == execution


def test_a_warning_under_one_percent_of_the_loop_is_information() -> None:
    """Rank 0 of the recommendation job: its host-device copies take 893 µs of a 1.23 s loop,
    81 µs of it with no kernel beside them, so they are information with the reason; its
    exposed communication (337 ms) stays a warning. The floor is a share of the loop's time,
    whatever the detector's own measure."""
    report = doctor(ref.GPU_UNLISTED)
    copies = _finding(report, "host-device-copies")
    assert copies.severity == "info" and copies.detector.severity == "warning"
    assert "81.0 µs of the loop's 1.23 s (under 0.1 %; the floor" in copies.demoted[0]
    assert sum(r["copy_ns"] for r in copies.rows) == 893_000
    # A pageable copy costs its whole length (the CPU waits for it); a pinned one only the part
    # no kernel on its GPU runs beside.
    pageable = [r for r in copies.rows if r["pageable"]]
    pinned = [r for r in copies.rows if not r["pageable"]]
    assert len(pageable) == 24 and all(r["cost_ns"] == r["copy_ns"] for r in pageable)
    assert pinned and sum(r["cost_ns"] for r in pinned) < sum(r["copy_ns"] for r in pinned)
    assert "0.1 % 未満" in copies.demoted[1]
    assert _finding(report, "comm-exposed").severity == "warning"
    # The boundary: a cost of exactly 1 % of the loop keeps its severity.
    assert small_share_demotion(1_000, 100_000) is None
    assert small_share_demotion(999, 100_000) is not None
    assert small_share_demotion(999, None) is None


def test_a_trace_s_only_step_is_a_step_even_without_operators() -> None:
    """A CPU-only gloo rank whose one ProfilerStep#551 (210 ms) runs no operator, only
    gloo:all_reduce annotations: a step spent waiting, not the profiler's stub (which is the last
    of several), so the trace has one step, not "no step markers"."""
    report = doctor(ref.CPU_ONLY_GLOO)
    assert _trust(report, "no-steps") is None
    steps = _trust(report, "steps")
    assert steps is not None and "One real profiled step" in steps.text


def test_an_optimizer_label_inside_another_is_one_step() -> None:
    """A combined optimizer's label holds the inner optimizer's: each step's 24 updates are one
    optimizer step, not two (the MTIA rank of HTA's counted its 4.36 s three times)."""
    finding = _finding(doctor(SYNTHETIC / "combined-optimizer.json"), "optimizer-single-tensor")
    assert [r["what"].split(":")[0] for r in finding.rows] == [
        "Optimizer.step#CombinedOptimizer.step"
    ] * 2
    assert all(r["operators"] == 24 for r in finding.rows)


def test_a_large_exposure_is_reported_whatever_its_share_of_the_communication() -> None:
    """The recommendation rank's 337 ms of exposed communication is more than 5 % of its trace:
    reported even where the share of the communication's own time would not be (hta-diff-test,
    29.2 % of 251 ms, was silent under the 30 % rule); with both shares out of reach, silent."""
    only_trace_share = {"comm-exposed": {"exposed_pct_min": 101}}
    assert _finding(doctor(ref.GPU_UNLISTED, only_trace_share), "comm-exposed") is not None
    neither = {"comm-exposed": {"exposed_pct_min": 101, "exposed_trace_pct_min": 101}}
    assert _finding(doctor(ref.GPU_UNLISTED, neither), "comm-exposed") is None


def test_a_real_hip_graph_capture_is_not_execution() -> None:
    """SGLang capturing its decode step on ROCm: about 1,500 runtime calls recorded between
    hipStreamBeginCapture and hipStreamEndCapture, two kernels run, no graph launch. The
    launches inside the capture ran nothing, so the checks of how work ran do not run."""
    report = doctor(ref.MI300X_GRAPH_CAPTURE)
    line = _trust(report, "graph-capture")
    assert line is not None and "no graph launch replays them" in line.text
    execution = {d.id for d in load_detectors() if "execution" in d.relies}
    assert execution <= {d.id for d in report.skipped}
    assert not {f.detector.id for f in report.findings} & execution


def test_a_rocm_graph_replay_links_its_kernels_to_the_graph_launch() -> None:
    """One hipGraphLaunch replays 544 of the trace's 555 kernels; ROCm writes their flows as ends
    only, so the replayed kernels are linked by the launch's correlation id (JSON: 544 kernels
    carry the hipGraphLaunch's id 'correlation'). Before, no graph launch was seen at all."""
    report = doctor(ref.MI300X_GRAPH_REPLAY)
    graphs = _finding(report, "cuda-graphs")
    assert graphs is not None and [r["kernels"] for r in graphs.rows] == [544]
    with open_trace(ref.MI300X_GRAPH_REPLAY) as tp:
        links = tp.query(
            "INCLUDE PERFETTO MODULE guide.kineto; "
            "SELECT r.name, COUNT(*) AS n FROM guide_kineto_launch_link AS l "
            "JOIN slice AS r ON r.id = l.launch_id GROUP BY 1 ORDER BY 1"
        )
    by_launch = {row.name: row.n for row in links}
    assert by_launch["hipGraphLaunch"] == 544
    # Every kernel and copy has its launch: the 555 kernels and 3 copies.
    assert sum(by_launch.values()) == 555 + 3


def test_the_trust_gate_opens_every_format() -> None:
    report = doctor(ref.H100_BERT)
    for lang, heading in (
        ("en", "Can I trust this trace?"),
        ("ja", "このトレースは信頼できるか？"),
    ):
        text = render_text([report], "https://x.test/", lang=lang)
        assert text.index(heading) < text.index("1. ")
        md = render_markdown([report], "https://x.test/", lang=lang)
        assert md.index(heading) < md.index("### ", md.index(heading) + 5)
        page = render_html([report], "https://x.test/", lang=lang, with_findings=False)
        assert page.index(heading) < page.index('class="finding')
    data = json.loads(render_json([report], "https://x.test/"))[0]
    assert list(data).index("trust") < list(data).index("findings")
    weakened = {d for t in data["trust"] for d in t["detectors_weakened"]}
    assert "launch-bound" in weakened


def test_the_browser_page_runs_the_trust_gate() -> None:
    from generators.doctor.browser import browser_plan, file_check_table_sql
    from generators.doctor.trust import check_file
    from generators.tp import rows_of

    for lang in ("en", "ja"):
        plan = browser_plan("https://x.test/", lang=lang)
        with open_trace(ref.MI250_TOY) as tp:
            tp.query(file_check_table_sql(check_file(ref.MI250_TOY), None) + plan["definitions"])
            cols, rows = rows_of(tp, plan["trust"])
        assert cols[1:] == ["reason", "weakens"]
        ids = {r[0] for r in rows}
        # One real step (the stub #2 left out): no cold step to name, and the per-step
        # findings are information, as in the command line's report.
        assert "steps" in ids and "cold-step" not in ids, rows
        with open_trace(ref.MI250_TOY) as tp:
            tp.query(plan["definitions"])
            _, found = rows_of(tp, plan["summary"])
        severity = {r[0]: r[1] for r in found}
        assert severity["overhead-bound-steps"] == severity["launch-bound"] == "info", found


def test_findings_ordered_by_cost() -> None:
    report = doctor(CUDA / "matmul_add/small_warm")
    costs = [f.cost_ns for f in report.findings if f.detector.severity != "info"]
    assert costs == sorted(costs, reverse=True)
    assert all(f.detector.severity == "info" for f in report.findings[len(costs) :])


# ------------------------------------------------------------------ detector files


def test_detector_files_follow_the_format(tmp_path: Path) -> None:
    detectors = load_detectors()
    assert len({d.id for d in detectors}) == len(detectors)
    bad = tmp_path / "bad_one.sql"
    bad.write_text("-- id: bad-one\n-- title: x\nSELECT 1\n")
    with pytest.raises(DetectorError, match=r"bad_one\.sql: header has no 'severity'"):
        parse_detector(bad)
    bad.write_text(DETECTORS_DIR.joinpath("fp32_gemm.sql").read_text().replace("fp32-gemm", "x"))
    with pytest.raises(DetectorError, match="id 'x' should be 'bad-one'"):
        parse_detector(bad)


JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
PROSE_FIELDS = ("title", "seen", "why", "try_", "after", "false_positives")


def test_every_detector_has_its_prose_in_japanese() -> None:
    assert len(PROSE) == len(PROSE_FIELDS)
    for det in load_detectors():
        for name in PROSE_FIELDS:
            ja = det.text(name, "ja")
            if det.text(name) == "—":  # nothing to say in either language
                assert ja == "—", (det.id, name)
                continue
            assert JAPANESE.search(ja), (det.id, name, ja)
            assert "  " not in ja, (det.id, name)  # continuation lines joined cleanly
            # Japanese sets no space beside 「。」「、」「（」, even where a line break fell there.
            assert not re.search(r"[。、（）] | [（）。、]", ja), (det.id, name, ja)
        # The same numbers in both languages: the same placeholders, each filled the same way.
        # (A Japanese template may name a column's Japanese twin: {first(advice_ja)}.)
        seen_ja = re.sub(r"(\w+)_ja\)", r"\1)", det.text("seen", "ja"))
        assert set(template_fields(det.seen)) == set(template_fields(seen_ja))
        assert set(re.findall(r"\{[^{}]*\}", det.seen)) == set(
            re.findall(r"\{[^{}]*\}", seen_ja)
        ), det.id
        for p in det.params:
            assert JAPANESE.search(p.meaning("ja")), (det.id, p.name)


def test_japanese_fields_are_checked(tmp_path: Path) -> None:
    source = DETECTORS_DIR.joinpath("launch_bound.sql").read_text(encoding="utf-8")
    bad = tmp_path / "launch_bound.sql"
    # A Japanese value's lines join without a space between Japanese characters, nor beside
    # full-width punctuation; Japanese and Latin letters keep theirs.
    bad.write_text(source.replace("-- title_ja: ", "-- title_ja: 起動\n--   ", 1), encoding="utf-8")
    assert parse_detector(bad).text("title", "ja").startswith("起動起動")
    bad.write_text(
        source.replace("-- title_ja: ", "-- title_ja: 起動。\n--   CPU、\n--   GPU\n--   ", 1),
        encoding="utf-8",
    )
    assert parse_detector(bad).text("title", "ja").startswith("起動。CPU、GPU ")
    no_twin = re.sub(r"^-- why_ja: .*\n(--   .*\n)*", "", source, flags=re.M)
    bad.write_text(no_twin, encoding="utf-8")
    with pytest.raises(DetectorError, match="header has no 'why_ja'"):
        parse_detector(bad)
    bad.write_text(
        source.replace("自体は {sum(kernel_ns)}", "自体は {sum(cost_ns)}"), encoding="utf-8"
    )
    with pytest.raises(DetectorError, match="seen_ja must use the placeholders of seen"):
        parse_detector(bad)
    bad.write_text(re.sub(r"^-- param_ja: .*\n", "", source, flags=re.M), encoding="utf-8")
    with pytest.raises(DetectorError, match="param_ja must translate each param"):
        parse_detector(bad)
    # Every column a report may show has a title in both languages, the breakdown's too.
    bad.write_text(source.replace("kernel=カーネル, ", ""), encoding="utf-8")
    with pytest.raises(DetectorError, match="columns_ja must title exactly the columns"):
        parse_detector(bad)
    bad.write_text(re.sub(r"^-- columns(_ja)?: .*\n", "", source, flags=re.M), encoding="utf-8")
    with pytest.raises(DetectorError, match="must title the breakdown column 'kernel'"):
        parse_detector(bad)


def test_reports_in_japanese() -> None:
    report = doctor(CUDA / "matmul_add/small_warm")
    finding = report.findings[0]
    title_ja = finding.detector.text("title", "ja")
    for render in (render_text, render_markdown):
        out = render([report], "https://x.test/", lang="ja")
        assert title_ja in out and finding.seen_ja in out
        assert finding.detector.title not in out and finding.seen not in out
    page = render_html([report], "https://x.test/", lang="ja")
    assert '<html lang="ja">' in page and "Perfetto で開く" in page
    assert html.escape(title_ja) in page and html.escape(finding.seen_ja) in page
    english = render_html([report], "https://x.test/")
    assert '<html lang="en">' in english and "Open in Perfetto" in english
    assert title_ja not in english
    # Lists of detectors read as Japanese lists; counts are grouped as the seen line's are.
    silent = [d.id for d in report.silent]
    assert len(silent) > 1
    assert "確認済み、所見なし: " + "、".join(silent) in render_text([report], "", lang="ja")
    assert "Checked, nothing found: " + ", ".join(silent) in render_text([report], "")
    assert id_list(["a", "b"], "ja") == "a、b" and id_list(["a", "b"]) == "a, b"
    assert count_text(46041, "ja") == "46,041" and count_text(46041) == "46041"


def test_guide_links_point_at_existing_sections() -> None:
    for det in load_detectors():
        if det.guide_page == "check-your-trace.md":
            assert det.guide_anchor == det.id  # its own section, rendered from this file
            continue
        title, sections = page_headings(det.guide_page)
        assert title, f"{det.id}: no page docs/{det.guide_page}"
        assert det.guide_anchor in sections, f"{det.id}: no section #{det.guide_anchor}"
        assert guide_url(det, "https://x.test/").startswith("https://x.test/part-")


# ------------------------------------------------------------------ escaping

HOSTILE = SYNTHETIC / "hostile-names.json"


def test_hostile_names_are_text_in_every_format() -> None:
    report = doctor(HOSTILE)
    assert {"fp32-gemm", "host-device-copies"} <= {f.detector.id for f in report.findings}
    html_out = render_html([report], "https://x.test/")
    assert "<script>alert" not in html_out
    assert "&lt;script&gt;alert(&#x27;kernel&#x27;)&lt;/script&gt;" in html_out
    # Only the report's own scripts (the evidence buttons, the findings widget), allowed by hash.
    assert html_out.count("<script>") == 2
    assert html_out.count("'sha256-") == 3  # two scripts, one stylesheet
    assert "script-src 'sha256-" in html_out
    md = render_markdown([report], "https://x.test/")
    assert "<script>" not in md and "|`pipe`" not in md
    text = render_text([report], "https://x.test/")
    assert "\x1b" not in text
    assert "<script>alert('kernel')</script>" in text  # plain text shows the name as it is
    data = json.loads(render_json([report], "https://x.test/"))
    names = [r["what"] for f in data[0]["findings"] for r in f["evidence"]]
    assert any("<script>alert('kernel')" in n for n in names)


# ------------------------------------------------------------------ command line


def test_cli_fail_on_and_formats(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    trace = str(CUDA / "matmul_add/small_warm/trace.json.gz")
    result = run_doctor(trace, "--format", "json", "-o", str(out), "--fail-on", "warning")
    assert result.returncode == 1, result.stderr
    data = json.loads(out.read_text())
    assert data[0]["worst_severity"] == "warning"
    assert data[0]["findings"][0]["guide"]["url"].startswith("http")
    assert "doctor: [1/1] loading" in result.stderr
    # The same trace, only an informational detector: nothing at or above "warning".
    quiet = run_doctor(trace, "--only", "profiler-artefacts", "--fail-on", "warning", "-q")
    assert quiet.returncode == 0, quiet.stderr
    assert "INFO: The profiler's own marks" in quiet.stdout
    assert quiet.stderr == ""


def test_cli_timings_name_every_phase_and_detector(tmp_path: Path) -> None:
    """``--timings``: after the report, on stderr, the seconds of the engine's import, the trust
    gate, each detector and the kernel view (slowest first), and the same in a JSON report."""
    out = tmp_path / "report.json"
    trace = str(CUDA / "matmul_add/small_warm/trace.json.gz")  # every detector runs on it
    result = run_doctor(trace, "--timings", "--format", "json", "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == f"timings of {trace} (seconds):", result.stderr
    phases = {}
    for line in lines[1:-2]:
        name, seconds, *_ = line.split()
        phases[name] = float(seconds)
    ids = {d.id for d in load_detectors()}
    assert set(phases) == {"import", "file-check", "trust-gate", "kernel-view"} | {
        f"detector:{i}" for i in ids
    }
    assert all(s >= 0 for s in phases.values()), phases
    shown = [float(line.split()[1]) for line in lines[1:-2]]
    assert shown == sorted(shown, reverse=True)
    assert lines[-2].split()[0] == "total" and lines[-1].startswith("rendering the report: ")
    timings = json.loads(out.read_text())[0]["timings"]
    assert set(timings["detectors"]) == ids
    assert all(s >= 0 for s in timings["detectors"].values())
    assert timings["import"] >= 0 and timings["trust-gate"] >= 0
    # Without the flag, neither the lines nor the JSON field.
    plain = run_doctor(trace, "--format", "json", "-q")
    assert plain.stderr == "" and "timings" not in json.loads(plain.stdout)[0]


def test_cli_html_report_is_one_file(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    trace = str(CUDA / "attention/naive/trace.json.gz")
    result = run_doctor(trace, "--format", "html", "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    page = out.read_text()
    assert page.startswith("<!doctype html>")
    assert 'class="open"' in page and "data-vis-start=" in page
    assert "The SQL behind this finding (hidden_copies.sql)" in page
    # Loads nothing from elsewhere (links to the guide are links, not loads).
    assert not re.search(r'src="(https?:)?//|<link ', page)


def test_cli_bad_input(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00garbage")
    result = run_doctor(str(broken), "-q")
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and str(broken) in result.stderr
    assert "Traceback" not in result.stderr
    missing = run_doctor(str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "nope.json" in missing.stderr
    assert "Traceback" not in missing.stderr
    unknown = run_doctor(str(HOSTILE), "--only", "no-such-detector")
    assert unknown.returncode == 2 and "unknown detector no-such-detector" in unknown.stderr
    bad_set = run_doctor(str(HOSTILE), "--set", "fp32-gemm.nope=3")
    assert bad_set.returncode == 2 and "DETECTOR.PARAM=NUMBER" in bad_set.stderr


def test_cli_list() -> None:
    result = run_doctor("--list")
    assert result.returncode == 0
    for det in load_detectors():
        assert det.id in result.stdout
    assert "busy_pct_max = 50" in result.stdout
    japanese = run_doctor("--list", "--lang", "ja")
    assert japanese.returncode == 0
    for det in load_detectors():
        assert det.text("title", "ja") in japanese.stdout


def test_cli_threshold_override() -> None:
    trace = str(CUDA / "matmul_add/small_warm/trace.json.gz")  # busy 1.2 % at the lowest
    base = run_doctor(trace, "--only", "overhead-bound-steps", "--format", "json", "-q")
    strict = run_doctor(
        trace, "--only", "overhead-bound-steps", "--format", "json", "-q",
        "--set", "overhead-bound-steps.busy_pct_max=1",
    )  # fmt: skip
    assert json.loads(base.stdout)[0]["findings"]
    assert not json.loads(strict.stdout)[0]["findings"]


# ------------------------------------------------------------------ the gallery


def test_gallery_covers_every_trace_and_holds_to_physics() -> None:
    from generators.doctor.gallery import guide_traces, reference_traces

    gallery = json.loads((REPO / "artifacts" / "doctor" / "gallery.json").read_text())
    slugs = [e["slug"] for e in gallery["traces"]]
    expected = [t.slug for t in guide_traces(REPO / "artifacts") + reference_traces()]
    assert slugs == expected, "the gallery is stale: run `make derive`"
    for entry in gallery["traces"]:
        assert (REPO / "artifacts" / "doctor" / entry["report"]).is_file()
        assert entry["report_ja"] == entry["report"].removesuffix(".html") + ".ja.html"
        assert (REPO / "artifacts" / "doctor" / entry["report_ja"]).is_file()
        assert entry["origin"] in ("guide", "reference")
        assert entry["label_ja"]
        assert entry["trust"], entry["slug"]  # every report opens with its trust gate
        for limitation in entry["trust"]:
            assert limitation["text_ja"] and limitation["text_ja"] != limitation["text"]
        for finding in entry["findings"]:
            # The Japanese sentence carries the same numbers, filled in.
            assert finding["seen_ja"] and "{" not in finding["seen_ja"], finding["id"]
            assert finding["cost_ns"] >= 0
            for row in finding["evidence"]:
                for col, value in row.items():
                    if value is None or not isinstance(value, int | float):
                        continue
                    if col.endswith("_pct"):
                        assert 0 <= value <= 100 + 1e-9, (entry["slug"], finding["id"], col)
                    elif col.endswith("_ns") or col == "dur":
                        assert value >= 0, (entry["slug"], finding["id"], col)
    reference = [e for e in gallery["traces"] if e["origin"] == "reference"]
    assert all("licen" in e["source"].lower() or "MIT" in e["source"] for e in reference)
    # Each published report says whose trace it is: another project's, never the guide's.
    for entry in gallery["traces"]:
        for name, phrase in (
            (entry["report"], "Another project's trace, not a measurement of this guide's: "),
            (entry["report_ja"], "このガイドの測定ではなく、ほかのプロジェクトのトレースです: "),
        ):
            page = (REPO / "artifacts" / "doctor" / name).read_text(encoding="utf-8")
            said = f'<p class="provenance">{phrase}{html.escape(entry["source"])}</p>' in page
            assert said is (entry["origin"] == "reference"), name


def test_the_early_engine_start_reads_the_command_line_as_the_parser_does(tmp_path: Path) -> None:
    """Before its imports the doctor reads its command line roughly, to start the engine for the
    first trace: its lists of options must be the parser's, and it must start nothing when
    another engine is named or no trace is read (argparse's abbreviations included)."""
    from generators.doctor.__main__ import (
        _NO_EARLY_START,
        _VALUE_OPTIONS,
        build_parser,
        first_trace,
    )

    actions = [a for a in build_parser()._actions if a.option_strings]
    with_value = {o for a in actions if a.nargs != 0 for o in a.option_strings}
    assert with_value == {*_VALUE_OPTIONS, "-o", "--tp-bin", "--engine"}
    flags = {o for a in actions if a.nargs == 0 for o in a.option_strings}
    assert flags == {"-h", "--help", "--list", "-q", "--quiet", "--ranks", "--timings"}
    assert set(_NO_EARLY_START) <= with_value | flags

    trace = tmp_path / "trace.json"
    trace.write_text("{}")
    report = tmp_path / "report.html"
    report.write_text("")
    t, r = str(trace), str(report)
    for argv in (
        [t],
        ["-o", r, t],
        ["--out", r, t],
        [f"--output={r}", t],
        ["-qo", r, t],
        ["--format", "json", t, "--lang", "ja"],
        ["--set", "launch-bound.short_pct_min=10", t],
        ["--", t],
        [t, r],
    ):
        assert first_trace(argv) == t, argv
    for argv in (
        ["--list", t],
        [t, "--engine", "native"],
        [t, "--tp-bin", r],
        ["--tp", r, t],
        ["--eng=native", t],
        ["-h", t],
        ["-qh", t],
        [t, "--lis"],
        [str(tmp_path / "missing.json")],
        ["-o", t],
    ):
        assert first_trace(argv) is None, argv


# ------------------------------------------------------------------ where the links lead


def _mkdocs_site_url(config: Path) -> str:
    """``site_url`` as MkDocs itself reads ``config`` (it adds a trailing slash)."""
    from mkdocs.config import load_config

    return load_config(str(config))["site_url"] or ""


@pytest.mark.parametrize(
    "line",
    [
        'site_url: !ENV [PROFILING_GUIDE_SITE_URL, "https://guide.example/sub/"]',
        "site_url: https://guide.example/sub/",
        'site_url: !ENV [PROFILING_GUIDE_SITE_URL, ""]',
    ],
)
def test_the_doctor_reads_the_site_address_mkdocs_reads(
    line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The doctor reads mkdocs.yml without MkDocs: the same address, with and without the
    variable set, for the real config and for each form the line can take."""
    from generators.site_address import configured_site_url

    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\n{line}\ndocs_dir: {REPO / 'docs'}\n")
    for path in (REPO / "mkdocs.yml", config):
        monkeypatch.delenv("PROFILING_GUIDE_SITE_URL", raising=False)
        assert configured_site_url(path).rstrip("/") == _mkdocs_site_url(path).rstrip("/")
        monkeypatch.setenv("PROFILING_GUIDE_SITE_URL", "https://other.example/")
        assert configured_site_url(path) == "https://other.example/"
        if "!ENV" in path.read_text():
            assert _mkdocs_site_url(path) == "https://other.example/"


def test_a_report_made_without_the_flag_links_to_the_configured_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A saved report is read elsewhere: its links lead to the site's configured address (in
    both languages), not to a local server, unless --guide-url says otherwise."""
    import generators.site_address
    from generators.doctor.__main__ import main

    config = tmp_path / "mkdocs.yml"
    config.write_text('site_url: !ENV [PROFILING_GUIDE_SITE_URL, "https://guide.example/sub/"]\n')
    monkeypatch.setattr(generators.site_address, "MKDOCS_CONFIG", config)
    monkeypatch.delenv("PROFILING_GUIDE_SITE_URL", raising=False)
    trace = str(CPU / "train/naive/trace.json.gz")
    only = ["--only", "zero-grad-zeroing", "-q"]

    def links(*args: str) -> list[str]:
        out = tmp_path / "report.json"
        assert main([trace, *only, "--format", "json", "-o", str(out), *args]) == 0
        return [f["guide"]["url"] for f in json.loads(out.read_text())[0]["findings"]]

    assert links() and all(u.startswith("https://guide.example/sub/part-") for u in links())
    flagged = links("--guide-url", "https://mirror.example/")
    assert all(u.startswith("https://mirror.example/part-") for u in flagged)
    html_out = tmp_path / "report.html"
    assert main([trace, *only, "--format", "html", "--lang", "ja", "-o", str(html_out)]) == 0
    assert 'href="https://guide.example/sub/ja/part-' in html_out.read_text()
    assert "127.0.0.1" not in html_out.read_text()


# ------------------------------------------------------------------ Japanese reports

#: Latin-script words a Japanese report keeps: the names a Japanese engineer reads in English
#: (tools, libraries, hardware, APIs, acronyms, GPU architectures). A word made of letters only
#: that is neither here nor in the trace's own names is the guide's English left untranslated.
#: Names with digits, underscores, dots, colons, ``#`` or inner capitals (``aten::copy_``,
#: ``torch.compile``, ``ProfilerStep#3``, ``cudaStreamSynchronize``, ``PyTorch``) pass as
#: names; command-line options and code are set as code (``...``) by the prose.
JAPANESE_KEEPS = frozenset(
    [
        # Tools, libraries, vendors, hardware, and the command's own name (docs-ja/terms.md).
        *("Perfetto", "UI", "Kineto", "CUPTI", "NVIDIA", "AMD", "ROCm", "CUDA", "HIP", "NCCL"),
        *("MTIA", "GPU", "GPUs", "CPU", "SM", "Tensor", "Volta", "Turing", "Ampere", "Hopper"),
        # Modules and models the Japanese edition names in English (nn.Linear, an MLP).
        *("Linear", "MLP"),
        *("Inductor", "Dynamo", "Triton", "DDP", "FSDP", "SDPA", "Python", "doctor", "dtype"),
        # NVIDIA's name for a GPU's generation (compute capability 7.x).
        *("compute", "capability"),
        # Kinds of work and kernels the guide names in English in both editions.
        *("GEMM", "GEMMs", "FMA", "MMA", "TF", "TFLOP", "FLOP", "FLOPs", "DtoH", "HtoD", "DtoD"),
        *("fp", "bf", "autocast", "matmul", "foreach", "fused", "memset", "fill", "math"),
        # PyTorch's execution modes (the guide's variant names: eager, compiled).
        *("eager",),
        # Formats and units (a quantity named by a letter, every N steps, passes as a name).
        *("JSON", "SQL", "HTML", "http", "https", "gzip", "ms", "ns", "s", "MB", "GB", "KB"),
        *("bytes", "x"),
        # GEMM layout letters as a kernel's name spells them (the decoder keeps them).
        *("nn", "nt", "tn", "tt", "NN", "NT", "TN", "TT"),
        # Kernel libraries and code generators, as the kernel-name decoder names them.
        *("cuBLAS", "cuBLASLt", "cuDNN", "CUTLASS", "CUB", "hipBLASLt", "FlashAttention"),
        *("PyTorch", "ATen", "Liger", "BLAS", "DNN", "Lt"),
    ]
)
_NAME_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9_.:#+/=<>*&\-]*(?:\(\))?")
_PLAIN_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]{2,}")


def _trace_names(path: Path) -> set[str]:
    """Every name a report may quote from a trace: its events' names and categories, its
    processes' and threads' names, its GPUs' names (read from the file, as the importer does)."""
    from generators import trace_json

    names = {str(path), path.name}
    for e in trace_json.load_trace_fast(_trace(path)):
        for value in (e.get("name"), e.get("cat"), (e.get("args") or {}).get("name")):
            if isinstance(value, str) and len(value.strip()) > 1:
                # A name and its head (a wrapper's "Torch-Compiled Region" of "...: 0/1").
                names |= {value.strip(), value.partition(": ")[0].strip()}
    names |= {str(p.get("name")) for p in trace_json.device_properties(_trace(path))}
    return names


def english_left(text: str, names: set[str]) -> list[str]:
    """The words of the guide's own English in a Japanese text: what is left once the trace's
    names, code, links, glosses and the detectors' ids and files are taken out, and that is
    neither a name nor a word a Japanese engineer reads in English."""
    text = re.sub(r"https?://\S+|`[^`]*`", " ", text)
    # A Japanese word's English gloss: 結合（collate）.
    text = re.sub(r"(?<=[\u3040-\u30ff\u4e00-\u9fff])（[A-Za-z][A-Za-z -]*）", " ", text)
    # The operators a kernel's name says it fuses, as the name spells them: add, mul を融合.
    text = re.sub(r"(?:\w+, )*\w+ を融合", " ", text)
    ids = {n for d in load_detectors() for n in (d.id, d.path.name)}
    for name in sorted(names | ids, key=len, reverse=True):
        text = text.replace(name, " ")
    return sorted(
        {
            w
            for w in _NAME_LIKE.findall(text)
            if _PLAIN_WORD.fullmatch(w) and w not in JAPANESE_KEEPS
        }
    )


class _VisibleText(html.parser.HTMLParser):
    """A page's text as a reader sees it, less code (SQL, ids, commands) and scripts."""

    SKIP = frozenset({"script", "style", "code", "pre", "title"})

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs) -> None:  # type: ignore[no-untyped-def]
        self._skipping += tag in self.SKIP

    def handle_endtag(self, tag: str) -> None:
        self._skipping -= tag in self.SKIP

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def visible_text(page: str) -> str:
    parser = _VisibleText()
    parser.feed(page)
    return "\n".join(parser.parts)


def _ja_fields(value: object) -> list[str]:
    """Every string under a ``*_ja`` key of a JSON report."""
    if isinstance(value, dict):
        return [
            s
            for k, v in value.items()
            for s in ([v] if k.endswith("_ja") and isinstance(v, str) else _ja_fields(v))
        ]
    if isinstance(value, list):
        return [s for v in value for s in _ja_fields(v)]
    return []


#: The reports checked in Japanese: every detector's firing case (the reports the firing tests
#: made), and reference traces whose trust gates say the most (dropped events and recovered
#: steps, no GPU, no flows nor GPU model, importer drops without steps).
JAPANESE_CASES = sorted(
    {(fire, json.dumps({d: FIRE_OVERRIDES[d]} if d in FIRE_OVERRIDES else None)) for d, (fire, _)
     in CASES.items()}
    | {(t, "null") for t in (ref.H100_BERT, ref.A100_CPU_SIDE, ref.GPU_UNLISTED, ref.A100_ADD)},
    key=str,
)  # fmt: skip


def test_japanese_reports_keep_only_names_in_english() -> None:
    """In every format, a Japanese report's Latin-script words are the trace's names, code, or
    names on the allow-list: the evidence lines, breakdowns, column titles and trust lines are
    Japanese. The English report of the same trace says the same in English."""
    seen_columns: set[str] = set()
    for trace, overrides in JAPANESE_CASES:
        report = doctor(trace, json.loads(overrides))
        names = _trace_names(trace)
        outputs = {
            "text": render_text([report], "https://x.test/ja/", lang="ja"),
            "markdown": html.unescape(render_markdown([report], "https://x.test/ja/", lang="ja")),
            "html": visible_text(render_html([report], "https://x.test/ja/", lang="ja")),
            "json": "\n".join(_ja_fields(json.loads(render_json([report], "https://x.test/"))[0])),
        }
        for form, out in outputs.items():
            left = english_left(out, names)
            assert not left, f"{trace.name} ({form}): English left in Japanese: {left}"
        english = render_text([report], "https://x.test/")
        assert english_left(english, names), "the check finds English where there is some"
        for f in report.findings:
            assert f.seen in english
            for row in f.evidence:
                assert f"{row['location']}: {row['what']}" in english
                assert f"{row['location_ja']}: {row['what_ja']}" in outputs["text"]
            seen_columns |= set(f.rows[0])
    # Every text column with a Japanese twin was shown in some case.
    assert {"what_ja", "location_ja", "cause_ja", "kind_ja", "caller_ja"} <= seen_columns


def test_every_shown_column_has_a_title_in_both_languages() -> None:
    """The columns a report may show beyond the evidence ones (a breakdown, the columns that
    tell rows apart) have human titles, in English and in Japanese; and a column's Japanese
    twin is a column the detector also returns."""
    for det_id, (fire, _) in CASES.items():
        overrides = {det_id: FIRE_OVERRIDES[det_id]} if det_id in FIRE_OVERRIDES else None
        finding = _finding(doctor(fire, overrides), det_id)
        det = finding.detector
        columns = set(finding.rows[0])
        shown = {
            c for c in columns if c not in {"ts", "dur", "location", "what", "cost_ns", "evidence"}
        }
        for c in shown:
            if c.endswith("_ja"):
                assert c.removesuffix("_ja") in columns, (det_id, c)
                continue
            assert det.column_title(c) != c and det.column_title(c, "ja") != c, (det_id, c)
            assert JAPANESE.search(det.column_title(c, "ja")) or c == "gpu_name", (det_id, c)
        # No title for a column the query does not return.
        assert set(det.titles["en"]) <= columns, (det_id, set(det.titles["en"]) - columns)


def test_japanese_gallery_pages_keep_only_names_in_english() -> None:
    """The gallery's Japanese reports, as committed: the same rule, on the traces above."""
    from generators.doctor.gallery import guide_traces, reference_traces

    gallery = {t.path.resolve(): t for t in guide_traces(REPO / "artifacts") + reference_traces()}
    checked = 0
    for trace, _ in JAPANESE_CASES:
        entry = gallery.get(_trace(trace).resolve())
        if entry is None:  # a synthetic trace: not in the gallery
            continue
        slug = entry.slug
        page = (REPO / "artifacts" / "doctor" / f"{slug}.ja.html").read_text(encoding="utf-8")
        # The page names where the trace comes from (a repository, its licence) as it is.
        left = english_left(visible_text(page), _trace_names(trace) | {entry.source})
        assert not left, f"{slug}.ja.html: English left in Japanese: {left}"
        checked += 1
    assert checked >= 10


def test_cli_speaks_japanese(tmp_path: Path) -> None:
    """--lang ja: the progress lines, the report and the errors are Japanese."""
    result = run_doctor(str(ref.A100_ADD), "--lang", "ja")
    assert result.returncode == 0, result.stderr
    assert f"doctor: [1/1] {ref.A100_ADD} を読み込みます" in result.stderr
    assert re.search(r"doctor: \[1/1\] 所見 \d+ 件", result.stderr)
    assert not english_left(result.stdout, _trace_names(ref.A100_ADD))
    assert not english_left(result.stderr, {str(ref.A100_ADD)})
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00garbage")
    bad = run_doctor(str(broken), str(tmp_path / "nope.json"), "-q", "--lang", "ja")
    assert bad.returncode == 2
    assert f"エラー: {broken}: gzip のデータを展開できません" in bad.stderr
    assert f"エラー: {tmp_path / 'nope.json'}: ファイルがありません" in bad.stderr
    unknown = run_doctor(str(HOSTILE), "--only", "no-such-detector", "--lang", "ja")
    assert "エラー: 不明な検出器 no-such-detector" in unknown.stderr


def test_synthetic_traces_are_make_traces_output(tmp_path: Path) -> None:
    """tests/data/doctor-traces/: every trace there is what make_traces.py writes, byte for
    byte, and its README's table has a row for each (and for nothing else)."""
    script = tmp_path / "make_traces.py"
    script.write_bytes((SYNTHETIC / "make_traces.py").read_bytes())
    subprocess.run([sys.executable, str(script)], check=True, cwd=tmp_path, timeout=60)
    written = sorted(p.name for p in tmp_path.glob("*.json"))
    assert written == sorted(p.name for p in SYNTHETIC.glob("*.json"))
    for name in written:
        assert (tmp_path / name).read_bytes() == (SYNTHETIC / name).read_bytes(), name
    readme = (SYNTHETIC / "README.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1] for line in readme.splitlines() if line.startswith("| `")]
    listed = sorted(name for cell in rows for name in re.findall(r"`([^`]+\.json)`", cell))
    assert listed == written
