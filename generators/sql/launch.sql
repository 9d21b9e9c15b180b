-- How a CPU call becomes GPU work: dispatch chains, launches, occupancy queries, GEMMs and
-- synchronisations, read from the slice tree and the trace's launch flows.
--
-- Every view works on CPU-only traces too: the launch, kernel and synchronisation columns are
-- then empty (NULL) or the views have no rows, while the CPU part of each chain is still there.
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;

-- Every GPU launch and every leaf CPU operator, with the chain of annotations and operators that
-- led to it: `ProfilerStep#N → label → aten::… → launch call → kernel`.
CREATE PERFETTO VIEW guide_launch_chain(
  -- Slice id of the chain's last CPU slice (a launch call, or an operator that called nothing).
  leaf_id JOINID(slice.id),
  -- Name of that slice.
  leaf_name STRING,
  -- Its Kineto category (cuda_runtime, cuda_driver or cpu_op).
  leaf_category STRING,
  -- Start of the leaf slice (ns).
  ts TIMESTAMP,
  -- Duration of the leaf slice (ns).
  dur DURATION,
  -- Track of the CPU thread.
  track_id JOINID(track.id),
  -- Slice id of the innermost cpu_op around (or equal to) the leaf.
  op_id JOINID(slice.id),
  -- Name of that operator, e.g. aten::mm.
  op_name STRING,
  -- Number of annotations and operators above the leaf.
  ancestors LONG,
  -- The chain as text, outermost first, joined by ' → ' (ends with the GPU activity, if any).
  chain STRING,
  -- GPU activity the leaf launched (NULL for an operator that launched nothing).
  gpu_id JOINID(slice.id),
  -- Kernel or copy name.
  gpu_name STRING,
  -- kernel, gpu_memcpy or gpu_memset.
  gpu_category STRING,
  -- Start of the GPU activity (ns).
  gpu_ts TIMESTAMP,
  -- Duration of the GPU activity (ns).
  gpu_dur DURATION,
  -- Time from the launch call's start to the GPU activity's start (ns).
  launch_to_start_ns DURATION
) AS
WITH
  bookkeeping(name) AS (
    VALUES ('aten::resolve_conj'), ('aten::resolve_neg'), ('aten::as_strided'), ('aten::view'),
      ('aten::expand'), ('aten::reshape'), ('aten::_unsafe_view'), ('aten::t'),
      ('aten::transpose'), ('aten::empty'), ('aten::empty_strided'), ('aten::_reshape_alias')
  ),
  leaf AS (
    SELECT r.id, r.name, r.category, r.ts, r.dur, s.track_id, ll.gpu_id, ll.launch_to_start_ns
    FROM guide_kineto_launch_link AS ll
    JOIN guide_kineto_runtime_call AS r ON r.id = ll.launch_id
    JOIN guide_kineto_slice AS s ON s.id = r.id
    UNION ALL
    -- Operators that launched nothing and called nothing but tensor bookkeeping: on a CPU the
    -- work itself (aten::mm, aten::add) ends the chain.
    SELECT s.id, s.name, s.category, s.ts, s.dur, s.track_id, NULL, NULL
    FROM guide_kineto_slice AS s
    WHERE s.category = 'cpu_op'
      AND s.name NOT IN (SELECT name FROM bookkeeping)
      AND NOT EXISTS (
        SELECT 1 FROM slice AS c
        WHERE c.parent_id = s.id AND c.name NOT IN (SELECT name FROM bookkeeping)
      )
      AND NOT EXISTS (
        SELECT 1 FROM descendant_slice(s.id) AS d WHERE d.category IN ('cuda_runtime', 'cuda_driver')
          AND d.name GLOB '*aunch*'
      )
  )
SELECT
  leaf.id AS leaf_id,
  leaf.name AS leaf_name,
  leaf.category AS leaf_category,
  leaf.ts,
  leaf.dur,
  leaf.track_id,
  CASE
    WHEN leaf.category = 'cpu_op' THEN leaf.id
    ELSE (
      SELECT a.id FROM ancestor_slice(leaf.id) AS a
      WHERE a.category = 'cpu_op' ORDER BY a.depth DESC LIMIT 1
    )
  END AS op_id,
  CASE
    WHEN leaf.category = 'cpu_op' THEN leaf.name
    ELSE (
      SELECT a.name FROM ancestor_slice(leaf.id) AS a
      WHERE a.category = 'cpu_op' ORDER BY a.depth DESC LIMIT 1
    )
  END AS op_name,
  (
    SELECT COUNT(*) FROM ancestor_slice(leaf.id) AS a
    WHERE a.category IN ('user_annotation', 'cpu_op')
  ) AS ancestors,
  COALESCE(
    (
      SELECT group_concat(a.name, ' → ' ORDER BY a.depth)
      FROM ancestor_slice(leaf.id) AS a
      WHERE a.category IN ('user_annotation', 'cpu_op')
    ) || ' → ',
    ''
  ) || leaf.name || COALESCE(' → ' || g.name, '') AS chain,
  g.id AS gpu_id,
  g.name AS gpu_name,
  g.category AS gpu_category,
  g.ts AS gpu_ts,
  g.dur AS gpu_dur,
  leaf.launch_to_start_ns
