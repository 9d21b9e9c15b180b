"""Every claim the Part 3 pages (docs/part-3/) make about their traces, checked on the artifacts.

Claims that hold on any capture are checked on the one the page shows (CUDA when committed, else
CPU). Claims about GPU work are checked only once a CUDA capture of the variant exists.
"""

from __future__ import annotations

import csv
import math

import pytest

from generators.steps import get_step
from tests.claims import (
    ARTIFACTS,
    capture_record,
    needs_cuda,
    shown_device,
    table,
    trace_table,
    values,
    variant_dir,
)

# Tests that read the same traces run in one worker process when `make test TEST_WORKERS=N` shares
# the suite out, so that each trace is imported once (tests/open_traces.py).
pytestmark = pytest.mark.xdist_group("attention-traces")

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


def cuda_arg(variant: str, flag: str) -> str:
    """A workload argument of a variant's CUDA capture, as the registry gives it."""
    args = get_step(STEP).variant(variant).args_for("cuda")
    assert args is not None
    return args[args.index(flag) + 1]


def cpu_only(*variants: str) -> None:
    """Skip a claim the page makes about CPU captures once a CUDA capture is shown instead."""
    if any(shown_device(STEP, v) != "cpu" for v in variants):
        pytest.skip("the page shows a CUDA capture")


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


