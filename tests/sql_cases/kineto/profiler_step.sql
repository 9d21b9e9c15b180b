-- trace: mini:steps_idle_gap_sync.json
-- what: the two ProfilerStep#N annotations as numbered steps
INCLUDE PERFETTO MODULE guide.kineto;
SELECT step, ts, dur FROM guide_kineto_profiler_step ORDER BY step;
