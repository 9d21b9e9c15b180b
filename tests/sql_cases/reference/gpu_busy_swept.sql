-- trace: reference:a100-simple-add.json.gz reference:h100-bert-small-inference.json.gz reference:mi300x-compiled-triton.json.gz reference:v100-resnet-train.json.gz
-- what: the busy time inside runtime calls (every tenth by id: a thousand windows on the V100 trace, overlapping and not) is the same by guide_windows_gpu_busy_swept's sweep as by guide_windows_gpu_busy's clipped union
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;
WITH
  win AS (SELECT id AS window_id, ts, dur FROM guide_kineto_runtime_call WHERE id % 10 = 0),
  swept AS MATERIALIZED (SELECT window_id, busy_ns FROM guide_windows_gpu_busy_swept!(win)),
  clipped AS MATERIALIZED (SELECT window_id, busy_ns FROM guide_windows_gpu_busy!(win))
SELECT
  COUNT(*) AS windows,
  SUM(s.busy_ns > 0) AS busy_windows,
  SUM(s.busy_ns) AS busy_ns,
  SUM(s.busy_ns = c.busy_ns) AS agree
FROM swept AS s
JOIN clipped AS c USING (window_id);
