"""The SQL behind Part 4's GPU-only sections, proven on real GPU traces from other projects.

The guide has no CUDA capture of the ``llm`` step yet, so the window macros of
``generators/sql/llm.sql`` (kernels per window, launches, GPU busy time and gaps, the attention
backend and kernel, the bytes a linear layer reads) run here on the reference traces in
``tests/data/reference-traces/`` (test inputs only, never shown as this project's measurements).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.open_traces import shared_trace
from tests.reference_traces import A100_ADD, A100_TRITON, H100_BERT
from tests.sql_rows import trace_rows

# Tests that read the same traces run in one worker process when `make test TEST_WORKERS=N` shares
# the suite out, so that each trace is imported once (tests/open_traces.py).
pytestmark = pytest.mark.xdist_group("llm-traces")

INCLUDE = "INCLUDE PERFETTO MODULE guide.llm;\n"


def _rows(trace: Path, sql: str) -> list[dict[str, object]]:
    return trace_rows(trace, INCLUDE + sql)


def _cost_of(trace: Path, windows_sql: str) -> list[dict[str, object]]:
    return _rows(
        trace,
        f"WITH win AS ({windows_sql}) SELECT * FROM guide_llm_window_cost!(win) ORDER BY window_id",
    )


def test_window_cost_on_a_whole_model_forward_h100() -> None:
    """Launches per step, kernels, busy time and gaps for one BERT forward on an H100."""
    (row,) = _cost_of(
        H100_BERT,
        "SELECT id AS window_id, ts, dur, track_id FROM guide_kineto_slice "
        "WHERE name = 'nn.Module: BertLMHeadModel_0'",
    )
    with shared_trace(H100_BERT) as tp:
        totals = next(
            iter(
                tp.query(
                    "INCLUDE PERFETTO MODULE guide.kineto; SELECT "
                    "(SELECT COUNT(*) FROM guide_kineto_gpu_activity WHERE category = 'kernel') "
                    "AS kernels, (SELECT COUNT(*) FROM guide_kineto_runtime_call "
                    "WHERE name GLOB '*aunchKernel*') AS launches"
                )
            )
        )
    assert row["kernels"] == totals.kernels == 60
    assert row["kernel_launches"] == totals.launches == 60
    assert row["graph_launches"] == 0
    assert row["cpu_ops"] > 0 and row["launch_ns"] > 0
    assert 0 < row["kernel_ns"] <= row["gpu_span_ns"]
    assert row["idle_ns"] == row["gpu_span_ns"] - row["kernel_ns"]
    assert 0 < row["max_gap_ns"] <= row["idle_ns"]


def test_per_module_breakdown_h100() -> None:
    """The per-layer breakdown's SQL, with BERT's module slices as the regions."""
    rows = _rows(
        H100_BERT,
        """
        WITH region AS (
          SELECT id AS window_id, ts, dur, track_id,
            CASE
              WHEN name GLOB 'nn.Module: BertAttention_*' THEN 'attention'
              WHEN name GLOB 'nn.Module: BertIntermediate_*' THEN 'mlp'
            END AS region
          FROM guide_kineto_slice
          WHERE name GLOB 'nn.Module: BertAttention_*' OR name GLOB 'nn.Module: BertIntermediate_*'
        ),
        cost AS (SELECT * FROM guide_llm_window_cost!(region))
        SELECT region, COUNT(*) AS calls, SUM(cost.kernels) AS kernels,
          SUM(cost.kernel_ns) AS kernel_ns
        FROM region JOIN cost USING (window_id)
        GROUP BY region ORDER BY region
        """,
    )
    by_region = {r["region"]: r for r in rows}
    assert by_region["attention"]["calls"] == by_region["mlp"]["calls"] == 4
    assert by_region["attention"]["kernels"] > by_region["mlp"]["kernels"] > 0
    assert all(r["kernel_ns"] > 0 for r in rows)


def test_window_kernels_follow_driver_launches_a100_triton() -> None:
    """A Triton kernel launched with cuLaunchKernel (cuda_driver) is found from its window."""
    rows = _rows(
        A100_TRITON,
        # The launching thread is not the one with ProfilerStep#1 in this trace: the window is
        # the outermost slice around the launch call on its own thread.
        "WITH w AS (SELECT o.id AS window_id, o.ts, o.dur, o.track_id "
        "FROM guide_kineto_slice AS o JOIN guide_kineto_slice AS l "
        "ON l.track_id = o.track_id AND l.ts >= o.ts AND l.ts < o.ts + o.dur "
        "WHERE l.name = 'cuLaunchKernel' AND o.depth = 0) "
        "SELECT * FROM guide_llm_window_kernel!(w)",
    )
    assert [r["launch_name"] for r in rows] == ["cuLaunchKernel"]
    assert rows[0]["kernel_name"].startswith("triton_")


def test_labelled_window_a100() -> None:
    """An annotation window like the page's prefill/decode labels (the innermost of the two
    nested `measure|forward` labels: windows on one track must not overlap)."""
    rows = _cost_of(
        A100_ADD,
        "SELECT id AS window_id, ts, dur, track_id FROM guide_kineto_slice "
        "WHERE name GLOB '*measure|forward]' ORDER BY depth DESC LIMIT 1",
    )
    (row,) = rows
    assert row["kernels"] > 0 and row["cpu_ops"] > 0
    assert row["kernel_launches"] >= row["kernels"]
    assert 0 <= row["idle_ns"] < row["gpu_span_ns"]
    assert row["max_gap_ns"] <= row["idle_ns"]


def test_attention_backend_and_kernel_h100() -> None:
    """The attention table's SQL: backend operator, kernel name and implementation family."""
    rows = _rows(
        H100_BERT,
        "INCLUDE PERFETTO MODULE guide.kernel_names; "
        "SELECT backend_op, kernel_name, guide_llm_attention_family(kernel_name) AS family, "
        "guide_kernel_names_summary(kernel_name) AS decoded FROM guide_llm_attention_kernel",
    )
    assert len(rows) == 4
    assert {r["backend_op"] for r in rows} == {"aten::_scaled_dot_product_flash_attention"}
    assert all("flash" in r["kernel_name"] for r in rows)
    assert {r["family"] for r in rows} <= {"FlashAttention", "FlashAttention (split-KV)"}
    assert all(r["decoded"] for r in rows)  # Part 2's decoder knows the flash kernels


