-- trace: mini:steps_idle_gap_sync.json
-- what: all steps as one window: 138 us busy of 260 us
INCLUDE PERFETTO MODULE guide.windows;
SELECT ts, window_ns, activities, busy_ns, 100.0 * busy_ns / window_ns AS busy_pct
FROM guide_windows_steps_busy;
