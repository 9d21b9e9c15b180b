"""Every claim docs/part-2/02-mlp.md makes about its traces, checked on the artifacts."""

from __future__ import annotations

import re

import pytest

from generators.steps import REPO_ROOT
from tests.claims import capture_record, needs_cuda, shown_device, table, trace_table, values

STEP = "mlp"


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


def test_kernel_name_count_is_not_shown_on_cpu() -> None:
    """Distinct GEMM kernel names only exist on a GPU: NULL on a CPU capture, not a count."""
    if shown_device(STEP, "eager") != "cpu":
        pytest.skip("checks the CPU capture")
    assert _v("eager")["gemm_distinct_names"] is None


def test_cpu_kernel_profile_is_enabled_for_cpu_compile() -> None:
    """The note: with enable_kernel_profile the C++ kernel has a row of its own."""
    if shown_device(STEP, "compiled") != "cpu":
        pytest.skip("the note is about the CPU capture")
    names = [r["name"] for r in trace_table(STEP, "compiled", "ops")]
    assert any(n.startswith("graph_0_cpp_fused_") for n in names)


# ---- CUDA-only sections -------------------------------------------------------------------------


@needs_cuda(STEP, "eager")
def test_cuda_two_different_gemm_kernels() -> None:
    v = _v("eager", cpu_ok=False)
    assert v["work_per_step"] == 5
    # 'two if cuBLAS chose differently for the two shapes, one if the same kernel suits both'
    assert v["gemm_distinct_names"] in (1, 2)
    rows = [r for r in table(STEP, "eager", "mlp_work", cpu_ok=False) if r["flops"]]
    assert all(r["decoded"] and float(r["achieved_tflops"]) > 0 for r in rows)


@needs_cuda(STEP, "liger")
def test_cuda_liger_has_no_compile_wrappers_and_one_fused_kernel() -> None:
    v = _v("liger", cpu_ok=False)
    assert v["wrapper_rows_per_step"] == 0
    assert v["fused_per_step"] == 1
    assert v["gemms_per_step"] == 3
    assert v["eager_pointwise_per_step"] == 0
    assert "geglu" in v["fused_name"]
    # 'the decoder reads such a name as a gated GELU'
    fused = [r for r in table(STEP, "liger", "mlp_work", cpu_ok=False) if "geglu" in r["name"]]
    assert fused and all(r["decoded"].startswith("Liger (Triton) · gated GELU") for r in fused)


@needs_cuda(STEP, "eager")
def test_cuda_gemm_kernels_split_by_shape_and_down_proj_is_fastest() -> None:
    """'one for gate_proj and up_proj and another for down_proj', 'differ in the tile', and
    'down_proj ... reaching a higher throughput than the two wide projections'."""
    for variant in ("eager", "compiled", "liger"):
        if shown_device(STEP, variant, cpu_ok=False) is None:
            continue
        rows = [r for r in table(STEP, variant, "mlp_work", cpu_ok=False) if r["flops"]]
        wide = [r for r in rows if int(r["k"]) < int(r["n"])]
        narrow = [r for r in rows if int(r["k"]) > int(r["n"])]
        assert len(wide) == 2 and len(narrow) == 1
        assert len({r["name"] for r in wide}) == 1 and wide[0]["name"] != narrow[0]["name"]
        tiles = {r["decoded"].split("tile ")[1].split(" ")[0] for r in rows}
        assert len(tiles) == 2
        assert float(narrow[0]["achieved_tflops"]) > max(float(r["achieved_tflops"]) for r in wide)
    assert _v("eager", cpu_ok=False)["gemm_distinct_names"] == 2


@needs_cuda(STEP, "eager")
def test_cuda_cublas_memsets_are_not_counted_as_kernels() -> None:
    """'before each of the first two GEMM kernels sits a `Memset (Device)` entry'."""
    rows = trace_table(STEP, "eager", "timeline")
    memsets = [r for r in rows if r["name"] == "Memset (Device)"]
    assert len(memsets) == 2
    gpu = sorted(
        (r for r in rows if r["lane"] == memsets[0]["lane"]), key=lambda r: int(r["start_ns"])
    )
    gemms = [
        i for i, r in enumerate(gpu) if r["category"] == "kernel" and "elementwise" not in r["name"]
    ]
    assert len(gemms) == 3
    assert [gpu[i - 1]["name"] for i in gemms[:2]] == ["Memset (Device)"] * 2
    assert gpu[gemms[2] - 1]["name"] != "Memset (Device)"
    assert sum(r["name"] == "cudaMemsetAsync" for r in rows) == 2
    assert all("Memset" not in r["name"] for r in table(STEP, "eager", "mlp_work", cpu_ok=False))


@needs_cuda(STEP, "liger")
@needs_cuda(STEP, "compiled")
def test_cuda_fused_kernels_beat_eager_pointwise_and_liger_beats_inductor() -> None:
    eager = table(STEP, "eager", "mlp_work", cpu_ok=False)
    pointwise_ns = sum(int(r["dur_ns"]) for r in eager if not r["flops"])
    liger, compiled = _v("liger", cpu_ok=False), _v("compiled", cpu_ok=False)
    assert liger["fused_ns_per_step"] < compiled["fused_ns_per_step"] < pointwise_ns
    assert liger["wrapper_rows_per_step"] == 0 < compiled["wrapper_rows_per_step"]
    assert any(r["op_name"] == "LigerGELUMulFunction" for r in table(STEP, "liger", "mlp_work"))
    # 'all three variants run the same cuBLAS kernels for the three projections'
    names = {
        v: [r["name"] for r in table(STEP, v, "mlp_work", cpu_ok=False) if r["flops"]]
        for v in ("eager", "compiled", "liger")
    }
    assert names["eager"] == names["compiled"] == names["liger"]


