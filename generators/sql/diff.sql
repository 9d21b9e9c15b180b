-- One run's profiled steps in the rows that `python -m generators.doctor diff BEFORE AFTER`
-- compares with another run's: the kernels each step runs (with the kernel-name decoder's family
-- and the launching operator's input shapes), the operators it calls, and the loop in a few
-- numbers (guide_ranks_rank's step time, GPU busy share and exposed communication, plus kernels,
-- launches and the allocator's peak).
--
-- Everything here is read from one trace; the two runs' rows meet in Python
-- (generators/doctor/diff.py), which matches them and says what could not be matched. The loop
-- is guide_windows_real_loop: the profiled steps less their stubs (or the whole trace without
-- steps).
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.shapes;
INCLUDE PERFETTO MODULE guide.kernel_names;
INCLUDE PERFETTO MODULE guide.ranks;

-- Every kernel of the loop, each in the step that launched it: the step whose window holds its
-- launch call (guide_kineto_launch_link), or, for a kernel with no launch in the trace, the step
-- whose window holds its start. A kernel launched in one step often runs in the next (the GPU
-- runs behind the CPU), so the launch, not the kernel's own time, says which step's work it is.
CREATE PERFETTO TABLE _guide_diff_kernel(
  -- Slice id of the kernel.
  id ID(slice.id),
  -- Loop window of the step that launched it (guide_windows_loop.window_id).
  window_id JOINID(slice.id),
  -- Start of the kernel (ns).
  ts TIMESTAMP,
  -- Duration of the kernel (ns).
  dur DURATION,
  -- Kernel name.
  name STRING,
  -- The library or code generator its name says it comes from (guide_kernel_names_family), or
  -- NULL.
  family STRING,
  -- The kind of work its name says it does (guide_kernel_names_work), or NULL.
  work STRING,
  -- The CPU operator whose runtime call launched it, or NULL (no launch, or a launch outside
  -- any operator).
  op_name STRING,
  -- That operator's input shapes as recorded (guide_shapes_input's dims, in input order,
  -- joined by ' × '), or NULL where the trace records none.
  shape STRING,
  -- Its place in its step: 1 for the step's first kernel (by launch, then start), 2 for the
  -- next, ...
  position LONG,
  -- Its place among the step's kernels of the same name and shape: 1 for the first, 2 for the
  -- next, ... (a kernel name that repeats in a step is matched by this place).
  occurrence LONG
) AS
WITH
  loop AS MATERIALIZED (SELECT window_id, ts, dur FROM guide_windows_real_loop),
  kernel AS MATERIALIZED (
    SELECT
      g.id, g.ts, g.dur, g.name,
      (SELECT MIN(ll.launch_id) FROM guide_kineto_launch_link AS ll WHERE ll.gpu_id = g.id)
        AS launch_id
    FROM guide_kineto_gpu_activity AS g
    WHERE g.category = 'kernel'
  ),
  launched AS MATERIALIZED (
    SELECT k.id, k.ts, k.dur, k.name, COALESCE(r.ts, k.ts) AS order_ts, r.parent_id AS op_id
    FROM kernel AS k
    LEFT JOIN slice AS r ON r.id = k.launch_id
  ),
  ops AS MATERIALIZED (SELECT DISTINCT op_id FROM launched WHERE op_id IS NOT NULL),
  op_shape AS MATERIALIZED (
    SELECT slice_id AS op_id, GROUP_CONCAT(dims, ' × ') AS shape
    FROM (
      SELECT i.slice_id, i.dims FROM guide_shapes_input AS i
      WHERE i.slice_id IN (SELECT op_id FROM ops)
      ORDER BY i.slice_id, i.input_index
    )
    GROUP BY slice_id
  ),
  placed AS MATERIALIZED (
    SELECT l.*, w.window_id
    FROM launched AS l
    CROSS JOIN loop AS w
    WHERE l.order_ts >= w.ts AND l.order_ts < w.ts + w.dur
  ),
  named AS (
    SELECT
      p.id, p.window_id, p.ts, p.dur, p.name, p.order_ts,
      guide_kernel_names_family(p.name) AS family,
      guide_kernel_names_work(p.name) AS work,
      (SELECT o.name FROM slice AS o WHERE o.id = p.op_id) AS op_name,
      s.shape
    FROM placed AS p
    LEFT JOIN op_shape AS s ON s.op_id = p.op_id
  )
SELECT
  id, window_id, ts, dur, name, family, work, op_name, shape,
  ROW_NUMBER() OVER (PARTITION BY window_id ORDER BY order_ts, ts, id) AS position,
  ROW_NUMBER() OVER (PARTITION BY window_id, name, shape ORDER BY order_ts, ts, id) AS occurrence
FROM named;

