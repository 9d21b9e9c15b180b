"""Every claim docs/part-3/01-attention.md makes about its traces, checked on the artifacts.

Claims that hold on any capture are checked on the one the page shows (CUDA when committed, else
CPU). Claims about GPU work are checked only once a CUDA capture of the variant exists.
"""

from __future__ import annotations

import pytest

from tests.claims import capture_record, shown_device, table, trace_table, values

STEP = "attention"
CPU_VARIANTS = ("naive", "naive_inplace", "sdpa_math", "sdpa_flash")
FUSED = {
    "sdpa_efficient": "efficient attention (CUTLASS fmha)",
    "sdpa_flash": "flash attention",
    "sdpa_cudnn": "cuDNN attention (generated)",
}


def fwd(variant: str, *, cpu_ok: bool = True) -> dict[str, object]:
    return values(STEP, variant, cpu_ok=cpu_ok)["attention_forward"]


def ops(variant: str) -> list[dict[str, str]]:
    # Asked of the trace: the page prints this table only for some variants.
    return trace_table(STEP, variant, "attention_ops")


def dims(cell: str) -> tuple[str, list[int]]:
    """'c10::BFloat16 [2, 8, 256, 64]' -> ('c10::BFloat16', [2, 8, 256, 64])."""
    dtype, _, rest = cell.partition(" [")
    inner = rest.rstrip("]")
    return dtype, [int(x) for x in inner.split(", ") if x]


def shape(variant: str) -> tuple[int, int, int, int]:
    v = fwd(variant)
    return int(v["batch"]), int(v["heads"]), int(v["seq"]), int(v["head_dim"])  # type: ignore[arg-type]


def needs_cuda(variant: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        shown_device(STEP, variant, cpu_ok=False) is None,
        reason=f"no CUDA capture of {STEP}/{variant} committed yet",
    )


# ---- the workload ------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", CPU_VARIANTS)
def test_one_forward_per_step_in_bf16(variant: str) -> None:
    """'q, k and v ... in bfloat16 ... one forward per profiler step inside attn_fwd'."""
    v = fwd(variant)
    record = capture_record(STEP, variant)
    assert v["forwards"] == record["schedule"]["active"]
    assert record["settings"]["dtype"] == "bf16"
    first = ops(variant)[0]
    assert dims(first["input0"])[0] == "c10::BFloat16"


def test_cuda_captures_use_the_reference_sizes() -> None:
    """'On a GPU ... batch 8, 16 heads, sequence length 1024 and head dimension 64'."""
    for variant in (*CPU_VARIANTS, "sdpa_efficient", "sdpa_cudnn"):
        if shown_device(STEP, variant, cpu_ok=False) is None:
            continue
        assert shape(variant) == (8, 16, 1024, 64)


def test_cpu_captures_are_smaller_and_single_threaded() -> None:
    """'The CPU captures use a smaller batch, fewer heads and a shorter sequence ... and run
    torch on one thread'."""
    for variant in (*CPU_VARIANTS, "sweep"):
        if shown_device(STEP, variant) == "cpu":
            assert capture_record(STEP, variant)["settings"]["threads"] == 1
            if variant != "sweep":
                b, h, s, d = shape(variant)
                assert b < 8 and h < 16 and s < 1024 and d == 64


# ---- naive ---------------------------------------------------------------------------------------
def test_naive_calls_the_five_guessed_operators_in_order() -> None:
    """'The five operators are there at depth 1': matmul, mul, masked_fill, softmax, matmul."""
    top = [r["name"] for r in ops("naive") if r["rel_depth"] == "1"]
    assert top == [
        "aten::matmul",
        "aten::mul",
        "aten::masked_fill",
        "aten::softmax",
        "aten::matmul",
    ]


