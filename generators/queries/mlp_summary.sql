-- How many kernels per step, how many fused, how many CPU rows, and what does fusion save?
-- output: values
-- question_ja: ステップあたりのカーネル数、そのうち融合カーネルの数、CPU の行数、そして融合で何が減るか
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.dispatch;
INCLUDE PERFETTO MODULE guide.gemm;
INCLUDE PERFETTO MODULE guide.kernel_names;

WITH
  steps AS (SELECT COUNT(*) AS n FROM guide_kineto_profiler_step),
  first_step AS (SELECT * FROM guide_kineto_profiler_step ORDER BY step LIMIT 1),
  work AS (
    SELECT w.*, guide_kernel_names_family(w.name) AS family, g.flops
    FROM guide_dispatch_work AS w
    LEFT JOIN guide_gemm_op AS g ON g.id = w.op_id
  ),
  fused AS (
    SELECT * FROM work WHERE family IN ('Inductor (Triton)', 'Inductor (C++)', 'Liger (Triton)')
  ),
  -- The widest GEMM output is the hidden activation (tokens x hidden): the tensor that the
  -- eager block writes out of the GELU and reads back into the multiply.
  widest AS (SELECT * FROM guide_gemm_op ORDER BY m * n DESC LIMIT 1)
SELECT
  (SELECT COUNT(*) FROM work) / (SELECT n FROM steps) AS work_per_step,
  (SELECT COUNT(*) FROM work WHERE flops IS NOT NULL) / (SELECT n FROM steps) AS gemms_per_step,
  (SELECT COUNT(*) FROM fused) / (SELECT n FROM steps) AS fused_per_step,
  (SELECT COUNT(*) FROM work WHERE op_name IN ('aten::gelu', 'aten::mul'))
    / (SELECT n FROM steps) AS eager_pointwise_per_step,
  (SELECT COUNT(DISTINCT flops) FROM work WHERE flops IS NOT NULL) AS gemm_distinct_flops,
  (SELECT MIN(flops) FROM work WHERE flops IS NOT NULL) AS gemm_flops,
  -- Distinct GEMM kernel names: only on a trace with kernels (a CPU trace has operators).
  CASE WHEN (SELECT COUNT(*) FROM guide_kineto_gpu_activity WHERE category = 'kernel') > 0 THEN
    (SELECT COUNT(DISTINCT name) FROM work WHERE flops IS NOT NULL)
  END AS gemm_distinct_names,
  (SELECT name FROM fused ORDER BY ts LIMIT 1) AS fused_name,
  (SELECT guide_kernel_names_fused_ops(name) FROM fused ORDER BY ts LIMIT 1) AS fused_ops,
  (SELECT guide_kernel_names_work(name) FROM fused ORDER BY ts LIMIT 1) AS fused_work,
  (SELECT SUM(dur) FROM fused) / (SELECT n FROM steps) AS fused_ns_per_step,
  (SELECT COUNT(*) FROM guide_dispatch_row) / (SELECT n FROM steps) AS rows_per_step,
  (SELECT COUNT(*) FROM guide_dispatch_row WHERE kind = 'aten') / (SELECT n FROM steps)
    AS aten_rows_per_step,
  (SELECT COUNT(*) FROM guide_dispatch_row WHERE kind = 'compile wrapper') / (SELECT n FROM steps)
    AS wrapper_rows_per_step,
  (SELECT COALESCE(SUM(self_dur), 0) FROM guide_dispatch_row WHERE kind = 'compile wrapper')
    / (SELECT n FROM steps) AS wrapper_self_ns_per_step,
  (SELECT m FROM widest) AS tokens,
  (SELECT n FROM widest) AS hidden,
  (SELECT m * n * element_bytes FROM widest) AS intermediate_bytes,
  -- Written once by the GELU and read once by the multiply.
  (SELECT 2 * m * n * element_bytes FROM widest) AS avoided_traffic_bytes,
  (SELECT ts FROM first_step) / 1e9 AS first_step_start_s,
  (SELECT ts + dur FROM first_step) / 1e9 AS first_step_end_s;
