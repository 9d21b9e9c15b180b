"""The kernel-name decoder (generators/sql/kernel_names.sql) and the GPU-only SQL of Part 2,
checked on real GPU traces from other projects (tests/data/reference-traces, test inputs only)."""

from __future__ import annotations

import fnmatch
import gzip
import json
import re
from pathlib import Path

import pytest

from generators.derive import run_query
from generators.queries import load_query
from tests.open_traces import shared_trace
from tests.reference_traces import A100_ADD, A100_TRITON, H100_BERT, MI300X

GPU_TRACES = (A100_ADD, A100_TRITON, H100_BERT, MI300X)


FUNCS = ("family", "work", "arch", "dtype", "mma", "tile", "layout", "fused_ops", "index")

#: Names no rule describes (a Triton kernel named by its author): left unexplained on purpose.
UNEXPLAINED = {"attn_fwd"}


def decode(name: str) -> dict[str, object]:
    cols = ", ".join(f"guide_kernel_names_{f}($n) AS part_{f}" for f in FUNCS)
    sql = (
        "INCLUDE PERFETTO MODULE guide.kernel_names; "
        f"SELECT {cols}, guide_kernel_names_summary($n) AS summary FROM (SELECT ? AS n)"
    )
    literal = "'" + name.replace("'", "''") + "'"
    with shared_trace(A100_TRITON) as tp:
        row = next(iter(tp.query(sql.replace("$n", "n").replace("?", literal))))
    return {f: getattr(row, f"part_{f}") for f in FUNCS} | {"summary": row.summary}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "ampere_sgemm_32x32_sliced1x4_tn",
            dict(
                family="cuBLAS",
                work="GEMM",
                arch="sm80",
                dtype="fp32",
                mma=None,
                tile="32x32",
                layout="tn",
                fused_ops=None,
                index=None,
            ),
        ),
        (
            "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn",
            dict(
                family="cuBLAS",
                work="GEMM",
                arch="sm80",
                dtype="bf16",
                mma="16x8x16",
                tile="128x128",
                layout="tn",
            ),
        ),
        (
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_"
            "execute_segment_k_off_kernel__5x_cublas",
            dict(
                family="cuBLAS",
                work="GEMM",
                arch="sm90",
                dtype="bf16",
                tile="64x64x64",
                layout="tn",
            ),
        ),
        (
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_"
            "execute_segment_k_off_kernel__5x_cublas",
            dict(tile="256x128x64", layout="tn", arch="sm90"),
        ),
        (
            "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT",
            dict(family="cuBLAS", work="GEMM", arch="sm90", tile="64x8", fused_ops="bias"),
        ),
        (
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
            dict(family="cuBLAS", work="GEMM", tile="256x128", fused_ops=None),
        ),
        (
            "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_"
            "align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8::Params)",
            dict(
                family="CUTLASS",
                work="GEMM",
                arch="sm80",
                dtype="bf16",
                mma="16x8x16",
                tile="64x64",
                layout="tn",
                fused_ops="relu",
            ),
        ),
        (
            "cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8",
            dict(family="CUTLASS", mma="16x16x16", tile="32x32", layout="tn"),
        ),
        (
            "triton_poi_fused_add_cos_sin_0",
            dict(
                family="Inductor (Triton)",
                work="pointwise",
                dtype=None,
                tile=None,
                fused_ops="add, cos, sin",
                index=0,
            ),
        ),
        (
            "triton_red_fused__unsafe_view_add_mean_mul_pow_rsqrt_1",
            dict(work="reduction", fused_ops="_unsafe_view, add, mean, mul, pow, rsqrt", index=1),
        ),
        (
            "triton_per_fused_native_layer_norm_3",
            dict(work="persistent reduction", fused_ops="native_layer_norm", index=3),
        ),
        (
            "graph_0_cpp_fused__unsafe_view_gelu_mul_0",
            dict(
                family="Inductor (C++)",
                work="fused loop (C++)",
                fused_ops="_unsafe_view, gelu, mul",
                index=0,
            ),
        ),
        ("_geglu_tanh_forward_kernel", dict(family="Liger (Triton)", work="gated GELU")),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"
            "<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add"
            "<c10::BFloat16>, std::array<char*, 3ul>)",
            dict(family="PyTorch ATen", work="elementwise", dtype="bf16", tile=None, index=None),
        ),
        ("attn_fwd", {f: None for f in FUNCS}),
        # Names from this project's H200 captures (artifacts/cuda).
        (
            "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT",
            dict(
                family="cuBLAS",
                work="GEMM",
                arch="sm90",
                dtype=None,
                mma=None,
                tile="64x8",
                layout=None,
                fused_ops="bias",
                index=None,
            ),
        ),
        (
            "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT",
            dict(family="cuBLAS", arch="sm90", tile="192x128", layout=None, fused_ops=None),
        ),
        (
            "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_"
            "4x1x1_cga1x1x1_kernel0_0",
            dict(family="cuDNN", work="attention", arch="sm90", dtype=None, tile=None),
        ),
        (
            "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel"
            "<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
            dict(family="CUTLASS", work="attention", arch="sm80", dtype="bf16", tile=None),
        ),
        (
            "void pytorch_flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<64, 64, 256, 4, "
            "false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 64, 256, 4, "
            "cutlass::bfloat16_t> >, true, false, false, true, true, false, true, false>"
            "(pytorch_flash::Flash_fwd_params)",
            dict(family="FlashAttention", work="attention", dtype="bf16", tile=None),
        ),
        (
            "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, "
            "float, 10, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, "
            "bool const*, int, bool)",
            # No namespace names a library: the family stays unexplained.
            dict(family=None, work="softmax", dtype="bf16", arch=None, tile=None),
        ),
        (
            "void (anonymous namespace)::softmax_warp_backward<float, float, float, 9, false, "
            "false>(float*, float const*, float const*, int, int, int, bool const*)",
            # The backward pass of the same kernel: softmax work, fp32, no library named.
            dict(family=None, work="softmax", dtype="fp32", arch=None, tile=None),
        ),
        (
            "void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<"
            "at_cuda_detail::cub::detail::radix::policy_hub<long, at::cuda::cub::detail::"
            "OpaqueType<8>, unsigned long long>::Policy1000, false, long, at::cuda::cub::detail::"
            "OpaqueType<8>, unsigned long long, int, int>(int*, int*, unsigned long long*, long "
            "const*, long*, at::cuda::cub::detail::OpaqueType<8> const*, at::cuda::cub::detail::"
            "OpaqueType<8>*, int, int, int)",
            # CUB, built into PyTorch's own namespace: the namespace names the algorithm.
            dict(family="CUB", work="sort", dtype=None, arch=None, tile=None),
        ),
        (
            "void at_cuda_detail::cub::detail::scan::DeviceScanInitKernel<at_cuda_detail::cub::"
            "ScanTileState<long, true> >(at_cuda_detail::cub::ScanTileState<long, true>, int)",
            dict(family="CUB", work="scan", dtype=None, tile=None),
        ),
        (
            "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, "
            "__nv_bfloat16, false, false, false>(cublasLt::cublasSplitKParams<float>, float "
            "const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, float const*, "
            "__nv_bfloat16 const*, void*, long, float*, int*)",
            # cublasLt:: is not cub::.
            dict(family="cuBLASLt"),
        ),
        (
            "void at::native::(anonymous namespace)::cunn_SoftMaxForwardReg<float, float, float, "
            "at::native::(anonymous namespace)::SoftMaxForwardEpilogue, long, 4>(float*, "
            "float const*, long)",
            dict(family="PyTorch ATen", work="softmax", dtype="fp32"),
        ),
        (
            "void at::native::triu_tril_kernel<bool, int, false, 8, false>(at::cuda::detail::"
            "TensorInfo<bool, int>, at::cuda::detail::TensorInfo<bool const, int>, long, long, "
            "int)",
            dict(family="PyTorch ATen", work=None, dtype=None, tile=None),
        ),
        (
            "triton_poi_fused__unsafe_view_gelu_mul_0",
            dict(
                family="Inductor (Triton)",
                work="pointwise",
                fused_ops="_unsafe_view, gelu, mul",
                index=0,
            ),
        ),
    ],
)
def test_decoder_reads_known_names(name: str, expected: dict[str, object]) -> None:
    got = decode(name)
    for key, value in expected.items():
        assert got[key] == value, (key, got)


