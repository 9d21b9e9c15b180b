"""The SQL behind Part 5 (generators/sql/train.sql and the train_* queries), on real traces.

Besides the guide's own captures (the claim tests read those), the GPU side of the queries (the
backward on the autograd engine's own thread, `fwdbwd` links across threads, optimizer kernels,
copies) runs here on a GPU training trace from another project, so that it is checked on more
than one model, optimizer and machine: the V100 ResNet training trace in
``tests/data/reference-traces/`` (test input only, never shown as this project's measurements).
It trains with SGD (foreach), sets gradients to None, and copies device to device. The tests of
CPU-only behaviour read the guide's CPU capture explicitly.
"""

from __future__ import annotations

import functools
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from generators.trace_json import find_partial_overlaps, load_events, perfetto_ns
from tests.claims import ARTIFACTS, REPO
from tests.reference_traces import A100_CPU_SIDE, FOREIGN_TRAINING, GPU_UNLISTED, MI250_TOY, V100
from tests.sql_rows import query_rows, trace_rows

# Tests that read the same traces run in one worker process when `make test TEST_WORKERS=N` shares
# the suite out, so that each trace is imported once (tests/open_traces.py).
pytestmark = pytest.mark.xdist_group("train-traces")

INCLUDE = "INCLUDE PERFETTO MODULE guide.train;\n"
CPU_TRAIN = ARTIFACTS / "cpu" / "train"
#: Profiled steps in the V100 trace (ProfilerStep#101 to #105).
V100_STEPS = 5


@functools.cache
def _v100(query: str) -> tuple[dict[str, object], ...]:
    return tuple(query_rows(V100, query))


def test_backward_on_its_own_thread_on_a_gpu() -> None:
    """The autograd engine's thread is found, and every fwdbwd link crosses to it."""
    threads = trace_rows(
        V100,
        INCLUDE + "SELECT role, COUNT(*) AS n FROM guide_train_thread GROUP BY role ORDER BY role",
    )
    assert threads == [{"role": "autograd", "n": 1}, {"role": "step", "n": 1}]
    (b,) = _v100("train_backward")
    assert b["backward_on_own_thread"] == 1 and b["backward_threads"] == 1
    assert b["fwdbwd_links_per_step"] > 0
    assert b["fwdbwd_links_across_threads"] == b["fwdbwd_links_per_step"] * V100_STEPS
    # The forward and the backward are found without labels, but the trace has no shapes
    # (record_shapes was off): no GEMM counts, rather than wrong ones.
    assert b["forward_cpu_ns"] > 0 and b["backward_cpu_ns"] > 0
    assert b["forward_gemms_per_step"] is None and b["backward_over_forward_flops"] is None
    assert b["step_start_s"] < b["step_end_s"]


def test_fwdbwd_pairs_on_a_gpu_trace() -> None:
    rows = _v100("train_fwdbwd")
    top = rows[0]
    assert (top["forward_name"], top["backward_name"]) in {
        ("aten::convolution", "ConvolutionBackward0"),
        ("aten::cudnn_batch_norm", "CudnnBatchNormBackward0"),
    }
    assert all(r["same_thread"] == "no" for r in rows)


def test_foreach_optimizer_kernels_are_multi_tensor_apply() -> None:
    """Every kernel SGD's foreach step launches is a multi_tensor_apply kernel; zero_grad with
    set_to_none=True runs nothing."""
    (o,) = _v100("train_optimizer")
    assert o["optimizer"] == "SGD.step"
    assert o["optimizer_kernels"] > 0
    assert o["optimizer_multi_tensor_kernels"] == o["optimizer_kernels"]
    assert o["optimizer_gpu_ns"] > 0
    assert o["zero_grad_cpu_ops"] == 0 and o["zero_grad_kernels"] == 0
    assert o["zero_grad_memsets"] == 0 and o["zero_grad_gpu_ns"] == 0
    assert o["optimizer_start_s"] < o["optimizer_end_s"]
    ops = _v100("train_optimizer_ops")
    assert ops and all(str(r["name"]).startswith("aten::_foreach_") for r in ops)
    assert all("multi_tensor_apply_kernel" in str(r["kernel_name"]) for r in ops)
    launched = sum(float(r["kernels"]) for r in ops)  # type: ignore[arg-type]
    assert launched == pytest.approx(o["optimizer_kernels"])