def test_matmul_calls_bmm_on_3d_inputs_and_softmax_calls_softmax() -> None:
    """'each aten::matmul reshapes its 4-D inputs to 3-D and calls aten::bmm ... over
    batch x heads matrices, and aten::softmax calls aten::_softmax'."""
    rows = ops("naive")
    b, h, _, _ = shape("naive")
    for i, row in enumerate(rows):
        if row["name"] == "aten::matmul":
            assert len(dims(row["input0"])[1]) == 4
            child = rows[i + 1]
            assert child["name"] == "aten::bmm" and child["rel_depth"] == "2"
            bmm_dims = dims(child["input0"])[1]
            assert len(bmm_dims) == 3 and bmm_dims[0] == b * h
        if row["name"] == "aten::softmax":
            assert rows[i + 1]["name"] == "aten::_softmax"


def test_masked_fill_clones_then_fills_in_place() -> None:
    """'under aten::masked_fill: an aten::clone that allocates (aten::empty_like) and copies
    the whole score matrix (aten::copy_), and only then aten::masked_fill_'."""
    rows = ops("naive")
    b, h, s, _ = shape("naive")
    start = next(i for i, r in enumerate(rows) if r["name"] == "aten::masked_fill")
    inside = []
    for row in rows[start + 1 :]:
        if row["rel_depth"] == "1":
            break
        inside.append(row)
    names = [r["name"] for r in inside]
    assert names.index("aten::clone") < names.index("aten::masked_fill_")
    assert names.index("aten::empty_like") < names.index("aten::copy_")
    copy = next(r for r in inside if r["name"] == "aten::copy_")
    assert dims(copy["input0"])[1] == [b, h, s, s]


def test_copies_table_in_and_out_of_place() -> None:
    """'The clone under aten::masked_fill, with its allocation and its copy of a
    [batch, heads, seq, seq] tensor, is gone. What remains in both is ... aten::mul turns the
    Python float scale into a one-element tensor (aten::to of a double scalar)'."""
    out_of_place = table(STEP, "naive", "attention_copies")
    in_place = table(STEP, "naive_inplace", "attention_copies")
    pairs = {(r["parent"], r["name"]) for r in out_of_place}
    assert ("aten::masked_fill", "aten::clone") in pairs
    assert ("aten::clone", "aten::copy_") in pairs
    assert ("aten::clone", "aten::empty_like") in pairs
    assert all(r["name"] != "aten::clone" for r in in_place)
    assert {r["parent"] for r in in_place} <= {"aten::to", "aten::_to_copy", "aten::mul"}
    for rows in (out_of_place, in_place):
        scalar = next(r for r in rows if r["parent"] == "aten::to")
        assert scalar["name"] == "aten::_to_copy" and scalar["input0"] == "double []"
    assert fwd("naive")["clones_per_fwd"] == 1
    assert fwd("naive_inplace")["clones_per_fwd"] == 0


def test_in_place_has_fewer_operators_and_one_pass_less() -> None:
    """Operators per forward and passes over the score matrix, out of place vs in place."""
    naive, inplace = fwd("naive"), fwd("naive_inplace")
    assert naive["cpu_ops_per_fwd"] > inplace["cpu_ops_per_fwd"]  # type: ignore[operator]
    assert naive["score_passes"] == inplace["score_passes"] + 1  # type: ignore[operator]
    b, h, s, _ = shape("naive")
    assert naive["score_matrix_bytes"] == b * h * s * s * 2


def test_naive_builds_no_mask_inside_the_forward() -> None:
    """'where our naive version built its mask once, outside the loop'."""
    assert fwd("naive")["mask_ops_per_fwd"] == 0
    assert fwd("naive_inplace")["mask_ops_per_fwd"] == 0


# ---- math ----------------------------------------------------------------------------------------
def test_math_calls_more_operators_than_in_place() -> None:
    assert fwd("sdpa_math")["cpu_ops_per_fwd"] > fwd("naive_inplace")["cpu_ops_per_fwd"]  # type: ignore[operator]


