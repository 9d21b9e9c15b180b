"""The attention SQL (generators/sql/attention.sql and the attention_* queries) on real GPU traces.

The GPU paths of the SQL are exercised here on the reference traces in
tests/data/reference-traces (other projects' A100 / H100 Kineto traces; test inputs only), so
they are checked on other GPUs, drivers and libraries than the guide's own H200 captures.
Regions there are not named `attn_fwd`, so the module is loaded with its region filter pointed at
a region those traces have.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from generators.derive import run_query
from generators.queries import load_query
from generators.tp import open_trace
from tests import sql_rows
from tests.open_traces import shared_trace
from tests.reference_traces import REFERENCE_TRACES as REFERENCE

# Tests that read the same traces run in one worker process when `make test TEST_WORKERS=N` shares
# the suite out, so that each trace is imported once (tests/open_traces.py).
pytestmark = pytest.mark.xdist_group("attention-traces")

REPO = Path(__file__).resolve().parents[1]
MODULE = REPO / "generators" / "sql" / "attention.sql"
REGION_FILTER = "category = 'user_annotation' AND (name = 'attn_fwd' OR name GLOB 'attn_fwd/*')"


@contextmanager
def reference(name: str) -> Iterator[object]:
    with shared_trace(REFERENCE / name) as tp:
        yield tp


@contextmanager
def with_regions(name: str, region: str) -> Iterator[object]:
    """A reference trace with the attention module loaded, `region` slices as the forwards."""
    sql = MODULE.read_text()
    assert REGION_FILTER in sql, "the module's forward filter changed; update this test"
    # Its own trace: the module's tables are made again under another filter.
    with open_trace(REFERENCE / name) as tp:
        tp.query(sql.replace(REGION_FILTER, f"name = '{region}'"))  # type: ignore[attr-defined]
        yield tp


def query(tp: object, name: str, region: str) -> list[dict[str, object]]:
    """Run a query file on regions named ``region`` instead of `attn_fwd`."""
    q = load_query(name)
    sql = q.sql.replace("INCLUDE PERFETTO MODULE guide.attention;", "")
    sql = sql.replace("'attn_fwd'", f"'{region}'")
    return run_query(tp, dataclasses.replace(q, sql=sql)).rows


def kineto_pct(row: dict[str, object]) -> int:
    """Kineto's estimate as the kernels query prints it: '13 %' -> 13."""
    return int(str(row["reported_occupancy"]).removesuffix(" %"))


def loaded_rows(tp: object, sql: str) -> list[dict[str, object]]:
    """Rows of SQL on a trace whose attention module is already loaded (with_regions)."""
    return sql_rows.rows(tp, sql)


def rows(tp: object, sql: str) -> list[dict[str, object]]:
    return sql_rows.rows(tp, "INCLUDE PERFETTO MODULE guide.attention;\n" + sql)


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("fmha_cutlassF_bf16_aligned_64x64_rf_sm80", "efficient attention (CUTLASS fmha)"),
        (
            "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, "
            "128, 4, false, false, cutlass::bfloat16_t> >(pytorch_flash::Flash_fwd_params)",
            "flash attention",
        ),
        (
            "cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_6_128x64x64_4x1x1_"
            "cga1x1x1_kernel0_0",
            "cuDNN attention (generated)",
        ),
        ("ampere_sgemm_128x64_tn", "GEMM, fp32 on CUDA cores"),
        ("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn", "GEMM, tensor cores"),
        ("Memcpy DtoD (Device -> Device)", "memcpy"),
        ("void (anonymous namespace)::softmax_warp_forward<c10::BFloat16>(...)", "softmax"),
        ("void at::native::triu_tril_kernel<bool, long, true, 4, true>(...)", "mask (tril)"),
    ],
)
def test_kernel_family_decodes_names(name: str, family: str) -> None:
    with reference("a100-triton-compiled.json.gz") as tp:
        got = rows(tp, f"SELECT guide_attention_kernel_family('{name}') AS f")[0]["f"]
    assert got == family


def test_memcpy_found_with_its_launch_and_operator() -> None:
    """Every memcpy in a real A100 trace is linked to cudaMemcpyAsync inside aten::copy_."""
    with reference("a100-simple-add.json.gz") as tp:
        found = rows(
            tp,
            "SELECT name, launch_api, launch_category, op_name FROM guide_attention_gpu_work "
            "WHERE category = 'gpu_memcpy'",
        )
        total = rows(tp, "SELECT COUNT(*) AS n FROM slice WHERE category = 'gpu_memcpy'")[0]["n"]
    assert len(found) == total > 0
    assert {r["launch_api"] for r in found} == {"cudaMemcpyAsync"}
    assert {r["launch_category"] for r in found} == {"cuda_runtime"}
    assert {r["op_name"] for r in found} == {"aten::copy_"}


def test_copies_query_names_the_memcpy_and_its_launch() -> None:
    region = "[param|cuda]"
    with with_regions("a100-simple-add.json.gz", region) as tp:
        got = query(tp, "attention_copies", region)
    copy = next(r for r in got if r["parent"] == "aten::_to_copy" and r["name"] == "aten::copy_")
    assert str(copy["gpu_work"]).startswith("Memcpy HtoD")
    assert copy["launch_api"] == "cudaMemcpyAsync"


