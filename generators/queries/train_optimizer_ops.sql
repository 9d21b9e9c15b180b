-- What the optimizer step and zero_grad call, per training step
-- output: table
-- columns: phase=Phase, name=Operator (called by the phase's own code), calls_per_step=Calls per step, cpu_ns=CPU time per step, kernels=Kernels per step, kernel_name=Longest kernel it launched
INCLUDE PERFETTO MODULE guide.train;

WITH
  steps AS (SELECT COUNT(*) AS n FROM guide_kineto_profiler_step),
  top AS (
    SELECT p.phase, o.id, o.name, o.dur, o.ts
    FROM guide_train_phase_op AS o
    JOIN guide_train_phase AS p ON p.id = o.phase_id
    WHERE p.phase IN ('optimizer', 'zero_grad') AND o.level = 1
  ),
  -- The GPU work each top-level operator launched, from anywhere below it.
  launched AS (
    SELECT top.id, g.name, g.dur
    FROM top
    JOIN guide_train_phase_gpu AS g ON g.phase_id IN (
      SELECT id FROM guide_train_phase WHERE phase IN ('optimizer', 'zero_grad')
    )
    JOIN guide_kineto_slice AS r ON r.id = g.launch_id
    WHERE r.ts >= top.ts AND r.ts < top.ts + top.dur AND g.category = 'kernel'
  )
SELECT
  top.phase,
  top.name,
  COUNT(*) * 1.0 / steps.n AS calls_per_step,
  CAST(SUM(top.dur) / steps.n AS INT) AS cpu_ns,
  IIF(traced.yes, (SELECT COUNT(*) FROM launched AS l WHERE l.id IN (SELECT id FROM top AS t2
    WHERE t2.phase = top.phase AND t2.name = top.name)) * 1.0 / steps.n, NULL) AS kernels,
  (SELECT l.name FROM launched AS l WHERE l.id IN (SELECT id FROM top AS t2
    WHERE t2.phase = top.phase AND t2.name = top.name) ORDER BY l.dur DESC LIMIT 1)
    AS kernel_name
FROM top, steps, (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS yes) AS traced
GROUP BY top.phase, top.name
ORDER BY guide_train_phase_order(top.phase), calls_per_step DESC, top.name;