def test_math_upcasts_qkv_computes_in_fp32_and_casts_back() -> None:
    """'The first three aten::to calls convert q, k and v from bfloat16 to float, and every
    aten::bmm after them multiplies float tensors ... converts back at the end'."""
    rows = ops("sdpa_math")
    b, h, s, d = shape("sdpa_math")
    casts = [r for r in rows if r["name"] == "aten::to"][:3]
    assert all(r["input0"] == f"c10::BFloat16 [{b}, {h}, {s}, {d}]" for r in casts)
    copies = [r for r in rows if r["name"] == "aten::copy_" and r["rel_depth"] == "5"]
    assert all(dims(r["input0"])[0] == "float" for r in copies[:3])
    bmms = [r for r in rows if r["name"] == "aten::bmm"]
    assert len(bmms) == 2 and all(dims(r["input0"])[0] == "float" for r in bmms)
    assert rows[-1]["name"] == "aten::copy_" and dims(rows[-1]["input0"])[0] == "c10::BFloat16"
    assert fwd("sdpa_math")["casts_per_fwd"] >= 4  # type: ignore[operator]


def test_math_rebuilds_the_mask_every_forward() -> None:
    """'aten::ones and aten::tril build a [seq, seq] lower-triangular boolean matrix,
    aten::scalar_tensor makes the fill value and aten::where turns the matrix into an additive
    bias ... added to the scores with aten::add_'."""
    rows = ops("sdpa_math")
    b, h, s, _ = shape("sdpa_math")
    names = [r["name"] for r in rows]
    first_bmm = names.index("aten::bmm")
    for op in ("aten::ones", "aten::tril", "aten::scalar_tensor", "aten::where"):
        assert op in names[:first_bmm], op
    tril = next(r for r in rows if r["name"] == "aten::tril")
    assert tril["input0"] == f"bool [{s}, {s}]"
    add = next(r for r in rows if r["name"] == "aten::add_")
    assert add["input0"] == f"float [{b}, {h}, {s}, {s}]"
    assert fwd("sdpa_math")["mask_ops_per_fwd"] >= 4  # type: ignore[operator]


def test_math_safe_softmax_checks_for_all_masked_rows() -> None:
    """'aten::_safe_softmax calls aten::softmax and then ... aten::isneginf, aten::all,
    aten::where'."""
    rows = ops("sdpa_math")
    start = next(i for i, r in enumerate(rows) if r["name"] == "aten::_safe_softmax")
    depth = int(rows[start]["rel_depth"])
    children = []
    for row in rows[start + 1 :]:
        if int(row["rel_depth"]) <= depth:
            break
        if int(row["rel_depth"]) == depth + 1:
            children.append(row["name"])
    assert children[0] == "aten::softmax"
    for op in ("aten::isneginf", "aten::all", "aten::where"):
        assert op in children[1:], op
    assert fwd("sdpa_math")["safe_softmax_per_fwd"] == 1


# ---- flash on the CPU ---------------------------------------------------------------------
def test_flash_on_cpu_is_one_compute_operator() -> None:
    """'the whole forward is one compute operator, aten::_scaled_dot_product_flash_attention_
    for_cpu, plus a few allocations' (CPU capture only)."""
    if shown_device(STEP, "sdpa_flash") != "cpu":
        pytest.skip("the page shows a CUDA capture of sdpa_flash")
    names = [r["name"] for r in ops("sdpa_flash")]
    assert names[:2] == [
        "aten::scaled_dot_product_attention",
        "aten::_scaled_dot_product_flash_attention_for_cpu",
    ]
    assert all(n.startswith("aten::empty") for n in names[2:])


def test_flash_reads_no_score_matrix() -> None:
    """'the count of passes over a [seq, seq] score matrix is 0'; q, k, v and output bytes."""
    v = fwd("sdpa_flash")
    assert v["score_passes"] == 0 and v["score_traffic_bytes"] == 0
    b, h, s, d = shape("sdpa_flash")
    assert v["qkvo_bytes"] == 4 * b * h * s * d * 2
    assert v["score_matrix_bytes"] == b * h * s * s * 2
    assert fwd("naive")["score_traffic_bytes"] > v["qkvo_bytes"]  # type: ignore[operator]


