-- The casts autocast adds to a training step
-- output: values
INCLUDE PERFETTO MODULE guide.train;

WITH
  steps AS (SELECT COUNT(*) AS n FROM guide_kineto_profiler_step),
  casts AS (
    SELECT o.*, p.phase FROM guide_train_phase_op AS o
    JOIN guide_train_phase AS p ON p.id = o.phase_id
    WHERE o.name = 'aten::_to_copy'
  )
SELECT
  (SELECT COUNT(*) FROM casts WHERE phase = 'forward') * 1.0 / steps.n AS forward_casts,
  (SELECT COUNT(*) FROM casts WHERE phase = 'backward') * 1.0 / steps.n AS backward_casts,
  (SELECT CAST(COALESCE(SUM(dur), 0) / steps.n AS INT) FROM casts
    WHERE phase IN ('forward', 'backward')) AS cast_cpu_ns,
  IIF(traced.yes, (SELECT COUNT(*) FROM guide_train_phase_gpu AS g JOIN casts AS c
    ON g.phase_id = c.phase_id
    JOIN guide_kineto_slice AS r ON r.id = g.launch_id
    WHERE r.ts >= c.ts AND r.ts < c.ts + c.dur AND g.category = 'kernel') * 1.0 / steps.n,
    NULL) AS cast_kernels
FROM steps, (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS yes) AS traced;