def test_unknown_name_stays_unexplained() -> None:
    assert decode("my_kernel_42")["summary"] is None


def test_hipblaslt_name_is_decoded_from_the_mi300x_trace() -> None:
    with shared_trace(MI300X) as tp:
        name = next(
            r.name for r in tp.query("SELECT name FROM slice WHERE name GLOB 'Cijk_*' LIMIT 1")
        )
    got = decode(name)
    assert got["family"] == "hipBLASLt"
    assert got["arch"] == "gfx942"
    assert got["dtype"] == "bf16"
    assert got["tile"] == "256x192x64"
    assert got["mma"] == "16x16x1"
    assert got["fused_ops"] == "bias"


@pytest.mark.parametrize("trace", GPU_TRACES, ids=lambda p: p.name)
def test_every_reference_kernel_name_is_decoded_or_listed_unexplained(trace: Path) -> None:
    sql = (
        "INCLUDE PERFETTO MODULE guide.kernel_names; "
        "SELECT DISTINCT name, guide_kernel_names_family(name) AS family, "
        "guide_kernel_names_summary(name) AS summary FROM slice WHERE category = 'kernel'"
    )
    with shared_trace(trace) as tp:
        rows = list(tp.query(sql))
    assert rows
    for row in rows:
        if row.name in UNEXPLAINED:
            assert row.summary is None
        else:
            assert row.family is not None, row.name
            assert row.summary.startswith(row.family)


