"""Every claim docs/part-2/02-mlp.md makes about its traces, checked on the artifacts."""

from __future__ import annotations

import pytest

from tests.claims import capture_record, shown_device, table, trace_table, values

STEP = "mlp"


def _needs_cuda(variant: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        shown_device(STEP, variant, cpu_ok=False) is None,
        reason=f"no CUDA capture of mlp/{variant} committed yet",
    )


def _v(variant: str, *, cpu_ok: bool = True) -> dict[str, object]:
    return values(STEP, variant, cpu_ok=cpu_ok)["mlp_summary"]


def test_eager_runs_five_pieces_of_work() -> None:
    """'the guess is five': three GEMMs and two elementwise operators per step."""
    v = _v("eager")
    assert v["work_per_step"] == 5
    assert v["gemms_per_step"] == 3
    assert v["eager_pointwise_per_step"] == 2
    assert v["fused_per_step"] == 0
    rows = table(STEP, "eager", "mlp_work")
    assert [r["op_name"] for r in rows] == [
        "aten::mm",
        "aten::gelu",
        "aten::mm",
        "aten::mul",
        "aten::mm",
    ]


def test_eager_cpu_table_lists_operators_not_kernels() -> None:
    kinds = {r["kind"] for r in table(STEP, "eager", "mlp_work")}
    assert kinds == ({"CPU operator"} if shown_device(STEP, "eager") == "cpu" else {"GPU kernel"})


def test_three_gemms_have_the_same_flops() -> None:
    """'1 distinct FLOP count': 2 * tokens * width * hidden for all three projections."""
    v = _v("eager")
    assert v["gemm_distinct_flops"] == 1
    settings = capture_record(STEP, "eager")["settings"]
    tokens = settings["batch"] * settings["seq"]
    assert v["gemm_flops"] == 2 * tokens * settings["dim"] * settings["hidden"]
    rows = [r for r in table(STEP, "eager", "mlp_work") if r["flops"]]
    shapes = {(int(r["m"]), int(r["n"]), int(r["k"])) for r in rows}
    assert shapes == {
        (tokens, settings["hidden"], settings["dim"]),
        (tokens, settings["dim"], settings["hidden"]),
    }


def test_compiled_keeps_three_gemms_and_fuses_the_rest() -> None:
    """'the same 3 GEMMs, and 1 generated kernel'; its name lists gelu and mul."""
    eager, compiled = _v("eager"), _v("compiled")
    assert compiled["gemms_per_step"] == eager["gemms_per_step"] == 3
    assert compiled["fused_per_step"] == 1
    assert compiled["eager_pointwise_per_step"] == 0
    assert compiled["work_per_step"] == 4 < eager["work_per_step"]
    assert "gelu" in compiled["fused_ops"] and "mul" in compiled["fused_ops"]
    name = compiled["fused_name"]
    if shown_device(STEP, "compiled") == "cpu":
        assert name.startswith("graph_0_cpp_fused_")
    else:
        assert name.startswith("triton_poi_fused_")
    gemm_ops = {r["op_name"] for r in table(STEP, "compiled", "mlp_work") if r["flops"]}
    assert gemm_ops == {"aten::mm"}


def test_intermediate_bytes_from_shapes() -> None:
    """tokens x hidden x element size; written once and read once = twice that."""
    v = _v("eager")
    settings = capture_record(STEP, "eager")["settings"]
    element = {"fp32": 4, "bf16": 2}[settings["dtype"]]
    assert v["tokens"] == settings["batch"] * settings["seq"]
    assert v["hidden"] == settings["hidden"]
    assert v["intermediate_bytes"] == v["tokens"] * v["hidden"] * element
    assert v["avoided_traffic_bytes"] == 2 * v["intermediate_bytes"]


def test_compile_wrappers_cost_rows_and_time() -> None:
    eager, compiled = _v("eager"), _v("compiled")
    assert eager["wrapper_rows_per_step"] == 0
    assert compiled["wrapper_rows_per_step"] >= 4
    assert compiled["wrapper_self_ns_per_step"] > 0
    assert compiled["aten_rows_per_step"] < eager["aten_rows_per_step"]


def test_cpu_kernel_profile_is_enabled_for_cpu_compile() -> None:
    """The note: with enable_kernel_profile the C++ kernel has a row of its own."""
    if shown_device(STEP, "compiled") != "cpu":
        pytest.skip("the note is about the CPU capture")
    names = [r["name"] for r in trace_table(STEP, "compiled", "ops")]
    assert any(n.startswith("graph_0_cpp_fused_") for n in names)


# ---- CUDA-only sections -------------------------------------------------------------------------


@_needs_cuda("eager")
def test_cuda_two_different_gemm_kernels() -> None:
    v = _v("eager", cpu_ok=False)
    assert v["work_per_step"] == 5
    assert v["gemm_distinct_names"] == 2
    rows = [r for r in table(STEP, "eager", "mlp_work", cpu_ok=False) if r["flops"]]
    assert all(r["decoded"] and float(r["achieved_tflops"]) > 0 for r in rows)


@_needs_cuda("liger")
def test_cuda_liger_has_no_compile_wrappers_and_one_fused_kernel() -> None:
    v = _v("liger", cpu_ok=False)
    assert v["wrapper_rows_per_step"] == 0
    assert v["fused_per_step"] == 1
    assert v["gemms_per_step"] == 3
    assert v["eager_pointwise_per_step"] == 0
    assert "geglu" in v["fused_name"]
