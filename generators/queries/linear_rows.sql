-- How many CPU rows does one call take per step, by kind (aten operators, compile wrappers)?
-- output: values
-- question_ja: 1 回の呼び出しは、ステップあたり CPU の行をいくつ占めるか（aten の演算子、コンパイルのラッパーなど種類別）
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.dispatch;

WITH
  steps AS (SELECT COUNT(DISTINCT step) AS n FROM guide_dispatch_row),
  first_step AS (SELECT * FROM guide_kineto_profiler_step ORDER BY step LIMIT 1)
SELECT
  (SELECT COUNT(*) FROM guide_dispatch_row) / (SELECT n FROM steps) AS rows_per_step,
  (SELECT COUNT(*) FROM guide_dispatch_row WHERE kind = 'aten') / (SELECT n FROM steps)
    AS aten_rows_per_step,
  (SELECT COUNT(*) FROM guide_dispatch_row WHERE kind = 'compile wrapper') / (SELECT n FROM steps)
    AS wrapper_rows_per_step,
  (SELECT COUNT(*) FROM guide_dispatch_row WHERE kind = 'generated kernel')
    / (SELECT n FROM steps) AS generated_kernel_rows_per_step,
  (
    SELECT COUNT(*) FROM guide_dispatch_row
    WHERE name IN ('aten::linear', 'aten::t', 'aten::transpose')
  ) / (SELECT n FROM steps) AS linear_t_rows_per_step,
  (SELECT COUNT(*) FROM guide_dispatch_row WHERE name = 'aten::addmm') / (SELECT n FROM steps)
    AS addmm_per_step,
  -- NULL (not 0) on a trace without GPU activity.
  (SELECT NULLIF(COUNT(*), 0) FROM guide_kineto_gpu_activity WHERE category = 'kernel')
    / (SELECT n FROM steps) AS kernels_per_step,
  (SELECT COALESCE(SUM(self_dur), 0) FROM guide_dispatch_row WHERE kind = 'compile wrapper')
    / (SELECT n FROM steps) AS wrapper_self_ns_per_step,
  (SELECT ts FROM first_step) / 1e9 AS first_step_start_s,
  (SELECT ts + dur FROM first_step) / 1e9 AS first_step_end_s;