def test_phase_gpu_time_is_a_union_within_the_kernels_it_launched() -> None:
    """GPU time per phase: positive where kernels ran, never more than their summed durations."""
    summed = {
        r["phase"]: r["ns"]
        for r in trace_rows(
            V100,
            INCLUDE + "SELECT p.phase, SUM(g.dur) AS ns FROM guide_train_phase_gpu AS g "
            "JOIN guide_train_phase AS p ON p.id = g.phase_id GROUP BY p.phase",
        )
    }
    phases = {r["phase"]: r for r in _v100("train_phases")}
    assert set(summed) == {"forward", "backward", "optimizer"}
    for phase, ns in summed.items():
        gpu_ns = phases[phase]["gpu_ns"] * V100_STEPS
        assert 0 < gpu_ns <= ns + V100_STEPS, phase  # per-step averages are truncated to ns
    assert phases["zero_grad"]["gpu_ns"] == 0 and phases["data"]["gpu_ns"] is None
    assert sum(phases[p]["gpu_pct"] for p in summed) == pytest.approx(100, abs=0.2)


def test_copies_on_a_gpu_trace() -> None:
    """The V100 trace's device-to-device copies, launched from the step's and the engine's
    threads, are all found, with their bytes; kernel time during a copy never exceeds it. The
    forward's (inside DistributedDataParallel.forward) are in the derived forward; the DDP
    reducer's bucket copies at the end of the backward run on the engine's thread after its last
    node, inside the derived backward."""
    rows = {r["phase"]: r for r in _v100("train_copies")}
    assert set(rows) == {"forward", "backward"}
    for row in rows.values():
        assert row["name"] == "Memcpy DtoD (Device -> Device)"
        assert row["launch_name"] == "cudaMemcpyAsync"
        assert row["copy_bytes"] > 0 and 0 <= row["overlap_ns"] <= row["copy_ns"]
    (count,) = trace_rows(
        V100, INCLUDE + "SELECT COUNT(*) AS n FROM slice WHERE name GLOB 'Memcpy DtoD*'"
    )
    assert sum(r["copies_per_step"] for r in rows.values()) * V100_STEPS == count["n"]


def test_no_readback_no_memory_events_in_the_reference() -> None:
    """Queries whose subject a trace lacks say so with zeros and NULLs, not with errors."""
    (r,) = _v100("train_readback")
    assert r["reads_per_step"] == 0 and r["gpu_idle_after_read_ns"] is None
    assert 0 < r["gpu_busy_pct"] <= 100
    assert _v100("train_memory_timeline") == ()


def test_fp32_casts_are_scalars_and_integers() -> None:
    """On the CPU capture's fp32 loop, the aten::_to_copy calls convert a Python number
    ('double'), an integer tensor ('long int') or a boolean one (under aten::cumsum: a mask summed
    into positions): never a float tensor, so every one of them is counted among Part 5's "Python
    numbers, integer and boolean tensors"."""
    trace = CPU_TRAIN / "naive" / "trace.json.gz"
    rows = trace_rows(
        trace,
        INCLUDE + "SELECT DISTINCT extract_arg(s.arg_set_id, 'args.Input type[0]') AS t "
        "FROM guide_train_phase_op AS o JOIN slice AS s ON s.id = o.id "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id "
        "WHERE o.name = 'aten::_to_copy' AND p.phase IN ('forward', 'backward') ORDER BY t",
    )
    assert [r["t"] for r in rows] == ["bool", "double", "long int"]


