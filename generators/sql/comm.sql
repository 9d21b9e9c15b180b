-- Communication kernels (NCCL's, RCCL's): which collective each runs, and how much of its time no
-- compute kernel on the same GPU overlapped.
--
-- The guide's one definition of a communication kernel and of exposed communication: the
-- doctor's `comm-exposed` detector and its cross-rank section (guide.ranks) both read them here.
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.shapes;
INCLUDE PERFETTO MODULE guide.windows;

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
  WHEN n GLOB '*allreduce*' THEN 'all_reduce'
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
        * guide_shapes_elem_bytes(EXTRACT_ARG(arg_set_id, 'args.dtype')) AS msg_bytes
    FROM guide_kineto_gpu_activity
    WHERE category = 'kernel' AND name GLOB '*[nNrR][cC][cC][lL]*'
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
    _ce_piece AS MATERIALIZED (
      SELECT
        ROW_NUMBER() OVER (ORDER BY w.window_id, c.id) AS piece,
        w.window_id, c.id, c.device, c.kind, c.purpose, c.ts AS kernel_ts,
        MAX(c.ts, w.ts) AS ts, MIN(c.ts + c.dur, w.ts + w.dur) AS end_ts
      FROM guide_comm_kernel AS c
      JOIN _ce_win AS w ON c.ts < w.ts + w.dur AND c.ts + c.dur > w.ts
    ),
    -- The other kernels, read only when there is communication to compare with.
    _ce_compute AS MATERIALIZED (
      SELECT id, ts, dur, device FROM guide_kineto_gpu_activity
      WHERE category = 'kernel' AND id NOT IN (SELECT id FROM guide_comm_kernel)
        AND EXISTS (SELECT 1 FROM _ce_piece)
    ),
    -- What covers each piece: earlier communication kernels of its GPU (earlier = 1), compute
    -- kernels of its GPU (earlier = 0), each clipped to the piece.
    _ce_cover AS MATERIALIZED (
      SELECT p.piece, MAX(e.ts, p.ts) AS ts, MIN(e.ts + e.dur, p.end_ts) - MAX(e.ts, p.ts) AS dur,
        1 AS earlier
      FROM _ce_piece AS p
      JOIN guide_comm_kernel AS e ON e.device = p.device
        AND (e.ts < p.kernel_ts OR (e.ts = p.kernel_ts AND e.id < p.id))
        AND e.ts < p.end_ts AND e.ts + e.dur > p.ts
      UNION ALL
      SELECT p.piece, MAX(k.ts, p.ts), MIN(k.ts + k.dur, p.end_ts) - MAX(k.ts, p.ts), 0
      FROM _ce_piece AS p
      JOIN _ce_compute AS k ON k.device = p.device AND k.ts < p.end_ts AND k.ts + k.dur > p.ts
    ),
    _ce_taken AS (
      SELECT * FROM guide_windows_union!(
        (SELECT piece AS group_id, ts, dur FROM _ce_cover WHERE earlier = 1)
      )
    ),
    _ce_covered AS (
      SELECT * FROM guide_windows_union!((SELECT piece AS group_id, ts, dur FROM _ce_cover))
    )
  SELECT
    p.window_id,
    p.id,
    p.device,
    p.kind,
    p.purpose,
    p.end_ts - p.ts - COALESCE(t.busy_ns, 0) AS comm_ns,
    p.end_ts - p.ts - COALESCE(c.busy_ns, 0) AS exposed_ns
  FROM _ce_piece AS p
  LEFT JOIN _ce_taken AS t ON t.group_id = p.piece
  LEFT JOIN _ce_covered AS c ON c.group_id = p.piece
);