def test_driver_api_launch_is_found() -> None:
    """cuLaunchKernel (a cuda_driver call) is linked to its kernel like a runtime launch."""
    with reference("a100-triton-compiled.json.gz") as tp:
        got = rows(
            tp,
            "SELECT name, launch_api, launch_category FROM guide_attention_gpu_work "
            "WHERE category = 'kernel'",
        )
    assert got == [
        {
            "name": "triton_poi_fused_add_cos_sin_0",
            "launch_api": "cuLaunchKernel",
            "launch_category": "cuda_driver",
        }
    ]


def test_launch_apis_of_a_region_include_driver_launches() -> None:
    """The H100 trace launches GEMMs through cuLaunchKernel and cudaLaunchKernelExC."""
    with reference("h100-bert-small-inference.json.gz") as tp:
        apis = {
            r["launch_api"]
            for r in rows(tp, "SELECT DISTINCT launch_api FROM guide_attention_gpu_work")
        }
    assert {"cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC"} <= apis


def test_flash_forward_on_h100_one_kernel_low_occupancy() -> None:
    """The SDPA calls of a real H100 trace, as forwards: one flash kernel each, its registers and
    block size giving a register-limited occupancy of 12.5 %, the reported one below it."""
    region = "aten::scaled_dot_product_attention"
    with with_regions("h100-bert-small-inference.json.gz", region) as tp:
        fwd = query(tp, "attention_forward", region)[0]
        kernels = query(tp, "attention_kernels", region)
        ops = query(tp, "attention_ops", region)
    assert fwd["forwards"] == 4
    assert (fwd["batch"], fwd["heads"], fwd["seq"], fwd["head_dim"]) == (1, 8, 141, 64)
    assert fwd["kernels_per_fwd"] == 1 and fwd["copies_per_fwd"] == 0
    assert fwd["launch_apis"] == "cudaLaunchKernel"
    assert fwd["score_passes"] == 0
    assert fwd["flops"] == 4 * 8 * 141 * 141 * 64
    assert fwd["gpu_ns_per_fwd"] > 0 and fwd["gpu_tflops"] > 0
    assert fwd["score_matrix_bytes"] == 8 * 141 * 141 * 2
    (kernel,) = kernels
    assert kernel["family"] == "flash attention"
    assert kernel["per_fwd"] == 1
    assert (kernel["registers_per_thread"], kernel["block_threads"]) == (255, 128)
    assert kernel["theoretical_occupancy_pct"] == 12.5
    assert kineto_pct(kernel) <= kernel["theoretical_occupancy_pct"]
    assert ops[0]["gpu_work"] == "flash attention"


def test_forward_summary_on_an_a100_model_forward() -> None:
    """Kernels, memsets and their launch APIs inside annotated regions of a real A100 trace."""
    region = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
    with with_regions("a100-simple-add.json.gz", region) as tp:
        fwd = query(tp, "attention_forward", region)[0]
        kernels = query(tp, "attention_kernels", region)
    assert fwd["forwards"] == 2
    assert fwd["kernels_per_fwd"] > 10 and fwd["gpu_ns_per_fwd"] > 0
    assert "cudaLaunchKernel" in str(fwd["launch_apis"])
    assert (
        sum(float(k["per_fwd"]) for k in kernels)
        == fwd["kernels_per_fwd"] + fwd["copies_per_fwd"] + fwd["memsets_per_fwd"]
    )
    for k in kernels:
        if k["family"] not in ("memcpy", "memset"):
            assert k["registers_per_thread"] and k["block_threads"]
            assert kineto_pct(k) <= k["theoretical_occupancy_pct"] + 0.5


def test_busy_time_is_the_union_of_intervals() -> None:
    """Overlapping intervals count once (a split-K reduce kernel starting before its GEMM ends),
    touching ones add up, and groups stay apart."""
    with reference("a100-triton-compiled.json.gz") as tp:
        got = rows(
            tp,
            "SELECT group_id, busy_ns FROM guide_windows_union!(("
            "SELECT 1 AS group_id, 0 AS ts, 10 AS dur UNION ALL SELECT 1, 5, 10 "
            "UNION ALL SELECT 1, 6, 2 UNION ALL SELECT 1, 15, 5 UNION ALL SELECT 1, 30, 5 "
            "UNION ALL SELECT 2, 0, 5)) ORDER BY group_id",
        )
    assert got == [{"group_id": 1, "busy_ns": 25}, {"group_id": 2, "busy_ns": 5}]


def test_traffic_rules_on_a_real_trace() -> None:
    """Bytes from shapes on a real A100 trace: `copy_` reads its source only and writes its
    destination; every operator that launched GPU work has a row."""
    region = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
    with with_regions("a100-simple-add.json.gz", region) as tp:
        got = loaded_rows(
            tp,
            "SELECT t.name, t.read_bytes, t.write_bytes, t.gpu_items, t.gpu_ns, "
            "guide_traffic_input_bytes(s.arg_set_id, 0) AS in0, "
            "guide_traffic_input_bytes(s.arg_set_id, 1) AS in1 "
            "FROM guide_attention_traffic_in!((SELECT id, ts, dur, track_id, depth, "
            "1 AS batch, 1 AS heads, 1 AS seq FROM slice "
            f"WHERE name = '{region}')) AS t JOIN slice AS s ON s.id = t.op_id",
        )
    assert got and all(r["gpu_items"] >= 1 and r["gpu_ns"] > 0 for r in got)
    copies = [r for r in got if r["name"] == "aten::copy_"]
    assert all(r["read_bytes"] == r["in1"] and r["write_bytes"] == r["in0"] for r in copies)
