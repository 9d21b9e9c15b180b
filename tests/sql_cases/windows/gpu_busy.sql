-- trace: mini:overlap_and_drop.json
-- what: busy time in hand-made windows: kernels on two streams overlap (a union, not a sum) and are clipped to each window
INCLUDE PERFETTO MODULE guide.windows;
WITH win(window_id, ts, dur) AS (
  VALUES (1, 3000000, 200000), (2, 3050000, 40000), (3, 3100000, 30000), (4, 3200000, 10000)
)
SELECT window_id, window_ns, activities, busy_ns FROM guide_windows_gpu_busy!(win) ORDER BY window_id;
