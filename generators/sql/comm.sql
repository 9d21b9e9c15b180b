-- Communication kernels (NCCL's, RCCL's): which collective each runs, and how much of its time no
-- compute kernel on the same GPU overlapped.
--
-- The guide's one definition of a communication kernel and of exposed communication: the
-- doctor's `comm-exposed` detector and its cross-rank section (guide.ranks) both read them here.
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.dtypes;

-- The collective a communication kernel runs: from the collective's name where the trace records
-- it on the kernel (recent Kineto: `Collective name` = 'allreduce', '_allgather_base',
-- 'reduce_scatter_tensor_coalesced', 'all_to_all', ...), else from the kernel's name
-- (ncclKernel_SendRecv_..., ncclDevKernel_AllReduce_Sum_f32_RING_LL..., ncclKernel_Broadcast_...).
-- NCCL runs an all-to-all as sends and receives, so a kernel name alone says 'send_recv' where
-- the recorded name says 'all_to_all'.
CREATE PERFETTO FUNCTION guide_comm_kind(
  -- The kernel's name.
  name STRING,
  -- The collective's name as the kernel's `Collective name` argument records it, or NULL.
  collective STRING
)
-- 'all_reduce', 'reduce_scatter', 'all_gather', 'all_to_all', 'send_recv', 'broadcast',
-- 'reduce', 'barrier' or 'other'.
RETURNS STRING AS
SELECT CASE
  WHEN c GLOB '*allreduce*' THEN 'all_reduce'
  WHEN c GLOB '*reducescatter*' THEN 'reduce_scatter'
  WHEN c GLOB '*allgather*' THEN 'all_gather'
  WHEN c GLOB '*alltoall*' THEN 'all_to_all'
  WHEN c GLOB '*send*' OR c GLOB '*recv*' THEN 'send_recv'
  WHEN c GLOB '*broadcast*' THEN 'broadcast'
  WHEN c GLOB '*barrier*' THEN 'barrier'
  WHEN c GLOB '*reduce*' THEN 'reduce'
  WHEN n GLOB '*allreduce*' OR n GLOB '*crossdevicereduce*' THEN 'all_reduce'
  WHEN n GLOB '*reducescatter*' THEN 'reduce_scatter'
  WHEN n GLOB '*allgather*' THEN 'all_gather'
  WHEN n GLOB '*alltoall*' THEN 'all_to_all'
  WHEN n GLOB '*sendrecv*' OR n GLOB '*send*' OR n GLOB '*recv*' THEN 'send_recv'
  WHEN n GLOB '*broadcast*' THEN 'broadcast'
  WHEN n GLOB '*reduce*' THEN 'reduce'
  ELSE 'other'
END
FROM (
  SELECT
    REPLACE(LOWER(COALESCE($collective, '')), '_', '') AS c,
    REPLACE(LOWER($name), '_', '') AS n
);