def test_memory_events_as_the_importer_keeps_them() -> None:
    """Kineto's [memory] instant events are zero-length slices named `[memory]`; in the series
    guide_train_memory keeps, the running total moves by each event's bytes, every time (the CPU
    capture: one device's allocator)."""
    trace = CPU_TRAIN / "memory" / "trace.json.gz"
    (r,) = trace_rows(
        trace,
        "SELECT COUNT(*) AS n, MAX(dur) AS longest, "
        "COUNT(DISTINCT extract_arg(arg_set_id, 'args.Device Type')) AS devices "
        "FROM slice WHERE name = '[memory]'",
    )
    assert r["n"] > 0 and r["longest"] == 0 and r["devices"] == 1
    rows = trace_rows(
        trace,
        INCLUDE + "SELECT allocated_bytes - LAG(allocated_bytes) OVER (ORDER BY ts) - bytes AS off "
        "FROM guide_train_memory",
    )
    assert len(rows) > 1 and all(row["off"] == 0 for row in rows[1:])


def test_attention_products_are_not_aten_mm_on_a_cpu() -> None:
    """On the CPU capture, the attention's own products run inside the attention operator
    (aten::_scaled_dot_product_flash_attention_for_cpu) and its backward operator: none of
    guide_train_gemm's products sits under it."""
    trace = CPU_TRAIN / "naive" / "trace.json.gz"
    rows = trace_rows(
        trace,
        INCLUDE + "SELECT p.phase, o.name, COUNT(*) AS n FROM guide_train_phase_op AS o "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id "
        "WHERE o.name GLOB 'aten::_scaled_dot_product_flash_attention_for_cpu*' "
        "GROUP BY p.phase, o.name ORDER BY p.phase",
    )
    assert [(r["phase"], r["name"]) for r in rows] == [
        ("backward", "aten::_scaled_dot_product_flash_attention_for_cpu_backward"),
        ("forward", "aten::_scaled_dot_product_flash_attention_for_cpu"),
    ]
    (mm,) = trace_rows(
        trace,
        INCLUDE + "SELECT COUNT(*) AS n FROM guide_train_gemm AS g JOIN slice AS s ON s.id = g.id "
        "JOIN ancestor_slice(g.id) AS a WHERE a.name GLOB '*scaled_dot_product*'",
    )
    assert mm["n"] == 0


# --- The phases of a training loop that has no labels of the guide's own -----------------------

NODE = "autograd::engine::evaluate_function: "
#: Annotations PyTorch writes itself in every training loop, by the phase they mark.
PYTORCH_LABELS = {
    "enumerate(DataLoader)#": "data",
    "Optimizer.step#": "optimizer",
    "Optimizer.zero_grad#": "zero_grad",
}
#: The guide's own labels: none of them is in another project's trace.
GUIDE_LABELS = {"forward", "backward", "to_device", "log_loss"}
#: What every training trace can show, so the query gives each a row, found or not.
ALWAYS_ROWS = ("data", "forward", "backward", "optimizer", "zero_grad")


