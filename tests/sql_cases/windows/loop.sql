-- trace: mini:steps_idle_gap_sync.json
-- what: the step loop's windows: one per ProfilerStep#N on the CPU thread
INCLUDE PERFETTO MODULE guide.windows;
SELECT step, ts, dur, location FROM guide_windows_loop ORDER BY ts;