CUDA_TRACES = sorted(
    (Path(__file__).resolve().parents[1] / "artifacts" / "cuda").glob("*/*/trace.json.gz")
)

#: Kernels of the H200 captures whose names say what they do but not which library they come
#: from (no namespace or prefix names one): the family stays unexplained.
NO_FAMILY_GLOBS = (
    "void (anonymous namespace)::softmax_warp_forward<*",
    "void (anonymous namespace)::softmax_warp_backward<*",
)


#: A kernel event as Kineto writes it: the category, then the name as a JSON string.
KERNEL_EVENT = b'"cat": "kernel", "name": '
JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def _kernel_names(trace: Path) -> set[str]:
    """Every kernel name in the trace's JSON, also of kernels the trace processor drops.

    Read from the text rather than parsed: the CUDA set is 700 MB of JSON, which Python's parser
    takes half a minute over. Every kernel category in the text must be followed by a name, so a
    change in how Kineto writes events fails here instead of silently checking fewer names.
    """
    data = gzip.decompress(trace.read_bytes())
    raw: set[bytes] = set()
    at = data.find(KERNEL_EVENT)
    while at >= 0:
        name = JSON_STRING.match(data, at + len(KERNEL_EVENT))
        assert name, f"{trace}: a kernel event without a name at byte {at}"
        raw.add(name.group(0))
        at = data.find(KERNEL_EVENT, name.end())
    # However the category is spaced or placed, every kernel event must have been read.
    written = len(re.findall(rb'"cat"\s*:\s*"kernel"', data))
    assert written == data.count(KERNEL_EVENT), f"{trace}: a kernel event written another way"
    assert raw or b'"kernel"' not in data, f"{trace}: kernels, but no kernel event read"
    return {json.loads(n) for n in raw}


