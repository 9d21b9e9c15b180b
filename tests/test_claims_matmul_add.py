"""Every claim docs/part-1/01-first-trace.md makes about its traces, checked on the artifacts."""

from __future__ import annotations

import re

from tests.claims import shown_device, table, values, variant_dir

STEP, VARIANT = "matmul_add", "small_cold"


def _ops() -> dict[str, dict[str, str]]:
    return {row["name"]: row for row in table(STEP, VARIANT, "ops")}


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


def test_first_active_step_is_widest_and_dispatch_delay_shrinks() -> None:
    """'the first active step is the widest, and the time from the label to the first aten::
    operator shrinks from one step to the next'."""
    rows = table(STEP, VARIANT, "steps")
    durations = [int(r["dur_ns"]) for r in rows]
    delays = [int(r["first_op_delay_ns"]) for r in rows]
    assert durations[0] == max(durations)
    assert delays == sorted(delays, reverse=True)