def test_linear_weight_bytes_h100() -> None:
    """Bytes per weight from recorded shapes and dtype (bf16 on this trace: 2 bytes)."""
    rows = _rows(
        H100_BERT,
        "SELECT l.weight_bytes, extract_arg(s.arg_set_id, 'args.Input Dims[1][0]') AS o, "
        "extract_arg(s.arg_set_id, 'args.Input Dims[1][1]') AS i "
        "FROM guide_llm_linear_read AS l JOIN slice AS s USING (id)",
    )
    assert rows
    assert all(r["weight_bytes"] == 2 * r["o"] * r["i"] for r in rows)


def test_attention_read_bytes_h100() -> None:
    """Keys and values read by each attention call, from its recorded shapes."""
    rows = _rows(H100_BERT, "SELECT * FROM guide_llm_attention_read")
    assert len(rows) == 4
    for r in rows:
        assert r["query_len"] == r["kv_len"] > 0  # self-attention over one sequence
        assert r["kv_bytes"] > 0 and r["kv_bytes"] % 2 == 0


def test_window_without_launches_gets_zeros_on_a_gpu_trace() -> None:
    """On a GPU trace a window that launched nothing gets measured zeros (kernels, launches,
    kernel time); only a trace with no GPU activity at all gets NULL GPU columns."""
    (row,) = _cost_of(
        H100_BERT,
        "SELECT s.id AS window_id, s.ts, s.dur, s.track_id FROM guide_kineto_slice AS s "
        "WHERE s.name = 'aten::view' ORDER BY s.ts LIMIT 1",
    )
    assert row["cpu_ops"] >= 1
    assert row["kernels"] == row["kernel_launches"] == row["graph_launches"] == 0
    assert row["kernel_ns"] == row["launch_ns"] == row["idle_ns"] == 0
    assert row["gpu_span_ns"] is None and row["max_gap_ns"] is None