def test_kernel_names_are_read_from_the_text_as_json_would_read_them(tmp_path: Path) -> None:
    events = [
        {"ph": "X", "cat": "kernel", "name": 'void k<"q", \\n>(float*)', "pid": 0, "tid": 7},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1},
        {"ph": "X", "cat": "kernel", "name": "nvjet_sm90_tst", "pid": 0, "tid": 7},
    ]
    trace = tmp_path / "t.json.gz"
    trace.write_bytes(gzip.compress(json.dumps({"traceEvents": events}).encode()))
    assert _kernel_names(trace) == {e["name"] for e in events if e["cat"] == "kernel"}


@pytest.mark.skipif(not CUDA_TRACES, reason="no CUDA artifact set committed")
def test_every_h200_kernel_name_is_decoded_without_guessing() -> None:
    names = sorted(set().union(*(_kernel_names(t) for t in CUDA_TRACES)))
    assert names
    decoded = {name: decode(name) for name in names}
    for name, got in decoded.items():
        if any(fnmatch.fnmatchcase(name, g) for g in NO_FAMILY_GLOBS):
            assert got["family"] is None, name
            assert got["work"] is not None, name
        else:
            assert got["family"] is not None, name
            assert got["summary"].startswith(got["family"]), name
        # A tile is only read from a GEMM-like library name, never from an attention kernel.
        if got["work"] == "attention" or got["family"] in ("PyTorch ATen", "Inductor (Triton)"):
            assert got["tile"] is None, name
        # Hopper's cuBLAS names are read for architecture and tile only: no layout, no dtype.
        if name.startswith("nvjet_"):
            assert got["arch"] == "sm90" and got["layout"] is None and got["dtype"] is None, name


# ---- GPU-only SQL of Part 2, proven on real GPU traces ------------------------------------------


def _values(trace: Path, query: str) -> dict[str, object]:
    with shared_trace(trace) as tp:
        rows = run_query(tp, load_query(query))
    assert len(rows.rows) == 1
    return rows.rows[0]


@pytest.mark.parametrize("trace", (A100_ADD, H100_BERT), ids=lambda p: p.name)
def test_aten_t_launches_nothing_on_gpu_traces(trace: Path) -> None:
    """linear_view on GPU traces: aten::t has no runtime calls, flows, kernels or device time,
    while the same traces do link launches to kernels elsewhere."""
    v = _values(trace, "linear_view")
    assert v["t_calls"] > 0
    assert v["t_runtime_calls"] == v["t_flows"] == v["t_kernels"] == v["t_device_ns"] == 0
    assert v["t_child_ops_doing_work"] == 0
    ops = _values(trace, "linear_ops")
    assert ops["addmm_calls"] == ops["addmm_called_by_linear"] > 0
    if trace == H100_BERT:  # recorded with shapes: every addmm launched its GEMM kernel
        # ... and nothing else: the bias went into the GEMM, not through a copy first.
        assert ops["addmm_kernels"] == ops["addmm_calls"]
        assert ops["addmm_copies"] == 0


def test_t_view_shapes_on_h100() -> None:
    v = _values(H100_BERT, "linear_view")
    assert v["w_dims"] == v["wt_dims"] == "[512, 512]"
    assert (v["w_strides"], v["wt_strides"]) == ("[512, 1]", "[1, 512]")


def test_gemm_table_has_kernels_flops_and_throughput_on_h100() -> None:
    with shared_trace(H100_BERT) as tp:
        rows = run_query(tp, load_query("linear_gemm")).rows
        work = run_query(tp, load_query("mlp_work")).rows
    assert rows
    for row in rows:
        assert row["kernel"] and row["decoded"]
        assert row["flops"] == 2 * row["m"] * row["n"] * row["k"]
        assert row["achieved_tflops"] > 0
    gemms = [r for r in work if r["flops"] is not None]
    assert gemms and all(r["kind"] == "GPU kernel" and r["achieved_tflops"] > 0 for r in gemms)
    assert {r["op_name"] for r in gemms} == {"aten::addmm"}


