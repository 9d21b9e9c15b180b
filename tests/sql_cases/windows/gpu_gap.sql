-- trace: mini:steps_idle_gap_sync.json
-- what: idle stretches of the GPU inside the loop, clipped to their step, each with its cause: the next launch came after the GPU ran dry (host), or in time (other)
INCLUDE PERFETTO MODULE guide.windows;
SELECT w.step, g.device, g.ts, g.dur, g.next_launch_ts, g.cause
FROM guide_windows_gpu_gap AS g
JOIN guide_windows_loop AS w USING (window_id)
ORDER BY g.ts;