H200_LLM = Path(__file__).resolve().parents[1] / "artifacts" / "cuda" / "llm" / "eager_b1"


@pytest.mark.skipif(
    not (H200_LLM / "trace.json.gz").exists(), reason="no CUDA capture of llm/eager_b1 committed"
)
def test_dropped_kernels_counted_once_from_their_launches_h200() -> None:
    """The importer drops kernels that partly overlap another on their stream (cuBLAS split-K
    reductions on the H200), and their `ac2g` flows land on the kernel they overlapped. The launch
    table keeps one row per launch call, each recorded kernel once, and one NULL-kernel row per
    dropped kernel."""
    rows = _rows(
        H200_LLM / "trace.json.gz",
        """
        SELECT
          (SELECT COUNT(*) FROM guide_llm_kernel_launch) AS rows_,
          (SELECT COUNT(*) FROM _guide_llm_cpu_call WHERE name GLOB '*aunchKernel*') AS launches,
          (SELECT COUNT(*) FROM guide_kineto_gpu_activity WHERE category = 'kernel') AS kernels,
          (SELECT COUNT(DISTINCT kernel_id) FROM guide_llm_kernel_launch) AS distinct_kernels,
          (SELECT COUNT(*) FROM guide_llm_kernel_launch WHERE kernel_id IS NULL) AS dropped,
          (SELECT value FROM stats WHERE name = 'slice_drop_overlapping_complete_event') AS stat,
          (SELECT COUNT(*) FROM guide_llm_kernel_launch k
             JOIN guide_kineto_slice s ON s.id = k.kernel_id
             WHERE s.name GLOB '*splitKreduce*') AS reductions_kept
        """,
    )
    (r,) = rows
    assert r["rows_"] == r["launches"]  # eager: one kernel per launch call, no graphs
    assert r["distinct_kernels"] == r["kernels"]  # every recorded kernel once
    assert r["dropped"] == r["stat"] == r["launches"] - r["kernels"] > 0
    assert r["reductions_kept"] > 0


def test_kernel_class_reads_library_names() -> None:
    """guide_llm_kernel_class sorts the kernel names of real traces (the decode-step table)."""
    rows = _rows(
        A100_TRITON,
        "SELECT guide_llm_kernel_class('nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_TNT') AS a, "
        "guide_llm_kernel_class('void cublasLt::splitKreduce_kernel<32, 16, int>()') AS b, "
        "guide_llm_kernel_class('ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn') AS c, "
        "guide_llm_kernel_class('cudnn_generated_fort_native_sdpa_sm90_flash_fprop') AS d, "
        "guide_llm_kernel_class('void at::native::vectorized_elementwise_kernel<4>') AS e, "
        "guide_llm_kernel_class(NULL) AS f",
    )
    assert rows[0] == {
        "a": "GEMM",
        "b": "GEMM",
        "c": "GEMM",
        "d": "attention",
        "e": "elementwise",
        "f": None,
    }


def test_kernel_union_never_exceeds_kernel_sum() -> None:
    """kernel_union_ns counts overlapping kernels once: never more than the summed kernel time,
    and no more than the span from the first kernel to the last."""
    rows = _rows(
        A100_TRITON,
        "SELECT * FROM guide_llm_window_cost!("
        "(SELECT id AS window_id, ts, dur, track_id FROM guide_kineto_slice "
        "WHERE category = 'cpu_op' AND depth = 0 ORDER BY dur DESC LIMIT 20))",
    )
    with_kernels = [r for r in rows if r["kernels"]]
    assert with_kernels
    for r in with_kernels:
        if r["kernel_ns"] is not None and r["gpu_span_ns"] is not None:
            assert 0 <= r["kernel_union_ns"] <= r["gpu_span_ns"]
            assert r["kernel_union_ns"] <= r["kernel_ns"] + 1