# ---- where the cost moved ------------------------------------------------------------------------
def test_math_is_the_slowest_on_the_cpu() -> None:
    """'On the CPU captures ... the math backend takes the longest per forward of the four'."""
    shown = [shown_device(STEP, v) for v in CPU_VARIANTS]
    if set(shown) != {"cpu"}:
        pytest.skip("the page shows CUDA captures")
    math = fwd("sdpa_math")["cpu_per_fwd_ns"]
    for variant in ("naive", "naive_inplace", "sdpa_flash"):
        assert math > fwd(variant)["cpu_per_fwd_ns"], variant  # type: ignore[operator]


def test_sdpa_self_time_only_where_sdpa_is_called() -> None:
    assert fwd("naive")["sdpa_self_per_fwd_ns"] == 0
    assert fwd("sdpa_math")["sdpa_self_per_fwd_ns"] > 0  # type: ignore[operator]


# ---- the sweep -----------------------------------------------------------------------------------
def sweep() -> list[dict[str, str]]:
    return table(STEP, "sweep", "attention_sweep")


def test_sweep_has_every_impl_at_every_length() -> None:
    """'One capture runs the in-place version, the math backend and every fused backend the
    device has at several sequence lengths (batch 1), one forward each per profiler step'."""
    rows = sweep()
    record = capture_record(STEP, "sweep")
    impls = {r["impl"] for r in rows}
    seqs = {int(r["seq"]) for r in rows}
    assert impls == set(record["settings"]["sweep_impls"])
    assert {"naive_inplace", "sdpa_math", "sdpa_flash"} <= impls
    assert seqs == set(record["settings"]["sweep_seqs"]) and len(seqs) >= 4
    assert len(rows) == len(impls) * len(seqs)
    assert all(int(r["forwards"]) == record["schedule"]["active"] for r in rows)
    assert record["settings"]["batch"] == 1
    if shown_device(STEP, "sweep") == "cuda":
        assert impls >= set(FUSED)


def test_sweep_flops_follow_the_formula() -> None:
    """'4 x batch x heads x seq^2 x head_dim'."""
    settings = capture_record(STEP, "sweep")["settings"]
    for row in sweep():
        s = int(row["seq"])
        assert int(row["flops"]) == 4 * settings["batch"] * settings["heads"] * s * s * 64


def test_flash_beats_math_at_the_longest_length_on_cpu() -> None:
    """'On the CPU capture, at the longest length, the fused flash kernel is well ahead of the
    math backend'."""
    if shown_device(STEP, "sweep") != "cpu":
        pytest.skip("the page shows a CUDA sweep")
    rows = sweep()
    longest = max(int(r["seq"]) for r in rows)
    at = {r["impl"]: float(r["cpu_per_fwd_ns"]) for r in rows if int(r["seq"]) == longest}
    assert at["sdpa_flash"] * 1.5 < at["sdpa_math"]


# ---- CUDA-only claims ---------------------------------------------------------------------
def kernels(variant: str) -> list[dict[str, str]]:
    return table(STEP, variant, "attention_kernels", cpu_ok=False)


@needs_cuda("naive")
def test_naive_gpu_work_per_operator() -> None:
    """'aten::bmm a GEMM, aten::mul an elementwise kernel, aten::_softmax a softmax kernel, and
    the hidden aten::copy_ a device-to-device memory copy'; one copy per forward."""
    rows = table(STEP, "naive", "attention_ops", cpu_ok=False)
    work = {}
    for row in rows:
        work.setdefault(row["name"], row["gpu_work"])
    assert "GEMM" in work["aten::bmm"]
    assert "elementwise" in work["aten::mul"]
    assert "softmax" in work["aten::_softmax"]
    assert "memcpy" in work["aten::clone"]
    assert fwd("naive", cpu_ok=False)["copies_per_fwd"] == 1