def _phases_from_json(path: Path) -> dict[str, object]:
    """Each phase's CPU time summed over the steps, and the steps' time, read straight from the
    trace's JSON (the events the trace processor's importer keeps, in its own ns arithmetic), by
    the rule the guide's page states:

    - steps: the CPU's ``ProfilerStep#N`` annotations;
    - backward: from the first ``evaluate_function`` in the step to the end of the last one, or
      of the last event on a thread that ran them other than the step's, whichever is later;
    - forward: from the first event on the step's thread (an operator, an annotation of the
      loop's own) that starts after the step's start and after every PyTorch annotation that
      ended before the backward, to the backward;
    - data, optimizer, zero_grad: PyTorch's annotations on the step's thread.
    """
    events = load_events(path)
    dropped = {id(o.event) for o in find_partial_overlaps(events)}
    kept = [
        (perfetto_ns(e["ts"]), perfetto_ns(e["ts"]) + perfetto_ns(e.get("dur", 0)), e)
        for e in events
        if e.get("ph") == "X" and "ts" in e and id(e) not in dropped
    ]

    def thread(e: dict[str, object]) -> tuple[str, str]:
        return str(e.get("pid")), str(e.get("tid"))

    steps = [
        (a, b, thread(e))
        for a, b, e in kept
        if e.get("cat") == "user_annotation" and str(e["name"]).startswith("ProfilerStep#")
    ]
    assert not any(
        e.get("cat") == "user_annotation" and e["name"] in GUIDE_LABELS for _, _, e in kept
    ), "a trace with the guide's own labels is not a test of working without them"
    engine_threads = {thread(e) for _, _, e in kept if str(e["name"]).startswith(NODE)} - {
        t for _, _, t in steps
    }
    totals = dict.fromkeys(("forward", "backward", "data", "optimizer", "zero_grad"), 0)
    found = dict.fromkeys(totals, 0)
    covered = node_union = 0
    for s0, s1, step_thread in steps:
        inside = [(a, b, e) for a, b, e in kept if s0 <= a < s1]
        spans: list[tuple[int, int]] = []
        labels = []
        for a, b, e in inside:
            if thread(e) != step_thread or e.get("cat") != "user_annotation":
                continue
            for prefix, phase in PYTORCH_LABELS.items():
                if str(e["name"]).startswith(prefix):
                    totals[phase] += b - a
                    found[phase] += 1
                    labels.append((a, b))
                    spans.append((a, b))
        nodes = [(a, b) for a, b, e in inside if str(e["name"]).startswith(NODE)]
        if nodes:
            start = min(a for a, _ in nodes)
            end = max(
                [b for _, b in nodes]
                + [b for a, b, e in inside if thread(e) in engine_threads and a >= s0]
            )
            totals["backward"] += end - start
            found["backward"] += 1
            spans.append((start, end))
            after = max([s0] + [b for _, b in labels if b <= start])
            first = min(
                a
                for a, _, e in inside
                if thread(e) == step_thread
                and e.get("cat") in ("cpu_op", "user_annotation")
                and not str(e["name"]).startswith("ProfilerStep#")
                and after <= a < start
            )
            totals["forward"] += start - first
            found["forward"] += 1
            spans.append((first, start))
            node_union += _union(nodes)
        covered += _union(spans)
    return {
        "steps": len(steps),
        "step_ns": sum(b - a for a, b, _ in steps),
        "totals": totals,
        "found": found,
        "covered": covered,
        "node_union": node_union,
    }


def _union(spans: list[tuple[int, int]]) -> int:
    """Time covered by at least one of the spans."""
    total, reach = 0, None
    for a, b in sorted(spans):
        total += max(0, b - max(a, reach if reach is not None else a))
        reach = b if reach is None else max(reach, b)
    return total


@functools.cache
def _foreign(path: Path) -> tuple[dict[str, dict[str, object]], dict[str, object]]:
    return {r["phase"]: r for r in query_rows(path, "train_phases")}, _phases_from_json(path)


@pytest.mark.parametrize("path", FOREIGN_TRAINING, ids=lambda p: p.name.removesuffix(".json.gz"))
def test_phases_without_the_guides_labels_match_the_json(path: Path) -> None:
    """On a training loop of another project, train_phases finds the forward, the backward and
    the optimizer step, each with the CPU time an independent reading of the JSON gives; a phase
    the trace does not show has a row with no times (not 0, and not in the rest of the step)."""
    rows, js = _foreign(path)
    n, step_ns = js["steps"], js["step_ns"]
    assert list(rows) == [*ALWAYS_ROWS, "rest of the step"]
    for phase in ALWAYS_ROWS:
        row, total, found = rows[phase], js["totals"][phase], js["found"][phase]
        assert row["calls_per_step"] == found / n, phase
        if found:
            assert row["cpu_ns"] == total // n, phase
            assert row["step_pct"] == round(100 * total / step_ns, 1), phase
        else:
            assert row["cpu_ns"] is None and row["step_pct"] is None, phase
            assert row["cpu_ops"] is None and row["gpu_ns"] is None, phase
    for phase in ("forward", "backward", "optimizer"):
        assert rows[phase]["cpu_ns"] > 0 and rows[phase]["cpu_ops"] > 0, phase
    rest = rows["rest of the step"]
    assert rest["cpu_ns"] == (step_ns - js["covered"]) // n
    assert 0 <= rest["step_pct"] < 10