-- Every communication kernel: a kernel whose name holds NCCL or RCCL in any letter case, with the
-- collective it runs and its place among the trace's collectives of that kind.
CREATE PERFETTO TABLE guide_comm_kernel(
  -- Slice id of the kernel.
  id ID(slice.id),
  -- Start of the kernel (ns).
  ts TIMESTAMP,
  -- Duration of the kernel (ns).
  dur DURATION,
  -- Kernel name.
  name STRING,
  -- Device index.
  device LONG,
  -- Stream id.
  stream LONG,
  -- The collective (guide_comm_kind).
  kind STRING,
  -- What the collective is for: 'gradient sync' (all-reduce, reduce-scatter, all-gather: what
  -- DDP and FSDP overlap with the backward), 'exchange' (send/receive and all-to-all: pipeline
  -- stages, embedding or expert exchanges) or 'other'.
  purpose STRING,
  -- The process group the kernel's arguments name (`Process Group Name`), or NULL where the
  -- trace does not record it.
  process_group STRING,
  -- 1 for the first kernel of its process group and kind in the trace, 2 for the next, ... (by
  -- start): the n-th collective of a kind is the same collective on every rank of a group.
  seq LONG,
  -- Bytes the collective sends per rank (`In msg nelems` times the size of `dtype`), or NULL
  -- where the trace does not record them.
  msg_bytes LONG
) AS
WITH
  -- One filter the table runs itself: a GLOB with both letter cases.
  comm AS (
    SELECT
      id, ts, dur, name, device, stream,
      guide_comm_kind(name, EXTRACT_ARG(arg_set_id, 'args.Collective name')) AS kind,
      EXTRACT_ARG(arg_set_id, 'args.Process Group Name') AS process_group,
      EXTRACT_ARG(arg_set_id, 'args.In msg nelems')
        * guide_dtypes_elem_bytes(EXTRACT_ARG(arg_set_id, 'args.dtype')) AS msg_bytes
    FROM guide_kineto_gpu_activity
    WHERE category = 'kernel' AND (
      name GLOB '*[nNrR][cC][cC][lL]*'
      -- Collectives over symmetric memory, without NCCL: PyTorch's symm_mem kernels
      -- (multimem_all_reduce_kernel, one_shot_all_reduce_kernel, ...) and vLLM's custom
      -- all-reduce (cross_device_reduce_1stage, ...).
      OR name GLOB '*_all_reduce_kernel*' OR name GLOB '*cross_device_reduce*'
    )
  )
SELECT
  id, ts, dur, name, device, stream, kind,
  CASE
    WHEN kind IN ('all_reduce', 'reduce_scatter', 'all_gather') THEN 'gradient sync'
    WHEN kind IN ('all_to_all', 'send_recv') THEN 'exchange'
    ELSE 'other'
  END AS purpose,
  process_group,
  ROW_NUMBER() OVER (PARTITION BY process_group, kind ORDER BY ts, id) AS seq,
  msg_bytes
FROM comm;