FROM leaf
LEFT JOIN guide_kineto_gpu_activity AS g ON g.id = leaf.gpu_id;

-- Every kernel launch with the occupancy queries its operator made just before it.
CREATE PERFETTO VIEW guide_launch_occupancy(
  -- Slice id of the launch call.
  launch_id JOINID(slice.id),
  -- Launch API name (cudaLaunchKernel, cuLaunchKernelEx, ...).
  launch_name STRING,
  -- Start of the launch call (ns).
  ts TIMESTAMP,
  -- Operator that made the launch, e.g. aten::mm or aten::add.
  op_name STRING,
  -- Kernel it launched.
  kernel_name STRING,
  -- Calls named cuda/hipOccupancy* inside the same operator that started before this launch
  -- (and after the operator's previous kernel launch: a cudaMemsetAsync the operator makes
  -- between its occupancy queries and its kernel does not reset the count).
  occupancy_calls LONG
) AS
SELECT
  c.leaf_id AS launch_id,
  c.leaf_name AS launch_name,
  c.ts,
  c.op_name,
  c.gpu_name AS kernel_name,
  (
    SELECT COUNT(*)
    FROM descendant_slice(c.op_id) AS d
    WHERE d.name GLOB '*Occupancy*' AND d.ts < c.ts
      AND d.ts > COALESCE(
        (
          SELECT MAX(p.ts) FROM guide_launch_chain AS p
          WHERE p.op_id = c.op_id AND p.gpu_category = 'kernel' AND p.ts < c.ts
        ),
        0
      )
  ) AS occupancy_calls
FROM guide_launch_chain AS c
WHERE c.gpu_category = 'kernel';

