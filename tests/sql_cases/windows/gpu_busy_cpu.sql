-- trace: mini:cpu_only.json
-- what: on a CPU trace the busy time is NULL (no data), not a measured zero
INCLUDE PERFETTO MODULE guide.windows;
WITH win(window_id, ts, dur) AS (VALUES (1, 4000000, 100000))
SELECT window_id, window_ns, activities, busy_ns FROM guide_windows_gpu_busy!(win);