@needs_cuda("naive")
def test_naive_copy_is_a_dtod_memcpy_launched_by_cudamemcpyasync() -> None:
    """'a Memcpy DtoD on the stream, launched by cudaMemcpyAsync from inside aten::copy_'."""
    copies = table(STEP, "naive", "attention_copies", cpu_ok=False)
    copy = next(r for r in copies if r["parent"] == "aten::clone" and r["name"] == "aten::copy_")
    assert copy["gpu_work"].startswith("Memcpy DtoD")
    assert copy["launch_api"] == "cudaMemcpyAsync"
    assert any(r["family"] == "memcpy" for r in kernels("naive"))


@needs_cuda("naive_inplace")
def test_in_place_launches_no_copy() -> None:
    assert fwd("naive_inplace", cpu_ok=False)["copies_per_fwd"] == 0
    assert all(r["family"] != "memcpy" for r in kernels("naive_inplace"))


@needs_cuda("sdpa_math")
def test_math_launches_more_kernels_and_takes_longer_than_in_place() -> None:
    """Math: more kernels and more GPU time per forward than the in-place version; fp32 GEMMs
    on CUDA cores where the naive version gets tensor-core GEMMs."""
    math, inplace = fwd("sdpa_math", cpu_ok=False), fwd("naive_inplace", cpu_ok=False)
    assert math["kernels_per_fwd"] > inplace["kernels_per_fwd"]  # type: ignore[operator]
    assert math["gpu_per_fwd_ns"] > inplace["gpu_per_fwd_ns"]  # type: ignore[operator]
    math_families = {r["family"] for r in kernels("sdpa_math")}
    assert "GEMM, fp32 on CUDA cores" in math_families
    assert "GEMM, tensor cores" not in math_families
    assert "GEMM, tensor cores" in {r["family"] for r in kernels("naive_inplace")}


@pytest.mark.parametrize("variant", sorted(FUSED))
def test_fused_backends_run_one_attention_kernel(variant: str) -> None:
    """'the efficient, flash and cuDNN backends each run attention as one fused kernel per
    forward', with the names the page decodes."""
    if shown_device(STEP, variant, cpu_ok=False) is None:
        pytest.skip(f"no CUDA capture of {STEP}/{variant} committed yet")
    rows = [r for r in kernels(variant) if r["family"] == FUSED[variant]]
    assert len(rows) == 1 and float(rows[0]["per_fwd"]) == 1
    name = rows[0]["name"]
    expected = {
        "sdpa_efficient": "fmha_cutlassF",
        "sdpa_flash": "pytorch_flash::flash_fwd_kernel",
        "sdpa_cudnn": "cudnn",
    }[variant]
    assert expected in name
    assert fwd(variant, cpu_ok=False)["score_passes"] == 0


@needs_cuda("sdpa_flash")
def test_flash_occupancy_is_limited_by_registers() -> None:
    """'The flash kernel spends the whole register budget ... Fewer resident warps'."""
    row = next(r for r in kernels("sdpa_flash") if r["family"] == "flash attention")
    assert int(row["registers_per_thread"]) >= 200
    assert float(row["register_occupancy_pct"]) <= 25
    assert float(row["reported_occupancy_pct"]) <= float(row["register_occupancy_pct"])


@pytest.mark.parametrize("variant", ["sdpa_efficient", "sdpa_flash"])
def test_efficient_and_flash_launch_through_the_runtime(variant: str) -> None:
    if shown_device(STEP, variant, cpu_ok=False) is None:
        pytest.skip(f"no CUDA capture of {STEP}/{variant} committed yet")
    row = next(r for r in kernels(variant) if r["family"] == FUSED[variant])
    assert row["launch_api"] == "cudaLaunchKernel"


@needs_cuda("sdpa_cudnn")
def test_cudnn_launches_through_the_driver_api() -> None:
    """'Its attention kernel goes through the driver API's cuLaunchKernel family'."""
    row = next(r for r in kernels("sdpa_cudnn") if r["family"] == FUSED["sdpa_cudnn"])
    assert row["launch_api"].startswith("cuLaunchKernel")
    assert "cuLaunchKernel" in str(fwd("sdpa_cudnn", cpu_ok=False)["launch_apis"])
