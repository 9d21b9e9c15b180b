-- trace: reference:a100-simple-add.json.gz reference:a100-triton-compiled.json.gz reference:h100-bert-small-inference.json.gz reference:mi300x-compiled-triton.json.gz reference:v100-resnet-train.json.gz
-- what: the busy time of the whole trace from guide_windows_gpu_busy agrees with a union computed another way (a sweep over start and end points) and is at most the summed durations
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;
WITH
  whole AS (SELECT 0 AS window_id, start_ts AS ts, end_ts - start_ts AS dur FROM trace_bounds),
  edge AS (
    SELECT ts AS t, 1 AS delta FROM guide_kineto_gpu_activity
    UNION ALL
    SELECT ts + dur, -1 FROM guide_kineto_gpu_activity
  ),
  -- Running count of activities after each distinct point, and the next point.
  point AS (SELECT t, SUM(delta) AS delta FROM edge GROUP BY t),
  sweep AS (
    SELECT t, SUM(delta) OVER (ORDER BY t) AS running, LEAD(t) OVER (ORDER BY t) AS next_t
    FROM point
  )
SELECT
  b.activities,
  b.busy_ns,
  (SELECT SUM(next_t - t) FROM sweep WHERE running > 0) AS sweep_busy_ns,
  (SELECT SUM(dur) FROM guide_kineto_gpu_activity) AS summed_ns,
  b.busy_ns = (SELECT SUM(next_t - t) FROM sweep WHERE running > 0) AS agree
FROM guide_windows_gpu_busy!(whole) AS b;
