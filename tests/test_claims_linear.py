"""Every claim docs/part-2/01-linear.md makes about its traces, checked on the artifacts."""

from __future__ import annotations

import pytest

from tests.claims import (
    capture_record,
    needs_cuda,
    shown_device,
    table,
    trace_table,
    trace_values,
    values,
)

STEP = "linear"
needs_cuda_eager = needs_cuda(STEP, "eager")
needs_cuda_compiled = needs_cuda(STEP, "compiled")


def _v(variant: str, query: str) -> dict[str, object]:
    return values(STEP, variant)[query]


def test_linear_runs_t_then_addmm() -> None:
    """'Two children: aten::t ... and aten::addmm'."""
    rows = table(STEP, "eager", "linear_chain")
    children = [r["name"] for r in rows if r["depth"] == "1"]
    assert children == ["aten::t", "aten::addmm"]
    assert rows[0]["name"] == "aten::linear" and rows[0]["depth"] == "0"


def test_t_swaps_shape_and_strides() -> None:
    """The weight's shape/strides going in and the view's coming out: swapped, same data."""
    v = _v("eager", "linear_view")
    assert v["w_dims"] == "[64, 32]" and v["w_strides"] == "[32, 1]"
    assert v["wt_dims"] == "[32, 64]" and v["wt_strides"] == "[1, 32]"


def test_t_contains_only_view_operators() -> None:
    """'of which 0 are anything other than aten::transpose and aten::as_strided'."""
    v = _v("eager", "linear_view")
    assert v["t_calls"] == trace_values(STEP, "eager", "step_summary")["steps"]
    assert v["t_child_ops"] == 2 * v["t_calls"]
    assert v["t_child_ops_doing_work"] == 0
    names = {r["name"] for r in table(STEP, "eager", "linear_chain") if r["depth"] in ("2", "3")}
    assert {"aten::transpose", "aten::as_strided"} <= names


def test_no_add_and_addmm_inside_linear() -> None:
    """'every aten::addmm sits directly inside an aten::linear'; no aten::add, no aten::mm."""
    v = _v("eager", "linear_ops")
    assert v["linear_calls"] == v["addmm_calls"] == v["addmm_called_by_linear"] > 0
    assert v["add_calls"] == 0
    assert v["mm_calls"] == 0


def test_cpu_bias_is_broadcast_with_stride_zero_and_copied() -> None:
    """CPU: expand with strides [0, 1], then aten::copy_ inside addmm."""
    if shown_device(STEP, "eager") != "cpu":
        pytest.skip("the CPU paragraph describes the CPU capture")
    rows = table(STEP, "eager", "linear_chain")
    view_args = [r["view_args"] for r in rows if r["name"] == "aten::as_strided"]
    assert any(a.endswith("/ [0, 1]") for a in view_args)
    v = _v("eager", "linear_ops")
    assert v["copies_inside_addmm"] == v["addmm_calls"]


def test_gpu_counts_are_not_shown_as_zeros_on_cpu() -> None:
    """The GPU-only counts (runtime calls, arrows, kernels, copies) are NULL on a CPU capture."""
    if shown_device(STEP, "eager") != "cpu":
        pytest.skip("checks the CPU capture")
    view, ops = _v("eager", "linear_view"), _v("eager", "linear_ops")
    for key in ("t_runtime_calls", "t_flows", "t_kernels", "t_device_ns"):
        assert view[key] is None, key
    for key in ("kernels", "addmm_kernels", "addmm_copies"):
        assert ops[key] is None, key


def test_gemm_flops_from_shapes() -> None:
    """2 * M * N * K from the recorded shapes; kernel columns empty on CPU; the type is named
    as elsewhere in the guide (fp32 on CPU, bf16 on CUDA)."""
    rows = table(STEP, "eager", "linear_gemm")
    assert len(rows) == 1
    row = rows[0]
    dtype = capture_record(STEP, "eager")["settings"]["dtype"]
    assert row["dtype"] == dtype
    m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
    assert (m, n, k) == (1024, 64, 32)
    assert int(row["flops"]) == 2 * m * n * k
    if shown_device(STEP, "eager") == "cpu":
        assert row["kernel"] == "" and row["achieved_tflops"] == ""