@pytest.mark.parametrize("path", FOREIGN_TRAINING, ids=lambda p: p.name.removesuffix(".json.gz"))
def test_the_backward_is_the_engines_work(path: Path) -> None:
    """The derived backward holds the autograd engine's nodes: the union of the
    evaluate_function slices in each step, read from the JSON, is never more than it, and on a
    trace with all its events (every one but the sampled one) covers most of it."""
    rows, js = _foreign(path)
    backward = js["totals"]["backward"]
    assert rows["backward"]["cpu_ns"] * js["steps"] <= backward
    assert 0 < js["node_union"] <= backward
    if path != GPU_UNLISTED:
        assert js["node_union"] > 0.75 * backward


@pytest.mark.parametrize("path", (V100, GPU_UNLISTED), ids=("v100", "sampled"))
def test_derived_phases_agree_with_the_loops_own_labels(path: Path) -> None:
    """These two loops label their phases in their own words (``## forward ##``,
    ``## backward ##``), which the query does not read: the backward it derives lies inside the
    loop's backward label and covers nearly all of it, and the loop's forward label lies inside
    the derived forward (which also holds what the loop does before the model runs)."""
    pairs = trace_rows(
        path,
        INCLUDE + "SELECT p.phase, p.ts, p.dur, l.ts AS label_ts, l.dur AS label_dur "
        "FROM guide_train_phase AS p JOIN guide_train_step AS st USING (step) "
        "JOIN slice AS l ON l.track_id = st.track_id AND l.ts >= st.ts AND l.ts < st.ts + st.dur "
        "AND l.name = '## ' || p.phase || ' ##' WHERE p.found_by != 'label' ORDER BY p.ts",
    )
    phases = [p["phase"] for p in pairs]
    assert phases.count("forward") == phases.count("backward") > 0
    for p in pairs:
        if p["phase"] == "backward":
            assert p["label_ts"] <= p["ts"] and p["ts"] + p["dur"] <= p["label_ts"] + p["label_dur"]
            assert p["dur"] > 0.9 * p["label_dur"]
        else:
            assert p["ts"] <= p["label_ts"]
            assert p["label_ts"] + p["label_dur"] <= p["ts"] + p["dur"]


def test_without_flows_the_correlation_ids_link_launches_to_kernels() -> None:
    """This trace has no ac2g flows, but every kernel, copy and memset carries the correlation id
    of the launch that started it: each is linked to its launch, so the phases' GPU columns are
    counts, not NULL and not 0."""
    (r,) = trace_rows(
        GPU_UNLISTED,
        INCLUDE + "SELECT (SELECT COUNT(*) FROM flow) AS flows, "
        "(SELECT COUNT(*) FROM guide_kineto_gpu_activity) AS activities, "
        "(SELECT COUNT(DISTINCT gpu_id) FROM guide_kineto_launch_link) AS linked, "
        "(SELECT COUNT(*) FROM guide_kineto_launch_link AS l "
        "JOIN slice AS a ON a.id = l.launch_id JOIN slice AS g ON g.id = l.gpu_id "
        "WHERE EXTRACT_ARG(a.arg_set_id, 'args.correlation') "
        "!= EXTRACT_ARG(g.arg_set_id, 'args.correlation')) AS mismatched",
    )
    assert r["flows"] == 0 and r["mismatched"] == 0
    assert r["linked"] == r["activities"] > 1000
    rows, _ = _foreign(GPU_UNLISTED)
    for phase in ("forward", "backward", "optimizer"):
        assert rows[phase]["kernels"] > 0 and rows[phase]["gpu_ns"] > 0, phase


