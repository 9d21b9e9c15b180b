-- trace: mini:steps_idle_gap_sync.json
-- what: busy time in each loop window, the same as per step: the kernel running past step 1's end counts 8 us there and 10 us in step 2
INCLUDE PERFETTO MODULE guide.windows;
SELECT w.step, b.window_ns, b.activities, b.busy_ns
FROM guide_windows_loop_busy AS b
JOIN guide_windows_loop AS w USING (window_id)
ORDER BY w.ts;
