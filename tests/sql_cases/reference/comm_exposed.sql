-- trace: reference:gpu-unlisted-no-flows.json.gz reference:gpu-unlisted-no-flows-rank-1.json.gz
-- what: the communication and exposed time of each kernel in each tenth of the trace from guide_comm_exposed (sweeps) agree with the same quantities computed another way (every kernel of the GPU clipped to the piece, then guide_windows_union)
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.comm;
WITH
  tenth AS (
    SELECT column1 AS window_id,
      start_ts + column1 * (end_ts - start_ts) / 10 AS ts, (end_ts - start_ts) / 10 AS dur
    FROM trace_bounds, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9))
  ),
  piece AS (
    SELECT ROW_NUMBER() OVER (ORDER BY w.window_id, c.id) AS piece, w.window_id, c.id, c.device,
      c.ts AS kernel_ts, MAX(c.ts, w.ts) AS ts, MIN(c.ts + c.dur, w.ts + w.dur) AS end_ts
    FROM guide_comm_kernel AS c
    JOIN tenth AS w ON c.ts < w.ts + w.dur AND c.ts + c.dur > w.ts
  ),
  -- What covers each piece: every earlier communication kernel (earlier = 1) and every other
  -- kernel (earlier = 0) of its GPU, clipped to the piece.
  cover AS (
    SELECT p.piece, MAX(k.ts, p.ts) AS ts, MIN(k.ts + k.dur, p.end_ts) - MAX(k.ts, p.ts) AS dur,
      c.id IS NOT NULL AS earlier
    FROM piece AS p
    JOIN guide_kineto_gpu_activity AS k ON k.category = 'kernel' AND k.device = p.device
      AND k.ts < p.end_ts AND k.ts + k.dur > p.ts AND k.id != p.id
    LEFT JOIN guide_comm_kernel AS c ON c.id = k.id
    WHERE c.id IS NULL OR k.ts < p.kernel_ts OR (k.ts = p.kernel_ts AND k.id < p.id)
  ),
  taken AS (
    SELECT * FROM guide_windows_union!((SELECT piece AS group_id, ts, dur FROM cover WHERE earlier))
  ),
  covered AS (SELECT * FROM guide_windows_union!((SELECT piece AS group_id, ts, dur FROM cover))),
  pairwise AS (
    SELECT p.window_id, p.id,
      p.end_ts - p.ts - COALESCE(t.busy_ns, 0) AS comm_ns,
      p.end_ts - p.ts - COALESCE(c.busy_ns, 0) AS exposed_ns
    FROM piece AS p
    LEFT JOIN taken AS t ON t.group_id = p.piece
    LEFT JOIN covered AS c ON c.group_id = p.piece
  )
SELECT
  e.window_id,
  e.kind,
  e.comm_ns,
  e.exposed_ns,
  pw.comm_ns AS pairwise_comm_ns,
  pw.exposed_ns AS pairwise_exposed_ns,
  e.comm_ns = pw.comm_ns AND e.exposed_ns = pw.exposed_ns AS agree
FROM guide_comm_exposed!(tenth) AS e
JOIN pairwise AS pw USING (window_id, id)
ORDER BY e.window_id, e.id;