def test_mlp_summary_counts_gpu_kernels_on_h100() -> None:
    v = _values(H100_BERT, "mlp_summary")
    assert v["work_per_step"] > v["gemms_per_step"] > 0
    assert v["fused_per_step"] == 0  # eager BERT: nothing generated
    assert v["gemm_distinct_names"] >= 2


def test_compiled_triton_kernel_is_counted_as_fused_on_a100() -> None:
    with shared_trace(A100_TRITON) as tp:
        work = tp.query(
            "INCLUDE PERFETTO MODULE guide.dispatch; INCLUDE PERFETTO MODULE guide.kernel_names; "
            "SELECT name, op_name, guide_kernel_names_family(name) AS family "
            "FROM guide_dispatch_work"
        )
        rows = list(work)
    if not rows:  # the trace has no ProfilerStep: check the launch link instead
        with shared_trace(A100_TRITON) as tp:
            rows = list(
                tp.query(
                    "INCLUDE PERFETTO MODULE guide.kineto; INCLUDE PERFETTO MODULE "
                    "guide.kernel_names; SELECT g.name, guide_kernel_names_family(g.name) AS "
                    "family FROM guide_kineto_launch_link ll JOIN guide_kineto_gpu_activity g "
                    "ON g.id = ll.gpu_id"
                )
            )
    assert [r.family for r in rows] == ["Inductor (Triton)"]


# ---- guide.dtypes: element types -----------------------------------------------------------------

ELEMENT_TYPES = [
    ("double", 8, "fp64"),
    ("float", 4, "fp32"),
    ("c10::BFloat16", 2, "bf16"),
    ("c10::Half", 2, "fp16"),
    ("c10::Float8_e4m3fn", 1, "fp8 e4m3fn"),
    ("c10::Float8_e5m2", 1, "fp8 e5m2"),
    ("c10::Float8_e4m3fnuz", 1, "fp8 e4m3fnuz"),
    ("c10::complex<float>", 8, "complex64"),
    ("c10::complex<double>", 16, "complex128"),
    ("long int", 8, "int64"),
    ("int64_t", 8, "int64"),
    ("int", 4, "int32"),
    ("short int", 2, "int16"),
    ("signed char", 1, "int8"),
    ("unsigned char", 1, "uint8"),
    ("bool", 1, "bool"),
    ("Scalar", None, "Scalar"),
]


def test_element_bytes_and_labels() -> None:
    """guide_dtypes_elem_bytes / guide_dtypes_label: one mapping for every recorded type."""
    literals = " UNION ALL ".join(
        f"SELECT {i} AS i, '{t}' AS t" for i, (t, _, _) in enumerate(ELEMENT_TYPES)
    )
    sql = (
        "INCLUDE PERFETTO MODULE guide.dtypes; "
        "SELECT i, guide_dtypes_elem_bytes(t) AS bytes, guide_dtypes_label(t) AS label "
        f"FROM ({literals}) ORDER BY i"
    )
    with shared_trace(A100_TRITON) as tp:
        rows = list(tp.query(sql))
    got = [(r.bytes, r.label) for r in rows]
    assert got == [(b, label) for _, b, label in ELEMENT_TYPES]


def test_recorded_types_on_h100_have_element_sizes() -> None:
    """Every tensor input type the H100 trace records maps to a size (shapes.sql uses it)."""
    with shared_trace(H100_BERT) as tp:
        rows = list(
            tp.query(
                "INCLUDE PERFETTO MODULE guide.shapes; "
                "SELECT DISTINCT dtype, element_bytes FROM guide_shapes_input"
            )
        )
    assert {r.dtype for r in rows} >= {"c10::BFloat16", "long int"}
    assert all(r.element_bytes is not None for r in rows), rows