-- The resources each kernel instance asked for, as the profiler recorded them in its args.
CREATE PERFETTO VIEW guide_launch_kernel_footprint(
  -- Slice id of the kernel.
  id ID(slice.id),
  -- Kernel name.
  name STRING,
  -- Start (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- Registers per thread.
  registers_per_thread LONG,
  -- Shared memory per block (bytes), static plus dynamic.
  shared_memory_bytes LONG,
  -- Grid size as 'x × y × z' blocks.
  grid STRING,
  -- Block size as 'x × y × z' threads.
  block STRING,
  -- Threads per block.
  block_threads LONG,
  -- Total threads launched (grid × block).
  threads LONG,
  -- Blocks per SM as the profiler estimated it (blocks / SMs).
  blocks_per_sm DOUBLE,
  -- Warps per SM as the profiler estimated it.
  warps_per_sm DOUBLE,
  -- Kineto's "est. achieved occupancy %" (0-100, a whole number): the CUDA occupancy
  -- calculator's blocks per SM for this footprint, capped by the grid's blocks per SM, times
  -- threads per block over the SM's 2,048 threads. Not a measurement. Kineto asks the calculator
  -- without the kernel's opt-in to more than 48 KB of shared memory per block, so (likely) any
  -- kernel above that reads 0.
  est_occupancy_pct DOUBLE
) AS
WITH k AS (
  SELECT
    id, name, ts, dur,
    extract_arg(arg_set_id, 'args.registers per thread') AS regs,
    extract_arg(arg_set_id, 'args.shared memory') AS smem,
    extract_arg(arg_set_id, 'args.grid[0]') AS gx,
    extract_arg(arg_set_id, 'args.grid[1]') AS gy,
    extract_arg(arg_set_id, 'args.grid[2]') AS gz,
    extract_arg(arg_set_id, 'args.block[0]') AS bx,
    extract_arg(arg_set_id, 'args.block[1]') AS by,
    extract_arg(arg_set_id, 'args.block[2]') AS bz,
    extract_arg(arg_set_id, 'args.blocks per SM') AS bps,
    extract_arg(arg_set_id, 'args.warps per SM') AS wps,
    extract_arg(arg_set_id, 'args.est. achieved occupancy %') AS occ
  FROM guide_kineto_gpu_activity
  WHERE category = 'kernel'
)
SELECT
  id,
  name,
  ts,
  dur,
  regs AS registers_per_thread,
  smem AS shared_memory_bytes,
  gx || ' × ' || gy || ' × ' || gz AS grid,
  bx || ' × ' || by || ' × ' || bz AS block,
  bx * by * bz AS block_threads,
  gx * gy * gz * bx * by * bz AS threads,
  bps AS blocks_per_sm,
  wps AS warps_per_sm,
  occ AS est_occupancy_pct
FROM k;

-- Matrix multiplies and the kernels they launched, with the FLOPs their input shapes imply.
CREATE PERFETTO VIEW guide_launch_gemm(
  -- Slice id of the operator (aten::mm, aten::bmm or aten::addmm).
  op_id JOINID(slice.id),
  -- Operator name.
  op_name STRING,
  -- Start of the operator (ns).
  ts TIMESTAMP,
  -- CPU duration of the operator (ns).
  dur DURATION,
  -- CPU self time of the operator: its duration minus its direct children's (ns).
  self_ns DURATION,
  -- Multiply-adds x 2 from the recorded input shapes (NULL without record_shapes).
  flops LONG,
  -- The kernel it launched (NULL on a CPU-only trace; the last kernel if it launched several).
  kernel_id JOINID(slice.id),
  -- Kernel name.
  kernel_name STRING,
  -- Kernel duration (ns).
  kernel_dur DURATION
) AS
WITH
  op AS (
    SELECT
      s.id,
      s.name,
      s.ts,
      s.dur,
      s.dur - COALESCE((SELECT SUM(c.dur) FROM slice AS c WHERE c.parent_id = s.id), 0) AS self_ns,
      CASE s.name
        WHEN 'aten::mm' THEN 2 * extract_arg(s.arg_set_id, 'args.Input Dims[0][0]')
          * extract_arg(s.arg_set_id, 'args.Input Dims[0][1]')
          * extract_arg(s.arg_set_id, 'args.Input Dims[1][1]')
        WHEN 'aten::bmm' THEN 2 * extract_arg(s.arg_set_id, 'args.Input Dims[0][0]')
          * extract_arg(s.arg_set_id, 'args.Input Dims[0][1]')
          * extract_arg(s.arg_set_id, 'args.Input Dims[0][2]')
          * extract_arg(s.arg_set_id, 'args.Input Dims[1][2]')
        WHEN 'aten::addmm' THEN 2 * extract_arg(s.arg_set_id, 'args.Input Dims[1][0]')
          * extract_arg(s.arg_set_id, 'args.Input Dims[1][1]')
          * extract_arg(s.arg_set_id, 'args.Input Dims[2][1]')
      END AS flops
    FROM guide_kineto_slice AS s
    WHERE s.category = 'cpu_op' AND s.name IN ('aten::mm', 'aten::bmm', 'aten::addmm')
  ),
  launched AS (
    SELECT op_id, gpu_id, gpu_name, gpu_dur,
      ROW_NUMBER() OVER (PARTITION BY op_id ORDER BY gpu_ts DESC) AS rn
    FROM guide_launch_chain
    WHERE gpu_category = 'kernel'
  )
SELECT
  op.id AS op_id,
  op.name AS op_name,
  op.ts,
  op.dur,
  op.self_ns,
  op.flops,
  l.gpu_id AS kernel_id,
  l.gpu_name AS kernel_name,
  l.gpu_dur AS kernel_dur
FROM op
LEFT JOIN launched AS l ON l.op_id = op.id AND l.rn = 1;

-- Each device-wide synchronisation call and the GPU work it waited for.
CREATE PERFETTO VIEW guide_launch_sync(
  -- Slice id of the call (cudaDeviceSynchronize or hipDeviceSynchronize).
  id ID(slice.id),
  -- Call name.
  name STRING,
  -- Start (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- GPU activities that were still running or queued when the call started.
  pending_activities LONG,
  -- Busy GPU time inside the call's span (ns): the waited-for work the call overlapped, as a
  -- union of intervals (guide_windows_gpu_busy).
  gpu_busy_ns DURATION,
  -- End of the last GPU activity that started before the call returned (ns).
  last_gpu_end TIMESTAMP,
  -- From the end of that GPU activity to the call's return (ns): the cost of the call itself.
  tail_ns DURATION
) AS
SELECT
  s.id,
  s.name,
  s.ts,
  s.dur,
  (
    SELECT COUNT(*) FROM guide_kineto_gpu_activity AS g
    WHERE g.ts + g.dur > s.ts AND g.ts < s.ts + s.dur
  ) AS pending_activities,
  b.busy_ns AS gpu_busy_ns,
  (
    SELECT MAX(g.ts + g.dur) FROM guide_kineto_gpu_activity AS g WHERE g.ts < s.ts + s.dur
  ) AS last_gpu_end,
  s.ts + s.dur - (
    SELECT MAX(g.ts + g.dur) FROM guide_kineto_gpu_activity AS g WHERE g.ts < s.ts + s.dur
  ) AS tail_ns
FROM guide_kineto_slice AS s
JOIN guide_windows_gpu_busy!(
  (SELECT id AS window_id, ts, dur FROM guide_kineto_slice WHERE name GLOB '*DeviceSynchronize')
) AS b ON b.window_id = s.id
WHERE s.name GLOB '*DeviceSynchronize';

-- Each GPU activity a launch started, and what it waited for between the launch and its start:
-- the stream's earlier work (queueing), or nothing (launch latency).
CREATE PERFETTO VIEW guide_launch_queue(
  -- Slice id of the launch call.
  launch_id JOINID(slice.id),
  -- Launch call name.
  launch_name STRING,
  -- Start of the launch call (ns).
  launch_ts TIMESTAMP,
  -- End of the launch call (ns).
  launch_end_ts TIMESTAMP,
  -- Slice id of the GPU activity it started.
  gpu_id JOINID(slice.id),
  -- kernel, gpu_memcpy or gpu_memset.
  gpu_category STRING,
  -- Start of the GPU activity (ns).
  gpu_ts TIMESTAMP,
  -- End of the latest earlier activity on the same device and stream (NULL if none): when the
  -- stream became free for this one.
  stream_free_ts TIMESTAMP,
  -- 1 if the stream was still running earlier work when the launch call returned.
  queued BOOL,
  -- Launch latency, for a launch that found its stream idle: from the launch call's start to
  -- the activity's start (ns; from the start, because a kernel may begin before the call
  -- returns). NULL for a queued launch.
  latency_ns DURATION,
  -- Queueing, for a queued launch: from the launch call's end to the end of the stream's earlier
  -- work (ns). NULL for a launch that found its stream idle.
  queue_ns DURATION,
  -- For a queued launch: from the end of the stream's earlier work to this activity's start
  -- (ns), the GPU's own turnaround between two activities. NULL otherwise.
  turnaround_ns DURATION
) AS
WITH
  -- Every GPU activity with the launch that started it (if any), and when its stream became
  -- free: the latest end of the activities that started before it on the same device and
  -- stream (timestamps are whole ns, so "1 PRECEDING" leaves out those that started at the
  -- same instant), in one ordered pass rather than one search per launch.
  free AS (
    SELECT
      g.id AS gpu_id, g.category AS gpu_category, g.ts AS gpu_ts, ll.launch_id,
      MAX(g.ts + g.dur) OVER (
        PARTITION BY g.device, g.stream ORDER BY g.ts
        RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
      ) AS stream_free_ts
    FROM guide_kineto_gpu_activity AS g
    LEFT JOIN guide_kineto_launch_link AS ll ON ll.gpu_id = g.id
  ),
  link AS (
    SELECT
      r.id AS launch_id, r.name AS launch_name, r.ts AS launch_ts, r.ts + r.dur AS launch_end_ts,
      f.gpu_id, f.gpu_category, f.gpu_ts, f.stream_free_ts
    FROM free AS f
    JOIN guide_kineto_runtime_call AS r ON r.id = f.launch_id
  )
SELECT
  launch_id,
  launch_name,
  launch_ts,
  launch_end_ts,
  gpu_id,
  gpu_category,
  gpu_ts,
  stream_free_ts,
  COALESCE(stream_free_ts > launch_end_ts, 0) AS queued,
  IIF(COALESCE(stream_free_ts > launch_end_ts, 0), NULL, gpu_ts - launch_ts) AS latency_ns,
  IIF(stream_free_ts > launch_end_ts, stream_free_ts - launch_end_ts, NULL) AS queue_ns,
  IIF(stream_free_ts > launch_end_ts, gpu_ts - stream_free_ts, NULL) AS turnaround_ns
FROM link;