def test_a_split_the_rules_cannot_make_is_flagged() -> None:
    """The known failing case: this CPU-side capture recorded only two evaluate_function slices
    (AccumulateGrad, at the step's end), so the derived backward is a sliver with no operator and
    the derived forward swallows the loop's own ``## backward ##``. The numbers are wrong, and
    train_phases says so in a last row; the three good loops get no such row."""
    rows = query_rows(A100_CPU_SIDE, "train_phases")
    assert [r["phase"] for r in rows[:-1]] == [*ALWAYS_ROWS, "rest of the step"]
    assert rows[-1]["phase"] == (
        "WARNING: forward/backward split unreliable in 1 of 1 steps "
        "(no operator in the derived backward)"
    )
    assert all(v is None for k, v in rows[-1].items() if k != "phase")
    for path in FOREIGN_TRAINING:
        rows_good, _ = _foreign(path)
        assert not any(str(p).startswith("WARNING") for p in rows_good), path.name


def test_a_gpu_copy_of_the_step_is_not_a_step() -> None:
    """The ROCm trace copies ProfilerStep#1 onto the GPU's stream: guide_train_step keeps the
    CPU's steps only, and no GPU stream becomes a 'step' thread."""
    (r,) = trace_rows(
        MI250_TOY,
        INCLUDE + "SELECT (SELECT COUNT(*) FROM guide_kineto_profiler_step) AS all_steps, "
        "(SELECT COUNT(*) FROM guide_train_step) AS cpu_steps, "
        "(SELECT GROUP_CONCAT(role) FROM guide_train_thread) AS roles",
    )
    assert r == {"all_steps": 3, "cpu_steps": 2, "roles": "step,autograd"}


PHASE_COMMAND_PAGES = tuple(
    REPO / edition / page
    for edition in ("docs", "docs-ja")
    for page in ("own-trace.md", "write-your-own-query.md")
)


def test_the_pages_one_command_splits_a_loop_without_labels() -> None:
    """The command "I already have a trace" and "Write your own query" show, in both editions,
    run as a reader runs it on another project's training trace: a row per phase, the forward,
    the backward and the optimizer with times, and the phases that trace lacks as NULL."""
    commands = {
        line.strip()
        for page in PHASE_COMMAND_PAGES
        for line in page.read_text(encoding="utf-8").splitlines()
        if "train_phases.sql" in line and line.strip().startswith(".venv/bin/python")
    }
    (command,) = commands
    argv = command.split()
    assert argv[:4] == [".venv/bin/python", "-m", "generators.tp", "query"]
    assert argv[4] == "trace.json.gz"
    argv = [sys.executable, *argv[1:4], str(MI250_TOY), *argv[5:]]
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300, check=True)
    lines = out.stdout.splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    by_phase = {row[0]: dict(zip(header, row, strict=True)) for row in cells}
    assert list(by_phase) == [*ALWAYS_ROWS, "rest of the step"]
    rows, _ = _foreign(MI250_TOY)
    for phase in ("forward", "backward", "optimizer"):
        assert int(by_phase[phase]["cpu_ns"]) == rows[phase]["cpu_ns"] > 0, phase
    for phase in ("data", "zero_grad"):
        assert by_phase[phase]["cpu_ns"] == "NULL" and by_phase[phase]["calls_per_step"] == "0.0"


def test_the_pages_listing_of_the_phases_says_which_rule_found_each() -> None:
    """Write your own query, section 8, both editions: the command that lists the phases runs as
    shown on another project's trace, one row per phase and step, each with its rule."""
    pages = (
        REPO / "docs" / "write-your-own-query.md",
        REPO / "docs-ja" / "write-your-own-query.md",
    )
    commands = {
        line.strip()
        for page in pages
        for line in page.read_text(encoding="utf-8").splitlines()
        if "FROM guide_train_phase " in line and line.strip().startswith(".venv/bin/python")
    }
    (command,) = commands
    argv = shlex.split(command)
    assert argv[:5] == [".venv/bin/python", "-m", "generators.tp", "query", "trace.json.gz"]
    argv = [sys.executable, *argv[1:4], str(V100), *argv[5:]]
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300, check=True)
    lines = out.stdout.splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [
        dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True))
        for line in lines[2:]
    ]
    found = {(r["phase"], r["found_by"]) for r in rows}
    assert found == {
        ("zero_grad", "label"),
        ("forward", "before the backward"),
        ("backward", "autograd engine"),
        ("optimizer", "label"),
    }
    assert len(rows) == len(found) * V100_STEPS
