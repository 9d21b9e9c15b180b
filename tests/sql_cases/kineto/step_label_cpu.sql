-- trace: mini:cpu_only.json
-- what: a CPU-only trace has its steps and labels too (the step counter starts where the profiler's schedule put it)
INCLUDE PERFETTO MODULE guide.kineto;
SELECT s.step, s.ts AS step_ts, s.dur AS step_dur, l.name AS label, l.ts AS label_ts, l.dur AS label_dur
FROM guide_kineto_profiler_step AS s
LEFT JOIN guide_kineto_step_label AS l USING (step)
ORDER BY s.step;
