-- How long is a profiled step, and how busy is the GPU during it?
-- output: values
INCLUDE PERFETTO MODULE guide.kineto;

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
  -- Kernel time inside the profiled steps' window, as a share of it. Kernels that run on after
  -- the last step ends (the GPU lagging behind the CPU) are clipped to the window; kernels on
  -- one stream never overlap, so for a single stream this is the GPU's busy share.
  CASE
    WHEN (SELECT COUNT(*) FROM kernel) = 0 THEN NULL
    ELSE 100.0 * (
      SELECT COALESCE(SUM(MIN(k.ts + k.dur, w.window_end) - MAX(k.ts, w.window_start)), 0)
      FROM kernel AS k, (SELECT MIN(ts) AS window_start, MAX(ts + dur) AS window_end FROM step) AS w
      WHERE k.ts < w.window_end AND k.ts + k.dur > w.window_start
    ) / (SELECT MAX(ts + dur) - MIN(ts) FROM step)
  END AS gpu_busy_pct,
  (SELECT ts FROM first_step) / 1e9 AS first_step_start_s,
  (SELECT ts + dur FROM first_step) / 1e9 AS first_step_end_s;
