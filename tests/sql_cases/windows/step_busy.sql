-- trace: mini:steps_idle_gap_sync.json
-- what: busy time per step: a kernel running past the end of step 1 counts 8 us there and 10 us in step 2
INCLUDE PERFETTO MODULE guide.windows;
SELECT step, ts, dur, activities, busy_ns, 100.0 * busy_ns / dur AS busy_pct
FROM guide_windows_step_busy
ORDER BY step;
