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

import pytest

from tests.claims import ARTIFACTS
from tests.reference_traces import V100
from tests.sql_rows import query_rows, trace_rows

# Tests that read the same traces run in one worker process of `make test`, which imports each
# trace once (tests/open_traces.py); the other worker runs the rest.
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
    # No forward/backward labels in that trace: no GEMM counts, rather than wrong ones.
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
    (summed,) = trace_rows(
        V100,
        INCLUDE + "SELECT SUM(g.dur) AS ns FROM guide_train_phase_gpu AS g "
        "JOIN guide_train_phase AS p ON p.id = g.phase_id WHERE p.phase = 'optimizer'",
    )
    phases = {r["phase"]: r for r in _v100("train_phases")}
    assert set(phases) == {"optimizer", "zero_grad", "rest of the step"}
    gpu_ns = phases["optimizer"]["gpu_ns"] * V100_STEPS
    assert 0 < gpu_ns <= summed["ns"] + V100_STEPS  # per-step averages are truncated to ns
    assert phases["optimizer"]["gpu_pct"] == 100


def test_copies_on_a_gpu_trace() -> None:
    """The V100 trace's device-to-device copies, launched from the step's and the engine's
    threads, are all found, with their bytes; kernel time during a copy never exceeds it."""
    (row,) = _v100("train_copies")
    assert row["name"] == "Memcpy DtoD (Device -> Device)"
    assert row["launch_name"] == "cudaMemcpyAsync"
    assert row["phase"] == "outside the phases"
    (count,) = trace_rows(
        V100, INCLUDE + "SELECT COUNT(*) AS n FROM slice WHERE name GLOB 'Memcpy DtoD*'"
    )
    assert row["copies_per_step"] * V100_STEPS == count["n"]
    assert row["copy_bytes"] > 0 and 0 <= row["overlap_ns"] <= row["copy_ns"]


def test_no_readback_no_memory_events_in_the_reference() -> None:
    """Queries whose subject a trace lacks say so with zeros and NULLs, not with errors."""
    (r,) = _v100("train_readback")
    assert r["reads_per_step"] == 0 and r["gpu_idle_after_read_ns"] is None
    assert 0 < r["gpu_busy_pct"] <= 100
    assert _v100("train_memory_timeline") == ()


def test_fp32_casts_are_scalars_and_integers() -> None:
    """On the CPU capture's fp32 loop, the aten::_to_copy calls convert a Python number
    ('double') or an integer tensor ('long int')."""
    trace = CPU_TRAIN / "naive" / "trace.json.gz"
    rows = trace_rows(
        trace,
        INCLUDE + "SELECT DISTINCT extract_arg(s.arg_set_id, 'args.Input type[0]') AS t "
        "FROM guide_train_phase_op AS o JOIN slice AS s ON s.id = o.id "
        "JOIN guide_train_phase AS p ON p.id = o.phase_id "
        "WHERE o.name = 'aten::_to_copy' AND p.phase IN ('forward', 'backward') ORDER BY t",
    )
    assert [r["t"] for r in rows] == ["double", "long int"]


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
