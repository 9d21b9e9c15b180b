-- Kineto (torch.profiler) traces as Perfetto's JSON importer lays them out.
--
-- Every Kineto event becomes a slice on a thread track: CPU threads keep their pid/tid, GPU
-- streams appear as pid = device index, tid = stream id. The event's `cat` becomes
-- `slice.category`; its `args` land in the `args` table under `args.<key>`.

-- Every slice with its Kineto category and the thread or GPU stream it ran on.
CREATE PERFETTO VIEW guide_kineto_slice(
  -- Slice id.
  id ID(slice.id),
  -- Start timestamp (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- Event name (operator, runtime call, kernel or annotation).
  name STRING,
  -- Kineto category: cpu_op, user_annotation, cuda_runtime, cuda_driver, kernel, gpu_memcpy...
  category STRING,
  -- Nesting depth on its track (0 = outermost).
  depth LONG,
  -- Enclosing slice on the same track, if any.
  parent_id JOINID(slice.id),
  -- Track the slice is on.
  track_id JOINID(track.id),
  -- Argument set of the event (`args.*` keys).
  arg_set_id ARGSETID,
  -- Thread id in the trace (the stream id for GPU activity).
  tid LONG,
  -- Process id in the trace (the device index for GPU activity).
  pid LONG,
  -- Thread name as the trace names it.
  thread_name STRING
) AS
SELECT
  s.id,
  s.ts,
  s.dur,
  s.name,
  s.category,
  s.depth,
  s.parent_id,
  s.track_id,
  s.arg_set_id,
  t.tid,
  p.pid,
  t.name AS thread_name
FROM slice AS s
JOIN thread_track AS tt ON s.track_id = tt.id
JOIN thread AS t USING (utid)
LEFT JOIN process AS p USING (upid);

-- Work that ran on a GPU: kernels, memory copies and memory sets.
CREATE PERFETTO TABLE guide_kineto_gpu_activity(
  -- Slice id.
  id ID(slice.id),
  -- Start timestamp (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- Kernel or copy name.
  name STRING,
  -- kernel, gpu_memcpy or gpu_memset.
  category STRING,
  -- Device index.
  device LONG,
  -- Stream id.
  stream LONG,
  -- Argument set (grid, block, registers per thread, ...).
  arg_set_id ARGSETID
) AS
SELECT id, ts, dur, name, category, pid AS device, tid AS stream, arg_set_id
FROM guide_kineto_slice
WHERE category IN ('kernel', 'gpu_memcpy', 'gpu_memset');

-- CPU-side calls into the CUDA runtime or driver (launches, synchronisations, occupancy queries).
CREATE PERFETTO TABLE guide_kineto_runtime_call(
  -- Slice id.
  id ID(slice.id),
  -- Start timestamp (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- API name, e.g. cudaLaunchKernel or cuLaunchKernelEx.
  name STRING,
  -- cuda_runtime or cuda_driver.
  category STRING,
  -- Enclosing slice on the CPU thread (usually the aten:: operator that made the call).
  parent_id JOINID(slice.id)
) AS
SELECT id, ts, dur, name, category, parent_id
FROM guide_kineto_slice
WHERE category IN ('cuda_runtime', 'cuda_driver');

-- CUPTI correlation ids that more than one CPU-side launch (runtime or driver call) carries.
-- CUPTI numbers the launches of one process: an id on two launches means the file holds several
-- processes' launches (ranks merged into one file, say), which nothing tells apart, so no launch
-- can be tied to its kernel by that id. The doctor's trust gate counts these rows.
CREATE PERFETTO VIEW guide_kineto_shared_correlation(
  -- The correlation id.
  correlation LONG,
  -- Launches that carry it (two or more).
  launches LONG
) AS
SELECT c AS correlation, COUNT(*) AS launches
FROM (
  SELECT EXTRACT_ARG(arg_set_id, 'args.correlation') AS c FROM slice
  WHERE category IN ('cuda_runtime', 'cuda_driver')
)
WHERE c IS NOT NULL
GROUP BY c
HAVING COUNT(*) > 1;

-- The processes whose threads launch GPU work (make runtime or driver calls): more than one
-- in a file merges several processes' traces.
CREATE PERFETTO VIEW guide_kineto_launch_process(
  -- Process.
  upid JOINID(process.id),
  -- Runtime and driver calls it made.
  calls LONG
) AS
SELECT t.upid, COUNT(*) AS calls
FROM slice AS s
JOIN thread_track AS tt ON tt.id = s.track_id
JOIN thread AS t USING (utid)
WHERE s.category IN ('cuda_runtime', 'cuda_driver')
GROUP BY t.upid;

-- One row per profiled step (`ProfilerStep#N` annotations).
CREATE PERFETTO VIEW guide_kineto_profiler_step(
  -- Slice id of the step annotation.
  id ID(slice.id),
  -- Step number N as torch.profiler counts it.
  step LONG,
  -- Start timestamp (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- Track of the CPU thread that ran the step.
  track_id JOINID(track.id)
) AS
SELECT id, CAST(substr(name, length('ProfilerStep#') + 1) AS INT) AS step, ts, dur, track_id
FROM guide_kineto_slice
WHERE name GLOB 'ProfilerStep#*';

-- CPU launch -> GPU activity links, from the trace's `ac2g` flow events, checked by correlation id.
-- A trace with no launch flows at all (some exporters drop them) can still carry the CUPTI
-- correlation id on both ends: there, and only there, a launch and the GPU activity are linked
-- when they share an id that no other launch and no other activity carries (the GPU's events sit
-- under the device's pid, not the process's, so the pid cannot be part of the key; unique ids
-- keep two processes' counters from being crossed).
-- A graph launch replays many GPU activities that all carry the launch's correlation id. ROCm
-- writes their flows with no start (every event an `f`, the launch's own too), so the importer
-- links none of them: each GPU activity that no link above reached is linked to the graph launch
-- (`cudaGraphLaunch`, `hipGraphLaunch`) that alone carries its id, flows or not.
CREATE PERFETTO TABLE guide_kineto_launch_link(
  -- Slice id of the runtime or driver call.
  launch_id JOINID(slice.id),
  -- Slice id of the kernel, copy or set it started.
  gpu_id JOINID(slice.id),
  -- Time from the launch call's start to the GPU activity's start (ns).
  launch_to_start_ns DURATION
) AS
WITH by_id AS (
SELECT r.id AS launch_id, g.id AS gpu_id, g.ts - r.ts AS launch_to_start_ns
FROM flow AS f
-- On `slice` itself, not the guide_kineto_* views: their thread and process joins made this
-- table the slowest part of opening a trace (the views' rows are these, on thread tracks).
JOIN slice AS r ON r.id = f.slice_out
JOIN slice AS g ON g.id = f.slice_in
WHERE r.category IN ('cuda_runtime', 'cuda_driver')
  AND g.category IN ('kernel', 'gpu_memcpy', 'gpu_memset')
  AND r.track_id IN (SELECT id FROM thread_track)
  AND g.track_id IN (SELECT id FROM thread_track)
  -- When the importer drops a kernel that partly overlaps another (cuBLAS's split-K reduce
  -- kernel overlapping its GEMM, say), its flow lands on the overlapped kernel instead. Both
  -- ends of a true link carry the same CUPTI correlation id: keep only those (or links
  -- without ids: the comparison is NULL then, and COALESCE keeps the link). Each id is read
  -- once per link: reading args is most of this table's cost.
  AND COALESCE(
    EXTRACT_ARG(r.arg_set_id, 'args.correlation') = EXTRACT_ARG(g.arg_set_id, 'args.correlation'),
    TRUE
  )
UNION ALL
SELECT r.id AS launch_id, g.id AS gpu_id, g.ts - r.ts AS launch_to_start_ns
FROM (
  SELECT correlation, MIN(id) AS id
  FROM (
    SELECT s.id, EXTRACT_ARG(s.arg_set_id, 'args.correlation') AS correlation
    FROM slice AS s
    WHERE s.category IN ('cuda_runtime', 'cuda_driver')
      AND s.track_id IN (SELECT id FROM thread_track)
  )
  WHERE correlation IS NOT NULL
  GROUP BY correlation
  HAVING COUNT(*) = 1
) AS lc
JOIN (
  SELECT correlation, MIN(id) AS id
  FROM (
    SELECT s.id, EXTRACT_ARG(s.arg_set_id, 'args.correlation') AS correlation
    FROM slice AS s
    WHERE s.category IN ('kernel', 'gpu_memcpy', 'gpu_memset')
      AND s.track_id IN (SELECT id FROM thread_track)
  )
  WHERE correlation IS NOT NULL
  GROUP BY correlation
  HAVING COUNT(*) = 1
) AS gc USING (correlation)
JOIN slice AS r ON r.id = lc.id
JOIN slice AS g ON g.id = gc.id
-- Only on a trace with no launch flow at all: elsewhere the flows are the links (a constant
-- condition, tested once before any row is read).
WHERE NOT EXISTS (
  SELECT 1 FROM flow AS f
  JOIN slice AS o ON o.id = f.slice_out
  WHERE o.category IN ('cuda_runtime', 'cuda_driver')
)
)
SELECT launch_id, gpu_id, launch_to_start_ns FROM by_id
UNION ALL
SELECT r.id AS launch_id, g.id AS gpu_id, g.ts - r.ts AS launch_to_start_ns
FROM (
  SELECT correlation, MIN(id) AS id
  FROM (
    SELECT s.id, EXTRACT_ARG(s.arg_set_id, 'args.correlation') AS correlation
    FROM slice AS s
    WHERE s.category IN ('cuda_runtime', 'cuda_driver')
      AND s.name GLOB '*GraphLaunch*'
      AND s.track_id IN (SELECT id FROM thread_track)
  )
  WHERE correlation IS NOT NULL
  GROUP BY correlation
  HAVING COUNT(*) = 1
) AS lc
JOIN (
  SELECT s.id, EXTRACT_ARG(s.arg_set_id, 'args.correlation') AS correlation
  FROM slice AS s
  WHERE s.category IN ('kernel', 'gpu_memcpy', 'gpu_memset')
    AND s.track_id IN (SELECT id FROM thread_track)
    AND s.id NOT IN (SELECT gpu_id FROM by_id)
) AS gc USING (correlation)
JOIN slice AS r ON r.id = lc.id
JOIN slice AS g ON g.id = gc.id
-- Only where the trace launches a graph (a constant condition, tested before any row is read).
WHERE EXISTS (
  SELECT 1 FROM slice AS s
  WHERE s.category IN ('cuda_runtime', 'cuda_driver') AND s.name GLOB '*GraphLaunch*'
);

-- Links looked up by their GPU end: from a kernel to the call that launched it (the GPU's gaps).
CREATE PERFETTO INDEX guide_kineto_launch_link_gpu_idx ON guide_kineto_launch_link(gpu_id);

-- Links looked up by their CPU end: from a launch call to what it started.
CREATE PERFETTO INDEX guide_kineto_launch_link_launch_idx ON guide_kineto_launch_link(launch_id);

-- GPU activities looked up by start: the kernels that can overlap a host-device copy, and the
-- work running when a synchronisation returned.
CREATE PERFETTO INDEX guide_kineto_gpu_activity_ts_idx ON guide_kineto_gpu_activity(ts);

-- Runtime and driver calls that block the CPU until the GPU has caught up, on every vendor:
-- the synchronisations (cuda/hip Device/Stream/Event Synchronize, cuCtxSynchronize...) and the
-- blocking copies (cudaMemcpy, hipMemcpy, hipMemcpyWithStream, which PyTorch on ROCm uses for a
-- synchronous copy, and the driver's cuMemcpyDtoH/HtoD), and the *Async copies whose copy lands
-- in pageable memory (`Memcpy DtoH (Device -> Pageable)`): CUDA returns from those only once the
-- copy has completed, behind everything queued before it on the stream, as `.item()`, `.cpu()`
-- and `.tolist()` do.
CREATE PERFETTO TABLE guide_kineto_sync_call(
  -- Slice id.
  id ID(slice.id),
  -- API name.
  name STRING,
  -- Start timestamp (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- 'sync' for a synchronisation, 'copy' for a blocking copy.
  kind STRING
) AS
-- One filter per name pattern, which the table runs itself.
SELECT id, name, ts, dur, 'sync' AS kind FROM guide_kineto_runtime_call
WHERE name GLOB '*Synchronize*'
UNION ALL
SELECT id, name, ts, dur, 'copy' FROM guide_kineto_runtime_call
WHERE name IN (
  'cudaMemcpy', 'hipMemcpy', 'hipMemcpyWithStream', 'hipMemcpyDtoH', 'hipMemcpyHtoD',
  'hipMemcpyDtoD', 'cuMemcpyDtoH', 'cuMemcpyDtoH_v2', 'cuMemcpyHtoD', 'cuMemcpyHtoD_v2'
)
UNION ALL
SELECT r.id, r.name, r.ts, r.dur, 'copy'
FROM guide_kineto_runtime_call AS r
JOIN guide_kineto_launch_link AS l ON l.launch_id = r.id
JOIN slice AS g ON g.id = l.gpu_id
WHERE r.name GLOB '*Memcpy*Async*' AND g.name GLOB '*Device -> Pageable*';

-- The record_function() region directly inside each profiled step (`ProfilerStep#N` → label):
-- the guide's workloads wrap each call of the code they study in one such label.
CREATE PERFETTO VIEW guide_kineto_step_label(
  -- Step number N of the enclosing `ProfilerStep#N`.
  step LONG,
  -- Slice id of the label.
  id ID(slice.id),
  -- Label name, as passed to record_function().
  name STRING,
  -- Track of the CPU thread.
  track_id JOINID(track.id),
  -- Nesting depth of the label on its track.
  depth LONG,
  -- Start of the label (ns).
  ts TIMESTAMP,
  -- Width of the label (ns).
  dur DURATION
) AS
SELECT st.step, l.id, l.name, l.track_id, l.depth, l.ts, l.dur
FROM guide_kineto_profiler_step AS st
JOIN guide_kineto_slice AS l ON l.parent_id = st.id AND l.category = 'user_annotation';