def test_gpu_metrics_are_null_on_cpu_captures() -> None:
    """GPU metrics of a CPU capture read "–", never a measured zero."""
    for variant in (*CPU_VARIANTS, "sweep"):
        if shown_device(STEP, variant) != "cpu":
            continue
        if variant == "sweep":
            for row in table(STEP, variant, "attention_sweep"):
                assert row["gpu_ns_per_fwd"] == row["kernels_per_fwd"] == row["gpu_tflops"] == ""
            continue
        v = fwd(variant)
        for key in ("kernels_per_fwd", "copies_per_fwd", "gpu_ns_per_fwd", "gpu_tflops"):
            assert v[key] is None, (variant, key)


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
    [batch, heads, seq, seq] tensor, is gone, and on the GPU capture nothing else allocates or
    copies: the in-place list is empty. aten::mul ... hands the number to its kernel as an
    argument (the AUnaryFunctor in the kernel's name). A CPU capture ... shows one more, tiny copy
    in both versions: there, aten::mul turns scale into a zero-dimensional tensor first'."""
    out_of_place = table(STEP, "naive", "attention_copies")
    in_place = table(STEP, "naive_inplace", "attention_copies")
    pairs = {(r["parent"], r["name"]) for r in out_of_place}
    assert ("aten::masked_fill", "aten::clone") in pairs
    assert ("aten::clone", "aten::copy_") in pairs
    assert ("aten::clone", "aten::empty_like") in pairs
    assert all(r["name"] != "aten::clone" for r in in_place)
    assert fwd("naive")["clones_per_fwd"] == 1
    assert fwd("naive_inplace")["clones_per_fwd"] == 0
    if shown_device(STEP, "naive_inplace") == "cuda":
        assert in_place == []
        assert {r["parent"] for r in out_of_place} <= {
            "aten::masked_fill",
            "aten::clone",
            "aten::empty_like",
        }
        mul = next(r for r in kernels("naive") if "MulFunctor" in r["name"])
        assert "AUnaryFunctor" in mul["name"]
    for variant in ("naive", "naive_inplace"):
        cpu_dir = ARTIFACTS / "cpu" / STEP / variant / "attention_copies.csv"
        if not cpu_dir.exists():
            continue
        with cpu_dir.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        scalar = next(r for r in rows if r["parent"] == "aten::to")
        assert scalar["name"] == "aten::_to_copy" and scalar["input0"] == "double []"


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
def test_flash_is_one_chain_of_calls() -> None:
    """'aten::scaled_dot_product_attention calls aten::_scaled_dot_product_flash_attention, which
    calls aten::_flash_attention_forward; that allocates the output and a few small buffers
    (aten::empty*) and launches one kernel'; its first input is q as [batch, seq, heads,
    head_dim]; 'on a CPU capture, the same call lands in
    aten::_scaled_dot_product_flash_attention_for_cpu'."""
    rows = ops("sdpa_flash")
    names = [r["name"] for r in rows]
    if shown_device(STEP, "sdpa_flash") == "cuda":
        assert names[:3] == [
            "aten::scaled_dot_product_attention",
            "aten::_scaled_dot_product_flash_attention",
            "aten::_flash_attention_forward",
        ]
        assert [r["rel_depth"] for r in rows[:3]] == ["1", "2", "3"]
        assert all(n.startswith("aten::empty") for n in names[3:])
        b, h, s, d = shape("sdpa_flash")
        assert dims(rows[2]["input0"])[1] == [b, s, h, d]
        assert rows[2]["gpu_work"] == "flash attention"
        assert fwd("sdpa_flash")["kernels_per_fwd"] == 1
    cpu_rows = ARTIFACTS / "cpu" / STEP / "sdpa_flash" / "attention_ops.csv"
    if cpu_rows.exists():
        with cpu_rows.open(newline="") as fh:
            cpu_names = [r["name"] for r in csv.DictReader(fh)]
        assert cpu_names[1] == "aten::_scaled_dot_product_flash_attention_for_cpu"


def test_flash_reads_no_score_matrix() -> None:
    """'the count of passes over a [seq, seq] score matrix is 0'; q, k, v and output bytes."""
    v = fwd("sdpa_flash")
    assert v["score_passes"] == 0 and v["score_traffic_bytes"] == 0
    b, h, s, d = shape("sdpa_flash")
    assert v["qkvo_bytes"] == 4 * b * h * s * d * 2
    assert v["score_matrix_bytes"] == b * h * s * s * 2
    assert fwd("naive")["score_traffic_bytes"] > v["qkvo_bytes"]  # type: ignore[operator]


def test_score_matrix_against_qkvo_grows_with_seq() -> None:
    """'one score matrix is seq / (4 x head_dim) times their size: R at the shape shown, and 32
    at L, the longest in the GPU sweep' (L from the sweep's values)."""
    v = fwd("sdpa_flash")
    _, _, s, d = shape("sdpa_flash")
    assert v["score_per_qkvo"] == s / (4 * d)
    assert v["score_matrix_bytes"] == v["score_per_qkvo"] * v["qkvo_bytes"]  # type: ignore[operator]
    head_dim = int(cuda_arg("sdpa_flash", "--head-dim"))
    assert int(cuda_arg("sdpa_flash", "--seq")) == 1024
    assert 1024 / (4 * head_dim) == 4
    longest = max(int(x) for x in cuda_arg("sweep", "--sweep-seqs").split(","))
    assert longest == 8192 and longest / (4 * head_dim) == 32
    # The page names the longest length through the sweep's value, not by hand.
    assert notes()["long_seq"] == longest


# ---- where the cost moved ------------------------------------------------------------------------
def test_sdpa_self_time_only_where_sdpa_is_called() -> None:
    assert fwd("naive")["sdpa_self_ns_per_fwd"] == 0
    assert fwd("sdpa_math")["sdpa_self_ns_per_fwd"] > 0  # type: ignore[operator]


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


def test_sweep_flops_follow_the_formulas() -> None:
    """Full count '4 x batch x heads x seq^2 x head_dim'; causal count, the diagonal visible,
    '2 x batch x heads x seq x (seq + 1) x head_dim, a little over half the full count'."""
    settings = capture_record(STEP, "sweep")["settings"]
    b, h, d = settings["batch"], settings["heads"], settings["head_dim"]
    for row in sweep():
        s = int(row["seq"])
        assert int(row["flops"]) == 4 * b * h * s * s * d
        assert int(row["causal_flops"]) == 2 * b * h * s * (s + 1) * d
        assert 0.5 < int(row["causal_flops"]) / int(row["flops"]) < 0.51
    for variant in CPU_VARIANTS:
        b, h, s, d = shape(variant)
        v = fwd(variant)
        assert v["flops"] == 4 * b * h * s * s * d
        assert v["causal_flops"] == 2 * b * h * s * (s + 1) * d


def test_no_rate_divides_by_cpu_time() -> None:
    """'All the rates in the sweep table divide by GPU kernel time, never by CPU time': no
    FLOPs-over-CPU-time column or value anywhere, and on a CPU capture every rate is empty."""
    assert not any("cpu_tflops" in k for k in sweep()[0])
    for variant in (*CPU_VARIANTS, "sdpa_efficient", "sdpa_cudnn"):
        device = shown_device(STEP, variant)
        if device is None:
            continue
        v = fwd(variant)
        assert "cpu_tflops" not in v
        if device == "cpu":
            assert v["gpu_tflops"] is None and v["causal_gpu_tflops"] is None


# ---- CUDA-only claims ---------------------------------------------------------------------
def kernels(variant: str) -> list[dict[str, str]]:
    return table(STEP, variant, "attention_kernels", cpu_ok=False)


def gpu(variant: str) -> dict[str, object]:
    return fwd(variant, cpu_ok=False)


def by_family(variant: str, family: str) -> list[dict[str, str]]:
    return [r for r in kernels(variant) if r["family"] == family]


@needs_cuda(STEP, "naive")
def test_naive_gpu_work_per_operator() -> None:
    """'aten::bmm a GEMM, aten::mul an elementwise kernel, aten::masked_fill_ a masked-fill
    kernel, aten::_softmax a softmax kernel, and the hidden aten::copy_ a device-to-device memory
    copy. The first aten::bmm also issues a small memset before its GEMM'."""
    rows = table(STEP, "naive", "attention_ops", cpu_ok=False)
    work: dict[str, str] = {}
    for row in rows:
        work.setdefault(row["name"], row["gpu_work"])
    assert work["aten::bmm"] == "memset; GEMM, tensor cores"
    assert work["aten::mul"] == "elementwise"
    assert work["aten::masked_fill_"] == "masked_fill"
    assert work["aten::_softmax"] == "softmax"
    assert work["aten::copy_"] == "memcpy"
    bmms = [r for r in rows if r["name"] == "aten::bmm"]
    assert bmms[1]["gpu_work"] == "GEMM, tensor cores"
    v = gpu("naive")
    assert v["copies_per_fwd"] == 1 and v["memsets_per_fwd"] == 1


@needs_cuda(STEP, "naive")
def test_naive_is_gpu_bound_and_its_time_is_in_the_unfused_passes() -> None:
    """'the CPU finishes issuing it long before the GPU finishes running it, so this version is
    GPU-bound ... the two matrix multiplies ... take the smaller part; the unfused operators ...
    most of it. The masked fill alone takes longer than both GEMMs together'."""
    v = gpu("naive")
    assert float(v["gpu_ns_per_fwd"]) > 2 * float(v["cpu_ns_per_fwd"])  # type: ignore[arg-type]
    gemm = sum(float(r["time_ns_per_fwd"]) for r in by_family("naive", "GEMM, tensor cores"))
    assert gemm < 0.5 * float(v["gpu_ns_per_fwd"])  # type: ignore[arg-type]
    (masked,) = by_family("naive", "masked_fill")
    assert float(masked["time_ns_per_fwd"]) > gemm


@needs_cuda(STEP, "naive")
def test_naive_copy_is_a_dtod_memcpy_launched_by_cudamemcpyasync() -> None:
    """'The copy runs there as a Memcpy DtoD, launched by cudaMemcpyAsync from inside
    aten::copy_'."""
    copies = table(STEP, "naive", "attention_copies", cpu_ok=False)
    copy = next(r for r in copies if r["parent"] == "aten::clone" and r["name"] == "aten::copy_")
    assert copy["gpu_work"].startswith("Memcpy DtoD")
    assert copy["launch_api"] == "cudaMemcpyAsync"
    (memcpy,) = by_family("naive", "memcpy")
    assert float(memcpy["time_ns_per_fwd"]) == pytest.approx(gpu("naive")["copy_gpu_ns_per_fwd"])


@needs_cuda(STEP, "naive_inplace")
def test_in_place_saves_the_copy_on_the_gpu() -> None:
    """'the saving is the copy's own time, and its list of GPU work is the same but for the
    copy'."""
    naive, inplace = gpu("naive"), gpu("naive_inplace")
    assert inplace["copies_per_fwd"] == 0 and inplace["copy_gpu_ns_per_fwd"] == 0
    saved = float(naive["gpu_ns_per_fwd"]) - float(inplace["gpu_ns_per_fwd"])  # type: ignore[arg-type]
    copy = float(naive["copy_gpu_ns_per_fwd"])  # type: ignore[arg-type]
    assert abs(saved - copy) < 0.25 * copy
    before = [r["name"] for r in kernels("naive") if r["family"] != "memcpy"]
    assert [r["name"] for r in kernels("naive_inplace")] == before


@needs_cuda(STEP, "sdpa_math")
def test_math_launches_more_kernels_and_takes_longer_than_in_place() -> None:
    """Math: more kernels and more GPU time per forward than the in-place version; GEMM names with
    'f32f32' and 'ffma' where the naive version's are cuBLAS's 'nvjet' kernels."""
    math_, inplace = gpu("sdpa_math"), gpu("naive_inplace")
    assert float(math_["kernels_per_fwd"]) > float(inplace["kernels_per_fwd"])  # type: ignore[arg-type]
    assert float(math_["gpu_ns_per_fwd"]) > float(inplace["gpu_ns_per_fwd"])  # type: ignore[arg-type]
    fp32 = by_family("sdpa_math", "GEMM, fp32 on CUDA cores")
    assert len(fp32) == 2 and all("f32f32" in r["name"] and "ffma" in r["name"] for r in fp32)
    assert not by_family("sdpa_math", "GEMM, tensor cores")
    tensor_core = by_family("naive_inplace", "GEMM, tensor cores")
    assert len(tensor_core) == 2 and all(r["name"].startswith("nvjet") for r in tensor_core)


@pytest.mark.parametrize("variant", sorted(FUSED))
def test_fused_backends_run_one_attention_kernel(variant: str) -> None:
    """'the efficient, flash and cuDNN backends each run attention as one fused kernel per
    forward (cuDNN also issues a small memset before it)', with the names the page decodes."""
    if shown_device(STEP, variant, cpu_ok=False) is None:
        pytest.skip(f"no CUDA capture of {STEP}/{variant} committed yet")
    rows = by_family(variant, FUSED[variant])
    assert len(rows) == 1 and float(rows[0]["per_fwd"]) == 1
    v = gpu(variant)
    assert v["kernels_per_fwd"] == 1 and v["copies_per_fwd"] == 0
    assert v["memsets_per_fwd"] == (1 if variant == "sdpa_cudnn" else 0)
    if variant == "sdpa_cudnn":
        assert [r["family"] for r in kernels(variant)] == ["memset", FUSED[variant]]
    expected = {
        "sdpa_efficient": "fmha_cutlassF",
        "sdpa_flash": "pytorch_flash::flash_fwd_kernel",
        "sdpa_cudnn": "cudnn",
    }[variant]
    assert expected in rows[0]["name"]
    assert v["score_passes"] == 0


@needs_cuda(STEP, "sdpa_cudnn")
def test_fused_kernel_names_and_their_order() -> None:
    """Efficient: 'sm80 ... on this Hopper GPU too'; flash: 'Flash_fwd_kernel_traits<64, 128,
    128, 4, ...>' and 128 threads per block; cuDNN: 'sdpa_sm90_flash_fprop_wgmma', 'the only one
    built for the GPU it ran on here, and the fastest: ... below flash's, which is below the
    efficient kernel's'."""
    env = capture_record(STEP, "sdpa_cudnn", cpu_ok=False)["environment"]
    assert env["gpu_compute_capability"] == "9.0"
    (eff,) = by_family("sdpa_efficient", FUSED["sdpa_efficient"])
    assert "_sm80" in eff["name"]
    (flash,) = by_family("sdpa_flash", FUSED["sdpa_flash"])
    assert "Flash_fwd_kernel_traits<64, 128, 128, 4," in flash["name"]
    assert flash["block_threads"] == "128" and int(cuda_arg("sdpa_flash", "--head-dim")) == 64
    assert "sm80" not in flash["name"] and "sm90" not in flash["name"]
    (cudnn,) = by_family("sdpa_cudnn", FUSED["sdpa_cudnn"])
    assert "_sdpa_sm90_flash_fprop_wgmma_" in cudnn["name"]
    order = ("sdpa_cudnn", "sdpa_flash", "sdpa_efficient")
    times = [float(gpu(v)["gpu_ns_per_fwd"]) for v in order]  # type: ignore[arg-type]
    assert times == sorted(times)


def register_limit(row: dict[str, str]) -> float:
    """Register-limited occupancy recomputed from registers and threads (65536 registers, 64
    warps per SM, registers allocated per warp in units of 256)."""
    warps = math.ceil(int(row["block_threads"]) / 32)
    per_warp = math.ceil(int(row["registers_per_thread"]) * 32 / 256) * 256
    return 100 * min(65536 // (per_warp * warps) * warps, 64) / 64


def kineto_pct(row: dict[str, str]) -> int:
    """Kineto's estimate as the table prints it: '13 %' -> 13."""
    return int(row["reported_occupancy"].removesuffix(" %"))


@needs_cuda(STEP, "sdpa_flash")
def test_flash_occupancy_is_limited_by_registers() -> None:
    """'The flash kernel uses the most registers a thread can have, 255: only two of its blocks
    fit ..., an eighth of the SM's warps, and Kineto's estimate ... agrees. The efficient kernel
    uses about half as many registers per thread and reaches a quarter. Registers set the limit
    for both'."""
    (flash,) = by_family("sdpa_flash", FUSED["sdpa_flash"])
    assert int(flash["registers_per_thread"]) == 255
    assert float(flash["theoretical_occupancy_pct"]) == register_limit(flash) == 100 / 8
    assert abs(kineto_pct(flash) - 100 / 8) <= 0.5
    (eff,) = by_family("sdpa_efficient", FUSED["sdpa_efficient"])
    assert abs(2 * int(eff["registers_per_thread"]) - 255) <= 4
    assert float(eff["theoretical_occupancy_pct"]) == register_limit(eff) == 25
    assert flash["occupancy_limit"] == eff["occupancy_limit"] == "registers"


def kernel_footprints(step: str, variant: str) -> list[dict[str, object]]:
    """Every kernel of a CUDA capture with its launch call, shared memory and Kineto estimate."""
    from tests.sql_rows import trace_rows

    sql = (
        "INCLUDE PERFETTO MODULE guide.attention; "
        "SELECT DISTINCT name, launch_api, shared_memory_bytes AS smem, grid_blocks, "
        "reported_occupancy_pct AS kineto FROM guide_attention_gpu_work "
        "WHERE category = 'kernel' AND launch_api IS NOT NULL"
    )
    return trace_rows(variant_dir(step, variant, cpu_ok=False) / "trace.json.gz", sql)


@needs_cuda(STEP, "sdpa_cudnn")
def test_persistent_kernels_have_no_kineto_estimate() -> None:
    """'The cuDNN kernel, like cuBLAS's nvjet GEMMs ...: three warpgroups per block (384 threads)
    and a grid of exactly one block per SM ... Kineto's estimate reads zero ... The theoretical
    column ... still says what fits'."""
    sms = capture_record(STEP, "sdpa_cudnn", cpu_ok=False)["environment"]["gpu_sm_count"]
    rows = by_family("sdpa_cudnn", FUSED["sdpa_cudnn"]) + by_family("naive", "GEMM, tensor cores")
    assert len(rows) == 3
    for row in rows:
        assert row["block_threads"] == "384" and int(row["grid_blocks"]) == sms
        assert kineto_pct(row) == 0
        assert float(row["theoretical_occupancy_pct"]) == register_limit(row) > 0


@needs_cuda(STEP, "sdpa_cudnn")
def test_zero_estimates_go_with_shared_memory_not_the_launch_call() -> None:
    """'What the zero kernels share is shared memory above 48 KB per block ..., where the flash
    kernel, at exactly 48 KB, gets a number'; the box: 'In this part those are also the kernels
    launched through cuLaunchKernelEx ... Part 1's fp32 GEMM, launched through the runtime's
    cudaLaunchKernelExC with more than 48 KB of shared memory per block, reads zero too'."""
    limit = 48 * 1024
    sms = capture_record(STEP, "sdpa_cudnn", cpu_ok=False)["environment"]["gpu_sm_count"]
    kernels = [
        k
        for v in ("naive", "sdpa_math", "sdpa_efficient", "sdpa_flash", "sdpa_cudnn")
        for k in kernel_footprints(STEP, v)
        if int(k["grid_blocks"]) >= sms  # type: ignore[call-overload]
    ]
    for k in kernels:
        big = int(k["smem"]) > limit  # type: ignore[call-overload]
        assert (float(k["kineto"]) == 0) == big, k["name"]  # type: ignore[arg-type]
        assert (k["launch_api"] == "cuLaunchKernelEx") == big, k["name"]
    (flash,) = [k for k in kernels if "flash_fwd_kernel" in str(k["name"])]
    assert flash["smem"] == limit and float(flash["kineto"]) > 0  # type: ignore[arg-type]
    part1 = [k for k in kernel_footprints("matmul_add", "large_fp32") if "gemm" in str(k["name"])]
    assert part1 and all(
        k["launch_api"] == "cudaLaunchKernelExC"
        and int(k["smem"]) > limit  # type: ignore[call-overload]
        and float(k["kineto"]) == 0  # type: ignore[arg-type]
        for k in part1
    )


@needs_cuda(STEP, "sdpa_cudnn")
def test_who_launches_what() -> None:
    """Efficient and flash by cudaLaunchKernel, 'like the elementwise and softmax kernels'; cuDNN
    by cuLaunchKernelEx; 'cuBLAS launches its nvjet GEMMs the same way, and the math backend's
    fp32 GEMMs go through cudaLaunchKernelExC'."""
    for variant in ("sdpa_efficient", "sdpa_flash"):
        (row,) = by_family(variant, FUSED[variant])
        assert row["launch_api"] == "cudaLaunchKernel"
    for family in ("elementwise", "softmax", "masked_fill"):
        assert {r["launch_api"] for r in by_family("naive", family)} == {"cudaLaunchKernel"}
    (cudnn,) = by_family("sdpa_cudnn", FUSED["sdpa_cudnn"])
    assert cudnn["launch_api"] == "cuLaunchKernelEx"
    gemms = by_family("naive", "GEMM, tensor cores")
    assert {r["launch_api"] for r in gemms} == {"cuLaunchKernelEx"}
    fp32 = by_family("sdpa_math", "GEMM, fp32 on CUDA cores")
    assert {r["launch_api"] for r in fp32} == {"cudaLaunchKernelExC"}
    assert "cuLaunchKernelEx" in str(gpu("sdpa_cudnn")["launch_apis"])


# ---- where the cost moved, on the GPU capture ------------------------------------------------
@needs_cuda(STEP, "sdpa_cudnn")
def test_which_versions_wait_for_which_side() -> None:
    """'The naive, in-place and math versions take more GPU time per forward than CPU time ...
    Flash and cuDNN are the other way round'."""
    for variant in ("naive", "naive_inplace", "sdpa_math"):
        v = gpu(variant)
        assert float(v["gpu_ns_per_fwd"]) > float(v["cpu_ns_per_fwd"]), variant  # type: ignore[arg-type]
    for variant in ("sdpa_flash", "sdpa_cudnn"):
        v = gpu(variant)
        assert float(v["gpu_ns_per_fwd"]) < 0.75 * float(v["cpu_ns_per_fwd"]), variant  # type: ignore[arg-type]


@needs_cuda(STEP, "sdpa_cudnn")
def test_cudnn_cost_moved_into_the_library() -> None:
    """'both launch one kernel per forward and take about the same CPU time per forward, yet they
    spend it differently. The self time of aten::_cudnn_attention_forward is more than twice that
    of aten::_flash_attention_forward'."""
    cudnn, flash = gpu("sdpa_cudnn"), gpu("sdpa_flash")
    assert cudnn["kernels_per_fwd"] == flash["kernels_per_fwd"] == 1
    ratio = float(cudnn["cpu_ns_per_fwd"]) / float(flash["cpu_ns_per_fwd"])  # type: ignore[arg-type]
    assert 0.9 < ratio < 1.1
    own = float(cudnn["backend_self_ns_per_fwd"])  # type: ignore[arg-type]
    assert own > 2 * float(flash["backend_self_ns_per_fwd"])  # type: ignore[arg-type]


# ---- the sweep on the GPU capture ------------------------------------------------------------
ORDER = ("sdpa_cudnn", "sdpa_flash", "sdpa_efficient", "naive_inplace", "sdpa_math")


def gpu_sweep() -> dict[tuple[str, int], dict[str, str]]:
    if shown_device(STEP, "sweep") != "cuda":
        pytest.skip("no CUDA capture of the sweep committed yet")
    return {(r["impl"], int(r["seq"])): r for r in sweep()}


def test_sweep_cpu_time_is_flat() -> None:
    """'every implementation's CPU time per forward stays flat along the sweep, with the math
    backend ... the highest'."""
    rows = gpu_sweep()
    seqs = sorted({s for _, s in rows})
    for impl in ORDER:
        cpu = [float(rows[impl, s]["cpu_ns_per_fwd"]) for s in seqs]
        assert max(cpu) < 1.5 * min(cpu), impl
    for s in seqs:
        assert max(ORDER, key=lambda i: float(rows[i, s]["cpu_ns_per_fwd"])) == "sdpa_math"


def test_sweep_gpu_order_and_slopes() -> None:
    """'the order of the implementations is the same at every length: cuDNN fastest, then flash,
    the efficient kernel, the in-place version and the math backend ... The GPU curves start
    flatter than the dotted line ... and bend up towards it ... Only the two unfused versions,
    the in-place version and the math backend, reach the dotted line's slope over the last
    doubling of the length; the three fused kernels' times grow more slowly there, though much
    faster than at the short lengths'."""
    rows = gpu_sweep()
    seqs = sorted({s for _, s in rows})
    for s in seqs:
        times = [float(rows[i, s]["gpu_ns_per_fwd"]) for i in ORDER]
        assert times == sorted(times), s
    for impl in ORDER:
        t = [float(rows[impl, s]["gpu_ns_per_fwd"]) for s in seqs]
        first = math.log2(t[1] / t[0]) / math.log2(seqs[1] / seqs[0])
        last = math.log2(t[-1] / t[-2]) / math.log2(seqs[-1] / seqs[-2])
        assert first < 1.5 < last, impl
        if impl in ("naive_inplace", "sdpa_math"):
            assert last >= 1.95, impl  # the dotted line's slope, two
        else:
            assert first + 0.5 < last < 1.85, impl


def test_sweep_overhead_bound_then_gpu_bound() -> None:
    """'At the shortest length every implementation is overhead-bound, and at the longest every
    one is GPU-bound. On this grid of lengths the crossover comes later for flash and cuDNN ...
    than for the in-place version and the math backend; the efficient kernel, the slowest of the
    fused ones, crosses at the same length as those two'."""
    rows = gpu_sweep()
    seqs = sorted({s for _, s in rows})

    def gpu_bound(impl: str, s: int) -> bool:
        return float(rows[impl, s]["gpu_ns_per_fwd"]) > float(rows[impl, s]["cpu_ns_per_fwd"])

    for impl in ORDER:
        assert not gpu_bound(impl, seqs[0]) and gpu_bound(impl, seqs[-1]), impl
    crossover = {impl: next(s for s in seqs if gpu_bound(impl, s)) for impl in ORDER}
    unfused = crossover["naive_inplace"]
    assert crossover["sdpa_math"] == crossover["sdpa_efficient"] == unfused
    assert unfused < min(crossover["sdpa_cudnn"], crossover["sdpa_flash"])
    # The efficient kernel is the slowest fused one at every length.
    assert all(
        float(rows["sdpa_efficient", s]["gpu_ns_per_fwd"])
        > max(float(rows[i, s]["gpu_ns_per_fwd"]) for i in ("sdpa_cudnn", "sdpa_flash"))
        for s in seqs
    )


def test_sweep_flash_splits_kv_at_one_length() -> None:
    """'at one length, flash launches two kernels per forward ... flash_fwd_splitkv_kernel ...
    flash_fwd_splitkv_combine_kernel. Short sequences alone do not explain it: at the shortest
    length ... flash runs one kernel'."""
    from tests.open_traces import shared_trace

    rows = gpu_sweep()
    flash = {
        s: float(r["kernels_per_fwd"]) for (impl, s), r in rows.items() if impl == "sdpa_flash"
    }
    two = [s for s, n in flash.items() if n == 2]
    assert len(two) == 1 and all(n == 1 for s, n in flash.items() if s != two[0])
    assert two[0] > min(flash) and flash[min(flash)] == 1
    label = f"attn_fwd/sdpa_flash/*s{two[0]}d*"
    sql = (
        "INCLUDE PERFETTO MODULE guide.attention; "
        "SELECT DISTINCT w.name FROM guide_attention_forward AS f "
        "JOIN guide_attention_work_in!(guide_attention_forward) AS w ON w.region_id = f.id "
        f"WHERE f.name GLOB '{label}'"
    )
    with shared_trace(variant_dir(STEP, "sweep") / "trace.json.gz") as tp:
        names = [r.name for r in tp.query(sql)]
    assert len(names) == 2
    assert any("flash_fwd_splitkv_kernel" in n for n in names)
    assert any("flash_fwd_splitkv_combine_kernel" in n for n in names)


# ---- memory traffic, counted kernel by kernel ----------------------------------------------------
def notes() -> dict[str, object]:
    gpu_sweep()  # skips without a CUDA sweep
    return values(STEP, "sweep", cpu_ok=False)["attention_sweep_notes"]


def traffic(variant: str) -> list[dict[str, str]]:
    """Per-operator traffic of a CUDA capture, asked of the trace (the page prints naive's)."""
    return trace_table(STEP, variant, "attention_traffic", cpu_ok=False)


@needs_cuda(STEP, "naive_inplace")
def test_score_traffic_is_counted_kernel_by_kernel() -> None:
    """'the naive version's kernels read and write X of score tensors per forward': the first
    GEMM writes the score matrix, the multiply, the copy, the masked fill and the softmax each
    read and write it once, the second GEMM reads it: ten score matrices out of place, eight in
    place (the copy gone). Counting both operands of copy_ as reads, or doubling every read,
    gives twelve and eight and fails here."""
    for variant, passes in (("naive", 10), ("naive_inplace", 8)):
        v = gpu(variant)
        assert v["score_traffic_bytes"] == passes * v["score_matrix_bytes"], variant  # type: ignore[operator]
    rows = {r["name"]: r for r in table(STEP, "naive", "attention_traffic", cpu_ok=False)}
    score = int(gpu("naive")["score_matrix_bytes"])  # type: ignore[call-overload]
    copy = rows["aten::copy_"]
    assert float(copy["read_bytes"]) == float(copy["write_bytes"]) == score
    bmm_first, bmm_second = [
        r
        for r in table(STEP, "naive", "attention_traffic", cpu_ok=False)
        if r["name"] == "aten::bmm"
    ]
    assert float(bmm_first["score_bytes"]) == float(bmm_second["score_bytes"]) == score
    assert float(bmm_second["write_bytes"]) < score / 8  # the [b, h, s, d] output, not a score
    # The math backend's safe-softmax `where` writes into its own input: read once, written once.
    (where,) = [
        r
        for r in traffic("sdpa_math")
        if float(r["score_bytes"]) > 0 and r["name"] == "aten::where"
    ]
    assert float(where["read_bytes"]) < 1.01 * float(where["write_bytes"])


@pytest.mark.parametrize(
    "variant", ("naive", "naive_inplace", "sdpa_math", "sdpa_efficient", "sdpa_flash", "sdpa_cudnn")
)
def test_no_kernel_moves_bytes_faster_than_the_memory(variant: str) -> None:
    """'No row goes above the peak': bytes counted from shapes over GPU kernel time stay under
    the H200's datasheet bandwidth (guide.hardware), for every operator of every variant and
    every row of the sweep (the page adds that data reused from L2 could exceed it; none does
    here)."""
    if shown_device(STEP, variant, cpu_ok=False) is None:
        pytest.skip(f"no CUDA capture of {STEP}/{variant} committed yet")
    peak = float(notes()["peak_bytes_per_s"])  # type: ignore[arg-type]
    assert peak == 4.8e12  # the H200's datasheet figure
    for row in traffic(variant):
        if row["traffic_bytes_per_s"]:
            assert float(row["traffic_bytes_per_s"]) <= peak, row["name"]
            assert float(row["bandwidth_peak_pct"]) <= 100
    for row in sweep():
        assert float(row["traffic_bytes_per_s"]) <= peak


@needs_cuda(STEP, "naive")
def test_naive_traffic_table_rates() -> None:
    """'The multiply and the copy move their bytes close to the memory's peak ... The masked
    fill and the softmax move the same bytes at a fraction of that rate, and take the longest.
    The GEMMs sit between the two'."""
    rows = table(STEP, "naive", "attention_traffic", cpu_ok=False)
    pct = {r["name"]: float(r["bandwidth_peak_pct"]) for r in rows if r["name"] != "aten::bmm"}
    gemms = [float(r["bandwidth_peak_pct"]) for r in rows if r["name"] == "aten::bmm"]
    assert pct["aten::mul"] > 80 and pct["aten::copy_"] > 80
    assert pct["aten::masked_fill_"] < 50 and pct["aten::_softmax"] < 50
    # 'At this shape one score matrix is several times the size of the H200's L2 cache' (50 MB,
    # NVIDIA's datasheet): "several" taken as four at least.
    assert float(gpu("naive")["score_matrix_bytes"]) > 4 * 50e6  # type: ignore[arg-type]
    assert all(
        max(pct["aten::masked_fill_"], pct["aten::_softmax"]) < g < pct["aten::mul"] for g in gemms
    )
    slowest = sorted(rows, key=lambda r: float(r["gpu_ns"]))[-2:]
    assert {r["name"] for r in slowest} == {"aten::masked_fill_", "aten::_softmax"}
    mul = next(r for r in rows if r["name"] == "aten::mul")
    assert all(float(r["write_bytes"]) == float(mul["write_bytes"]) for r in slowest)


def test_gpu_time_is_a_union_of_intervals() -> None:
    """GPU time per forward is the union of its work's intervals: never more than the summed
    durations, equal to them where nothing overlaps (these captures)."""
    for variant in ("naive", "sdpa_math", "sdpa_cudnn"):
        if shown_device(STEP, variant, cpu_ok=False) is None:
            continue
        summed = sum(float(r["time_ns_per_fwd"]) for r in kernels(variant))
        assert float(gpu(variant)["gpu_ns_per_fwd"]) == pytest.approx(summed)  # type: ignore[arg-type]


# ---- the sweep: why each length looks the way it does -------------------------------------------
def test_shortest_length_is_latency_bound_not_bandwidth_bound() -> None:
    """'At S tokens one score matrix holds X: it fits in the H200's L2 cache many times over,
    and the in-place version's kernels run T each ..., moving their bytes at R (P of the memory's
    peak, against R' at S' tokens, their best'; 'The score matrices at the short lengths most
    likely stay in L2 ... not an HBM measurement'."""
    n = notes()
    rows = gpu_sweep()
    short = int(n["short_seq"])  # type: ignore[call-overload]
    assert short == min(s for _, s in rows)
    # The H200's L2 cache is 50 MB (NVIDIA's datasheet); "many times over": ten at least.
    assert 10 * int(n["short_score_matrix_bytes"]) < 50e6  # type: ignore[call-overload]
    row = rows["naive_inplace", short]
    assert int(row["score_matrix_bytes"]) == n["short_score_matrix_bytes"]
    assert float(row["gpu_ns_per_fwd"]) / float(row["kernels_per_fwd"]) == pytest.approx(
        n["short_kernel_ns"]
    )
    assert float(n["short_peak_pct"]) < 30  # type: ignore[arg-type]
    assert float(n["short_traffic_bytes_per_s"]) < 0.5 * float(n["best_traffic_bytes_per_s"])  # type: ignore[arg-type]
    best = max(
        (float(r["traffic_bytes_per_s"]), s) for (i, s), r in rows.items() if i == "naive_inplace"
    )
    assert best == (pytest.approx(n["best_traffic_bytes_per_s"]), n["best_seq"])
    # 'The fused kernels are ahead even at the shortest length'
    fused = min(float(rows[i, short]["gpu_ns_per_fwd"]) for i in FUSED)
    assert fused < float(row["gpu_ns_per_fwd"])


def test_math_splits_its_passes_over_the_fp32_matrix_at_the_longest_length() -> None:
    """'the math backend launches 24 kernels per forward at 8192 tokens, against 20 at every
    other length ... four of the math backend's elementwise passes over its fp32 score matrix
    (add_, isneginf, where, copy_) each launch two kernels. Their largest input ... is larger
    than the 2^31 bytes ... The in-place version's bfloat16 score matrix at the same length is
    half as large ..., fits, and keeps its five kernels'; and flash's split at one length."""
    n = notes()
    rows = gpu_sweep()
    long = int(n["long_seq"])  # type: ignore[call-overload]
    math_kernels = {
        s: float(r["kernels_per_fwd"]) for (i, s), r in rows.items() if i == "sdpa_math"
    }
    assert math_kernels[long] == n["math_long_kernels"]
    assert {k for s, k in math_kernels.items() if s != long} == {n["math_other_kernels"]}
    launches = table(STEP, "sweep", "attention_sweep_launches", cpu_ok=False)
    split = [r for r in launches if r["impl"] == "sdpa_math"]
    assert {r["name"] for r in split} == {
        "aten::add_",
        "aten::isneginf",
        "aten::where",
        "aten::copy_",
    }
    assert all(int(r["seq"]) == long and float(r["kernels_per_call"]) == 2 for r in split)
    assert all(int(r["largest_input_bytes"]) > 2**31 for r in split)
    assert math_kernels[long] - n["math_other_kernels"] == len(split)  # type: ignore[operator]
    fp32_score = int(split[0]["largest_input_bytes"])
    inplace = rows["naive_inplace", long]
    assert 2 * int(inplace["score_matrix_bytes"]) == fp32_score
    assert int(inplace["score_matrix_bytes"]) <= 2**31 and float(inplace["kernels_per_fwd"]) == 5
    (flash,) = [r for r in launches if r["impl"] == "sdpa_flash"]
    assert "splitkv_kernel" in flash["kernel_names"] and "combine" in flash["kernel_names"]


def test_every_rate_stays_under_the_peak() -> None:
    """'Only the causal count is held to the hardware ... every rate in the causal-count column
    stays below it'; 'The highest rate in the sweep, R, is by the full count: an effective rate
    ... a kernel that skipped about half of it. Here it also stays below the peak'."""
    n = notes()
    peak = float(n["peak_bf16_tflops"])  # type: ignore[arg-type]
    assert peak == 989.5
    rows = sweep()
    full = [float(r["gpu_tflops"]) for r in rows]
    causal = [float(r["causal_gpu_tflops"]) for r in rows]
    assert max(causal) < peak
    # The highest rate of either column is a full-count one, an effective rate.
    assert max(full + causal) == max(full) == pytest.approx(n["best_gpu_tflops"])
    assert max(full) < peak
    for r in rows:
        assert 0.5 < int(r["causal_flops"]) / int(r["flops"]) < 0.51
    for variant in (
        "naive",
        "naive_inplace",
        "sdpa_math",
        "sdpa_efficient",
        "sdpa_flash",
        "sdpa_cudnn",
    ):
        v = gpu(variant)
        assert float(v["gpu_tflops"]) < peak and float(v["causal_gpu_tflops"]) < peak  # type: ignore[arg-type]


# ---- where the reference saw something else ---------------------------------------------------
@needs_cuda(STEP, "sdpa_math")
def test_math_backend_handicap_is_smaller_than_the_references() -> None:
    """'the math backend 3.7 times slower than the in-place version on the A100 ... a smaller
    factor. Why (likely): ... an H200 has several times an A100's fp32 rate, while ... memory,
    whose bandwidth grew by less'."""
    from tests.open_traces import shared_trace

    assert gpu("sdpa_math")["kernels_per_fwd"] == 20
    ratio = float(gpu("sdpa_math")["gpu_ns_per_fwd"]) / float(
        gpu("naive_inplace")["gpu_ns_per_fwd"]
    )  # type: ignore[arg-type]
    assert 1 < ratio < 3.7
    sql = (
        "INCLUDE PERFETTO MODULE guide.hardware; SELECT gpu, fp32_tflops, peak_bytes_per_s "
        "FROM guide_hardware_peak WHERE gpu IN ('H200 SXM', 'A100 80GB SXM')"
    )
    with shared_trace(variant_dir(STEP, "sdpa_math", cpu_ok=False) / "trace.json.gz") as tp:
        hw = {r.gpu: r for r in tp.query(sql)}
    fp32 = hw["H200 SXM"].fp32_tflops / hw["A100 80GB SXM"].fp32_tflops
    bandwidth = hw["H200 SXM"].peak_bytes_per_s / hw["A100 80GB SXM"].peak_bytes_per_s
    assert fp32 > 3 and bandwidth < fp32


@needs_cuda(STEP, "sdpa_cudnn")
def test_cudnn_cpu_cost_sits_in_its_backend_operator() -> None:
    """'cuDNN's CPU time per forward above the efficient backend's but about the same as flash's,
    with the library's own time in aten::_cudnn_attention_forward (self time ..., more than twice
    flash's backend operator) while aten::scaled_dot_product_attention's own self time ... is
    close to flash's; and the kernel takes less than half as long as the CPU side'."""
    cudnn, flash = gpu("sdpa_cudnn"), gpu("sdpa_flash")
    cpu = float(cudnn["cpu_ns_per_fwd"])  # type: ignore[arg-type]
    assert cpu > float(gpu("sdpa_efficient")["cpu_ns_per_fwd"])  # type: ignore[arg-type]
    assert 0.9 < cpu / float(flash["cpu_ns_per_fwd"]) < 1.1  # type: ignore[arg-type]
    backend = float(cudnn["backend_self_ns_per_fwd"])  # type: ignore[arg-type]
    assert backend > 2 * float(flash["backend_self_ns_per_fwd"])  # type: ignore[arg-type]
    sdpa = float(cudnn["sdpa_self_ns_per_fwd"]) / float(flash["sdpa_self_ns_per_fwd"])  # type: ignore[arg-type]
    assert 1 / 1.5 < sdpa < 1.5
    assert cpu > 2 * float(cudnn["gpu_ns_per_fwd"])  # type: ignore[arg-type]


@needs_cuda(STEP, "naive")
def test_naive_gemm_memset_is_a_few_bytes() -> None:
    """The box: 'cuBLAS runs its nvjet_sm90 GEMMs instead, launches them through the driver's
    cuLaunchKernelEx, and the first one comes with a memset of a few bytes'."""
    gemms = by_family("naive", "GEMM, tensor cores")
    assert all(r["name"].startswith("nvjet_sm90") for r in gemms)
    assert {r["launch_api"] for r in gemms} == {"cuLaunchKernelEx"}
    first = next(r for r in table(STEP, "naive", "attention_traffic", cpu_ok=False))
    assert first["name"] == "aten::bmm" and first["gpu_work"].startswith("memset")
    memset = float(first["write_bytes"]) - float(gpu("naive")["score_matrix_bytes"])  # type: ignore[arg-type]
    assert 0 < memset <= 64


@needs_cuda(STEP, "sdpa_cudnn")
def test_cudnn_gpu_time_includes_its_memset() -> None:
    """'The GPU time per forward quoted below ... counts all the GPU work a forward launches, the
    memset included, so for cuDNN it is slightly longer than the kernel's own row'."""
    rows = {r["family"]: float(r["time_ns_per_fwd"]) for r in kernels("sdpa_cudnn")}
    kernel = rows["cuDNN attention (generated)"]
    total = float(gpu("sdpa_cudnn")["gpu_ns_per_fwd"])  # type: ignore[arg-type]
    assert total == pytest.approx(kernel + rows["memset"])
    assert kernel < total < 1.05 * kernel


@needs_cuda(STEP, "sdpa_flash")
def test_self_times_are_means_the_operator_table_is_the_first_forward() -> None:
    """'(both means per forward; flash's operator table on the previous page shows its first
    forward alone, which took longer)'."""
    v = gpu("sdpa_flash")
    assert int(v["forwards"]) > 1  # type: ignore[call-overload]
    first = next(
        r
        for r in table(STEP, "sdpa_flash", "attention_ops", cpu_ok=False)
        if r["name"] == "aten::scaled_dot_product_attention"
    )
    assert float(first["self_ns"]) > float(v["sdpa_self_ns_per_fwd"])  # type: ignore[arg-type]


def test_in_short_and_questions_name_the_sweeps_shortest_and_longest_lengths() -> None:
    """docs/part-3/04-sequence-length.md, In short and "Check yourself": 'At S tokens every one
    is overhead-bound ...; at L every one is GPU-bound', where S and L are the shortest and the
    longest lengths of the sweep (the bounds themselves:
    test_sweep_overhead_bound_then_gpu_bound)."""
    n = notes()
    seqs = sorted({s for _, s in gpu_sweep()})
    assert (n["short_seq"], n["long_seq"]) == (seqs[0], seqs[-1])