-- The communication time inside each window, kernel by kernel, and the part of it exposed: run
-- while no compute kernel (any other kernel) ran on the same GPU. Each kernel is clipped to the
-- window, and a stretch that an earlier communication kernel on the same GPU already covers
-- counts for that earlier kernel only, so the pieces never overlap: the total of `comm_ns` over
-- a window's rows is the union of its communication kernels (guide_windows_union), and the
-- total of `exposed_ns` is that union less its overlap with the union of the compute kernels.
--
-- Computed by sweeps, without comparing every kernel with every other: an earlier kernel starts
-- no later than the piece, so what the earlier ones cover of it is one stretch from its start to
-- the latest end among them; and the compute kernels of a GPU are merged once into disjoint busy
-- stretches with a running total, so the compute time under any part of a piece is the
-- difference of that total at its two ends.
CREATE PERFETTO MACRO guide_comm_exposed(
  -- Windows: needs the columns window_id, ts and dur (ns); windows must not overlap.
  windows TableOrSubquery
)
-- One row per window and communication kernel that overlaps it, with the columns window_id, id
-- (the kernel, guide_comm_kernel.id), device, kind, purpose, comm_ns (its part of the window not
-- under an earlier communication kernel of its GPU, ns) and exposed_ns (of that, the part under
-- no compute kernel of its GPU, ns).
RETURNS TableOrSubquery AS
(
  WITH
    _ce_win AS MATERIALIZED (SELECT window_id, ts, dur FROM $windows),
    -- The latest end among the communication kernels of the same GPU that come before each one
    -- (by start, then id).
    _ce_before AS MATERIALIZED (
      SELECT id, MAX(ts + dur) OVER (
        PARTITION BY device ORDER BY ts, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
      ) AS covered_until
      FROM guide_comm_kernel
      WHERE device IS NOT NULL
    ),
    -- Each kernel clipped to each window it overlaps; own_ts: where the part that no earlier
    -- communication kernel of its GPU covers starts (the piece's start on an empty piece).
    _ce_piece AS MATERIALIZED (
      SELECT piece, window_id, id, device, kind, purpose, ts, end_ts,
        MAX(ts, MIN(COALESCE(covered_until, ts), end_ts)) AS own_ts
      FROM (
        SELECT
          ROW_NUMBER() OVER (ORDER BY w.window_id, c.id) AS piece,
          w.window_id, c.id, c.device, c.kind, c.purpose, b.covered_until,
          MAX(c.ts, w.ts) AS ts, MIN(c.ts + c.dur, w.ts + w.dur) AS end_ts
        FROM guide_comm_kernel AS c
        JOIN _ce_win AS w ON c.ts < w.ts + w.dur AND c.ts + c.dur > w.ts
        LEFT JOIN _ce_before AS b USING (id)
      )
    ),
    -- The other kernels, read only when there is communication to compare with.
    _ce_compute AS MATERIALIZED (
      SELECT device, ts, ts + dur AS end_ts FROM guide_kineto_gpu_activity
      WHERE category = 'kernel' AND device IS NOT NULL AND dur > 0
        AND id NOT IN (SELECT id FROM guide_comm_kernel)
        AND EXISTS (SELECT 1 FROM _ce_piece)
    ),
    -- The compute kernels of each GPU merged into disjoint busy stretches: a kernel that starts
    -- after every earlier one (by start) has ended opens a new stretch.
    _ce_stretch AS (
      SELECT device, MIN(ts) AS ts, MAX(end_ts) AS end_ts
      FROM (
        SELECT device, ts, end_ts,
          SUM(prev_end IS NULL OR ts > prev_end) OVER (
            PARTITION BY device ORDER BY ts, end_ts ROWS UNBOUNDED PRECEDING
          ) AS stretch
        FROM (
          SELECT device, ts, end_ts,
            MAX(end_ts) OVER (
              PARTITION BY device ORDER BY ts, end_ts
              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
            ) AS prev_end
          FROM _ce_compute
        )
      )
      GROUP BY device, stretch
    ),
    -- The stretches, each with the busy time of its GPU up to its end, and the two ends of every
    -- piece's own part, in one sweep per GPU: at a point, the latest stretch that started by
    -- then gives the busy time up to it (ends and running totals only grow from one stretch to
    -- the next, so the latest stretch's are the largest so far).
    _ce_point AS (
      SELECT device, ts AS at, end_ts, SUM(end_ts - ts) OVER (
        PARTITION BY device ORDER BY ts ROWS UNBOUNDED PRECEDING
      ) AS busy_ns, NULL AS piece, 0 AS sign
      FROM _ce_stretch
      UNION ALL
      SELECT device, own_ts, NULL, NULL, piece, -1 FROM _ce_piece
      WHERE end_ts > own_ts AND device IS NOT NULL
      UNION ALL
      SELECT device, end_ts, NULL, NULL, piece, 1 FROM _ce_piece
      WHERE end_ts > own_ts AND device IS NOT NULL
    ),
    _ce_busy_at AS (
      SELECT piece, sign, at,
        MAX(end_ts) OVER sweep AS last_end,
        MAX(busy_ns) OVER sweep AS busy_ns
      FROM _ce_point
      WINDOW sweep AS (PARTITION BY device ORDER BY at, piece IS NOT NULL ROWS UNBOUNDED PRECEDING)
    ),
    -- The compute time under each piece's own part.
    _ce_under AS (
      SELECT piece, SUM(sign * COALESCE(busy_ns - MAX(last_end - at, 0), 0)) AS busy_ns
      FROM _ce_busy_at
      WHERE piece IS NOT NULL
      GROUP BY piece
    )
  SELECT
    p.window_id,
    p.id,
    p.device,
    p.kind,
    p.purpose,
    p.end_ts - p.own_ts AS comm_ns,
    p.end_ts - p.own_ts - COALESCE(u.busy_ns, 0) AS exposed_ns
  FROM _ce_piece AS p
  LEFT JOIN _ce_under AS u USING (piece)
);