-- The loop's kernels by name, shape and place among their namesakes (_guide_diff_kernel): how
-- many steps ran each, for how long in all, and where in the step on average. One row per kernel
-- a step runs, whatever the number of steps; what diff.py matches.
CREATE PERFETTO VIEW guide_diff_kernel_slot(
  -- Kernel name.
  name STRING,
  -- Its family (guide_kernel_names_family), or NULL.
  family STRING,
  -- Its kind of work (guide_kernel_names_work), or NULL.
  work STRING,
  -- Its launching operator's input shapes (_guide_diff_kernel.shape), or NULL.
  shape STRING,
  -- Its place among the step's kernels of the same name and shape.
  occurrence LONG,
  -- The operator that launched it (the first by name where steps differ), or NULL.
  op_name STRING,
  -- Steps that ran it.
  runs LONG,
  -- Its time over those steps (ns).
  dur DURATION,
  -- Its mean place in the step (_guide_diff_kernel.position).
  position DOUBLE
) AS
SELECT
  name, family, work, shape, occurrence, MIN(op_name) AS op_name,
  COUNT(*) AS runs, SUM(dur) AS dur, AVG(position) AS position
FROM _guide_diff_kernel
GROUP BY name, shape, occurrence;

-- The loop's CPU operators by name: how many calls start in the loop (nested calls counted too:
-- `aten::linear` and the `aten::addmm` inside it are two calls).
CREATE PERFETTO VIEW guide_diff_op(
  -- Operator name.
  name STRING,
  -- Calls that start inside the loop's windows.
  calls LONG,
  -- Their wall time (ns): a nested call's time is also inside its caller's.
  dur DURATION
) AS
WITH loop AS MATERIALIZED (SELECT window_id, ts, dur FROM guide_windows_real_loop)
SELECT s.name, COUNT(*) AS calls, SUM(s.dur) AS dur
FROM slice AS s
CROSS JOIN loop AS w
WHERE s.category = 'cpu_op' AND s.ts >= w.ts AND s.ts < w.ts + w.dur
GROUP BY s.name;

-- One run's loop in numbers: guide_ranks_rank's (steps, loop width, step time, GPU busy time,
-- communication and exposed communication) with the loop's kernels, launches and operators, and
-- the CUDA caching allocator's peak where the trace records its memory events. One row.
CREATE PERFETTO VIEW guide_diff_run(
  -- Real profiled steps (0 for a trace without step markers: the loop is then the whole trace).
  steps LONG,
  -- The loop's width: the union of its windows (ns).
  loop_ns DURATION,
  -- The mean width of a real step (ns); NULL without steps.
  step_ns DURATION,
  -- GPU busy time inside the loop (guide_windows_loop_busy, the guide's one busy share is
  -- busy_ns / loop_ns); NULL on a CPU-only trace.
  busy_ns DURATION,
  -- Communication time inside the loop (guide_comm_exposed).
  comm_ns DURATION,
  -- Of that, the time no compute kernel on the same GPU overlapped (guide_comm_exposed).
  exposed_ns DURATION,
  -- Kernels the loop launched (_guide_diff_kernel).
  kernels LONG,
  -- Their time (ns): a sum of kernel durations, which may overlap.
  kernel_ns DURATION,
  -- Runtime or driver calls inside the loop that started GPU work (guide_kineto_launch_link);
  -- NULL where the trace ties no launch to GPU work.
  launches LONG,
  -- CPU operator calls inside the loop (guide_diff_op).
  operators LONG,
  -- The highest `Total Allocated` of the CUDA caching allocator's `[memory]` events inside the
  -- loop (bytes, on any one GPU: Kineto's Device Type 1); NULL where the trace records none
  -- (captured without profile_memory=True).
  memory_peak_bytes LONG,
  -- The GPU (Kineto's Device Id) that reached memory_peak_bytes (the lowest on a tie), or NULL.
  memory_peak_device LONG
) AS
WITH
  loop AS MATERIALIZED (SELECT window_id, ts, dur FROM guide_windows_real_loop),
  launch AS (
    SELECT COUNT(*) AS n
    FROM guide_kineto_runtime_call AS r
    CROSS JOIN loop AS w
    WHERE r.ts >= w.ts AND r.ts < w.ts + w.dur
      AND r.id IN (SELECT launch_id FROM guide_kineto_launch_link)
  ),
  memory AS MATERIALIZED (
    SELECT
      s.ts,
      EXTRACT_ARG(s.arg_set_id, 'args.Total Allocated') AS allocated,
      EXTRACT_ARG(s.arg_set_id, 'args.Device Id') AS device
    FROM slice AS s
    WHERE s.name = '[memory]' AND EXTRACT_ARG(s.arg_set_id, 'args.Device Type') = 1
  ),
  peak AS (
    SELECT m.allocated, m.device
    FROM memory AS m
    CROSS JOIN loop AS w
    WHERE m.ts >= w.ts AND m.ts < w.ts + w.dur AND m.allocated IS NOT NULL
    ORDER BY m.allocated DESC, m.device
    LIMIT 1
  )
SELECT
  r.steps, r.loop_ns, r.step_ns, r.busy_ns, r.comm_ns, r.exposed_ns,
  (SELECT COUNT(*) FROM _guide_diff_kernel) AS kernels,
  (SELECT COALESCE(SUM(dur), 0) FROM _guide_diff_kernel) AS kernel_ns,
  IIF(EXISTS (SELECT 1 FROM guide_kineto_launch_link), (SELECT n FROM launch), NULL) AS launches,
  (SELECT COALESCE(SUM(calls), 0) FROM guide_diff_op) AS operators,
  (SELECT allocated FROM peak) AS memory_peak_bytes,
  (SELECT device FROM peak) AS memory_peak_device
FROM guide_ranks_rank AS r;