def test_sizes_come_from_the_capture_record() -> None:
    """The sizes in the prose are the capture record's settings (placeholders, not typed)."""
    for variant in ("eager", "compiled"):
        shown = values(STEP, variant)["settings"]
        record = capture_record(STEP, variant)["settings"]
        for key in ("batch", "seq", "dim", "hidden", "dtype"):
            assert shown[key] == record[key]
        v = _v(variant)
        assert v["tokens"] == record["batch"] * record["seq"]
        assert v["hidden"] == record["hidden"]


@needs_cuda(STEP, "eager")
def test_cuda_gemm_names_differ_from_the_reference_a100() -> None:
    """'The reference saw' (GEMMs): on the H200 cuBLAS's Hopper `nvjet_sm90_…` kernels, tile
    first, three capital layout letters at the end, where the A100 ran `ampere_…_tn`."""
    rows = table(STEP, "eager", "mlp_work", cpu_ok=False)
    gemms = [r["name"] for r in rows if r["flops"]]
    assert len(gemms) == 3
    for name in gemms:
        assert name.startswith("nvjet_sm90_")
        layout = name.rsplit("_", 1)[1]
        assert len(layout) == 3 and layout.isupper()
        assert "ampere" not in name


@needs_cuda(STEP, "liger")
def test_cuda_liger_beats_inductor_unlike_the_reference() -> None:
    """'The reference saw' (Liger): the reference's Inductor kernel was a few percent faster;
    here Liger's is faster 'by a wide margin' (more than a tenth)."""
    liger = _v("liger", cpu_ok=False)["fused_ns_per_step"]
    inductor = _v("compiled", cpu_ok=False)["fused_ns_per_step"]
    assert liger < 0.9 * inductor


@needs_cuda(STEP, "eager")
def test_bandwidth_shares_are_in_bytes_per_second_not_printed_units() -> None:
    """'a TiB/s is 2⁴⁰ bytes per second ... a TB/s is 10¹² bytes per second, about nine tenths
    of a TiB/s. The percentage is computed from bytes per second on both sides ... dividing the
    printed bandwidth by the datasheet's figure ... gives a share about a tenth too low'."""
    from generators.units import format_value

    datasheet = 4.8e12  # the H200's datasheet bandwidth (guide.hardware), 4.8 TB/s
    assert 0.9 < 1e12 / 2**40 < 0.92
    rows = [r for r in table(STEP, "eager", "mlp_work", cpu_ok=False) if r["bytes_peak_pct"]]
    assert rows
    for r in rows:
        rate = float(r["achieved_bytes_per_s"])
        assert float(r["bytes_peak_pct"]) == pytest.approx(100 * rate / datasheet)
        printed = format_value(rate, "achieved_bytes_per_s")
        assert printed.endswith(" TiB/s")
        naive = 100 * float(printed.split()[0]) / (datasheet / 1e12)
        assert naive == pytest.approx(float(r["bytes_peak_pct"]) * 1e12 / 2**40, rel=0.01)


def test_kernel_names_page_reads_the_compiled_kernel_as_a_pointwise_fusion() -> None:
    """docs/part-2/03-kernel-names.md, In short and "Check yourself": the compiled MLP's
    generated kernel 'is a pointwise kernel fusing' the operators its name lists, it sits
    'between the second and the third GEMM', and it replaces eager mode's elementwise kernels."""
    v = _v("compiled")
    rows = table(STEP, "compiled", "mlp_work")
    kinds = ["GEMM" if r["flops"] else "fused" for r in rows]
    assert kinds == ["GEMM", "GEMM", "fused", "GEMM"]
    fused = rows[2]
    assert fused["name"] == v["fused_name"]
    if shown_device(STEP, "compiled") == "cuda":
        assert v["fused_work"] == "pointwise"
        assert fused["name"].startswith("triton_poi_fused_")
        assert f"pointwise · fuses {v['fused_ops']}" in fused["decoded"]
    assert _v("eager")["eager_pointwise_per_step"] == 2 and v["eager_pointwise_per_step"] == 0


@needs_cuda(STEP, "liger", "compiled")
def test_the_liger_capture_records_no_library_versions() -> None:
    """'its record ... names no `liger-kernel` or Triton version, while the compiled capture's
    names the Triton that built Inductor's kernel'; 'made a day before the eager and compiled
    ones'; 'the same GPU, driver and PyTorch'."""
    liger = capture_record(STEP, "liger", cpu_ok=False)
    compiled = capture_record(STEP, "compiled", cpu_ok=False)
    eager = capture_record(STEP, "eager", cpu_ok=False)
    assert "libraries" not in liger["environment"]
    assert "triton" in compiled["environment"]["libraries"]
    for key in ("gpu", "nvidia_driver", "torch"):
        assert liger["environment"][key] == compiled["environment"][key]
    assert liger["captured_at"][:10] < eager["captured_at"][:10] == compiled["captured_at"][:10]
    # "The requirements already pinned a liger-kernel release": the GPU requirements pin one.
    gpu_requirements = (REPO_ROOT / "requirements" / "gpu.txt").read_text()
    assert re.search(r"^liger-kernel==\S+", gpu_requirements, re.M)
