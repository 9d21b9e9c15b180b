-- trace: mini:steps_idle_gap_sync.json
-- what: the record_function label directly inside each profiled step
INCLUDE PERFETTO MODULE guide.kineto;
SELECT step, name, ts, dur FROM guide_kineto_step_label ORDER BY step;
