-- trace: mini:overlap_and_drop.json
-- what: busy time in hand-made windows by the sweep, beside guide_windows_gpu_busy's: the same in windows that overlap each other, start before any activity, run past the last, or have no width
INCLUDE PERFETTO MODULE guide.windows;
WITH win(window_id, ts, dur) AS (
  VALUES (1, 3000000, 200000), (2, 3050000, 40000), (3, 3100000, 30000), (4, 3200000, 10000),
    (5, 0, 3060000), (6, 3040000, 0), (7, 3055000, 1000000000), (8, 3055000, -5)
)
SELECT s.window_id, s.busy_ns, b.busy_ns AS clipped_busy_ns
FROM guide_windows_gpu_busy_swept!(win) AS s
JOIN guide_windows_gpu_busy!(win) AS b USING (window_id)
ORDER BY s.window_id;
