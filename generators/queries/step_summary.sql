-- How long is a profiled step, and how busy is the GPU during it?
-- output: values
-- question_ja: プロファイルしたステップ 1 回の長さと、その間の GPU の稼働具合
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;

WITH
  step AS (SELECT * FROM guide_kineto_profiler_step),
  first_step AS (SELECT * FROM step ORDER BY step LIMIT 1),
  kernel AS (SELECT * FROM guide_kineto_gpu_activity WHERE category = 'kernel')
SELECT
  (SELECT COUNT(*) FROM step) AS steps,
  (SELECT MIN(step) FROM step) AS first_step,
  (SELECT SUM(dur) FROM step) AS steps_total_ns,
  (SELECT MIN(dur) FROM step) AS step_min_ns,
  (SELECT MAX(dur) FROM step) AS step_max_ns,
  (SELECT COUNT(*) FROM guide_kineto_slice WHERE category = 'cpu_op') AS cpu_ops,
  (SELECT COUNT(*) FROM guide_kineto_runtime_call) AS runtime_calls,
  (SELECT COUNT(*) FROM kernel) AS kernels,
  (SELECT COALESCE(SUM(dur), 0) FROM kernel) AS kernel_total_ns,
  -- The GPU's busy share of the steps (guide.windows): the union of GPU activity clipped to the
  -- window from the first step's start to the last step's end, over its width. NULL on a CPU-only
  -- trace.
  100.0 * (SELECT busy_ns FROM guide_windows_steps_busy)
    / (SELECT window_ns FROM guide_windows_steps_busy) AS gpu_busy_pct,
  (SELECT ts FROM first_step) / 1e9 AS first_step_start_s,
  (SELECT ts + dur FROM first_step) / 1e9 AS first_step_end_s;
