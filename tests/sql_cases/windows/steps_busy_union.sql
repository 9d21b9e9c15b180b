-- trace: mini:overlap_and_drop.json
-- what: one step whose kernels overlap on two streams: the union (90 us) is less than the summed durations (100 us)
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;
SELECT b.window_ns, b.activities, b.busy_ns,
  (SELECT SUM(dur) FROM guide_kineto_gpu_activity) AS summed_ns
FROM guide_windows_steps_busy AS b;