def test_compile_removes_linear_and_t_rows_and_adds_wrappers() -> None:
    """The eager vs compiled row table: fewer aten rows, no linear/t chain, same single addmm,
    and compile wrappers that eager does not have."""
    eager, compiled = _v("eager", "linear_rows"), _v("compiled", "linear_rows")
    assert eager["linear_t_rows_per_step"] == 3
    assert compiled["linear_t_rows_per_step"] == 0
    assert eager["addmm_per_step"] == compiled["addmm_per_step"] == 1
    assert compiled["aten_rows_per_step"] < eager["aten_rows_per_step"]
    assert eager["wrapper_rows_per_step"] == 0
    assert compiled["wrapper_rows_per_step"] >= 4
    assert eager["wrapper_self_ns_per_step"] == 0 < compiled["wrapper_self_ns_per_step"]
    names = {r["name"] for r in trace_table(STEP, "compiled", "ops")}
    for wrapper in ("TorchDynamo Cache Lookup", "Pregraph bytecode"):
        assert wrapper in names
    assert any(n.startswith("Torch-Compiled Region") for n in names)
    assert any(n.startswith("## Call CompiledFxGraph") for n in names)
    assert "aten::linear" not in names and "aten::t" not in names


# ---- CUDA-only sections -------------------------------------------------------------------------


@needs_cuda_eager
def test_cuda_t_launches_nothing() -> None:
    v = values(STEP, "eager", cpu_ok=False)["linear_view"]
    assert v["t_runtime_calls"] == v["t_flows"] == v["t_kernels"] == v["t_device_ns"] == 0


@needs_cuda_eager
def test_cuda_addmm_adds_the_bias_in_the_gemm_epilogue() -> None:
    """'expect the second way': one kernel per addmm and no copy; the GEMM table names it."""
    v = values(STEP, "eager", cpu_ok=False)["linear_ops"]
    assert v["addmm_kernels"] == v["addmm_calls"] == v["linear_calls"] > 0
    assert v["addmm_copies"] == 0
    gemm = table(STEP, "eager", "linear_gemm", cpu_ok=False)
    assert gemm[0]["kernel"] and gemm[0]["decoded"]
    assert float(gemm[0]["achieved_tflops"]) > 0


@needs_cuda_eager
@needs_cuda_compiled
def test_cuda_compiled_uses_the_same_kernel() -> None:
    """'expect its GEMM kernel to carry the same name as the eager layer's'."""
    eager = {r["kernel"] for r in table(STEP, "eager", "linear_gemm", cpu_ok=False)}
    compiled = {r["kernel"] for r in table(STEP, "compiled", "linear_gemm", cpu_ok=False)}
    assert eager == compiled


@needs_cuda_eager
def test_cuda_addmm_has_no_nested_copy_and_the_name_says_bias() -> None:
    """'aten::addmm has no nested operators at all' and the nvjet name carries `bias`."""
    chain = table(STEP, "eager", "linear_chain", cpu_ok=False)
    ops = [r["name"] for r in chain]
    assert ops[-1] == "aten::addmm" and "aten::expand" not in ops and "aten::copy_" not in ops
    assert values(STEP, "eager", cpu_ok=False)["linear_ops"]["copies_inside_addmm"] == 0
    gemm = table(STEP, "eager", "linear_gemm", cpu_ok=False)
    assert all("fuses bias" in r["decoded"] for r in gemm)
    assert all("_bias_" in r["kernel"] for r in gemm if r["kernel"].startswith("nvjet_"))


@needs_cuda_eager
def test_cuda_small_gemm_is_below_a_hundredth_of_the_mlp_gemms() -> None:
    """'below a hundredth of what the same GPU reaches on the larger GEMMs of the next page'."""
    if shown_device("mlp", "eager", cpu_ok=False) is None:
        pytest.skip("no CUDA capture of mlp/eager")
    linear = max(float(r["achieved_tflops"]) for r in table(STEP, "eager", "linear_gemm"))
    mlp = [float(r["achieved_tflops"]) for r in table("mlp", "eager", "mlp_work") if r["flops"]]
    assert linear < min(mlp) / 100
    assert float(table(STEP, "eager", "linear_gemm")[0]["flops"]) < 1e7  # 'a few million'


def test_sizes_come_from_the_capture_record() -> None:
    """The sizes in the prose are the capture record's settings (placeholders, not typed)."""
    for variant in ("eager", "compiled"):
        shown = values(STEP, variant)["settings"]
        record = capture_record(STEP, variant)["settings"]
        for key in ("batch", "in_dim", "out_dim", "dtype"):
            assert shown[key] == record[key]


@needs_cuda_eager
def test_cuda_kernel_differs_from_the_reference_a100() -> None:
    """'The reference saw': one kernel per addmm, an `nvjet_sm90_…_bias_TNT`-style cuBLAS kernel
    (bias in the name, three layout letters) where the A100 ran a CUTLASS `…_tn_align8` one."""
    rows = table(STEP, "eager", "linear_gemm", cpu_ok=False)
    assert rows
    for r in rows:
        name = r["kernel"]
        assert name.startswith("nvjet_sm90_") and "_bias_" in name
        layout = name.rsplit("_", 1)[1]
        assert len(layout) == 3 and layout.isupper()
