-- One training step: its phases (data, copy to the device, forward, backward, optimizer step,
-- zero_grad, reading the loss back), what each costs on the CPU and on the GPU, the links from
-- forward operators to their backward, and the allocator's memory events.
--
-- PyTorch labels three phases itself, in every training trace: `enumerate(DataLoader)#...`
-- around each batch the DataLoader hands out, `Optimizer.step#<Optimizer>.step` and
-- `Optimizer.zero_grad#<Optimizer>.zero_grad`. The guide's workload adds `to_device`, `forward`,
-- `backward` and `log_loss` (record_function labels). On a GPU the autograd engine runs the
-- backward on a thread of its own: the calling thread's `backward` label spans the wait, and
-- the backward's operators and launches are on the engine's thread, so work is assigned to a
-- phase by time on the step's thread and on the engine's thread(s), not by nesting alone.
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.gemm;
INCLUDE PERFETTO MODULE guide.dtypes;
INCLUDE PERFETTO MODULE guide.traffic;

-- The phase a CPU annotation marks, from its name; NULL for any other slice. The names PyTorch
-- writes itself (DataLoader, optimizer) are matched in every trace; the others are this guide's
-- labels.
CREATE PERFETTO FUNCTION _guide_train_phase_name(
  -- Slice name.
  name STRING
)
-- 'data', 'to_device', 'forward', 'backward', 'optimizer', 'zero_grad', 'log_loss' or NULL.
RETURNS STRING AS
SELECT CASE
  WHEN $name GLOB 'enumerate(DataLoader)#*' THEN 'data'
  WHEN $name = 'to_device' THEN 'to_device'
  WHEN $name = 'forward' THEN 'forward'
  WHEN $name = 'backward' THEN 'backward'
  WHEN $name GLOB 'Optimizer.step#*' THEN 'optimizer'
  WHEN $name GLOB 'Optimizer.zero_grad#*' THEN 'zero_grad'
  WHEN $name = 'log_loss' THEN 'log_loss'
  ELSE NULL
END;

-- The order the phases run in within a step (for sorting tables).
CREATE PERFETTO FUNCTION guide_train_phase_order(
  -- A phase name (_guide_train_phase_name).
  phase STRING
)
-- 1 for 'data' up to 7 for 'log_loss'; 8 for anything else.
RETURNS LONG AS
SELECT CASE $phase
  WHEN 'data' THEN 1
  WHEN 'to_device' THEN 2
  WHEN 'forward' THEN 3
  WHEN 'backward' THEN 4
  WHEN 'optimizer' THEN 5
  WHEN 'zero_grad' THEN 6
  WHEN 'log_loss' THEN 7
  ELSE 8
END;

-- The loop's profiled steps: the CPU's `ProfilerStep#N` slices. A ROCm trace (and some CUDA ones)
-- also copies each step onto a GPU stream as a `gpu_user_annotation`: that copy is not a step of
-- the loop, and counted as one it would halve every per-step average.
CREATE PERFETTO TABLE guide_train_step(
  -- Slice id of the step annotation.
  id JOINID(slice.id),
  -- Step number N.
  step LONG,
  -- Start (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- Track of the thread that ran the step.
  track_id JOINID(track.id),
  -- Depth of the step annotation on its track.
  depth LONG
) AS
SELECT st.id, st.step, st.ts, st.dur, st.track_id, s.depth
FROM guide_kineto_profiler_step AS st
JOIN slice AS s USING (id)
WHERE s.category = 'user_annotation';

-- The CPU threads that do a training step's work: the thread that runs the profiler steps
-- ('step') and any other thread that runs autograd engine work ('autograd': on a GPU the engine
-- runs the backward on a thread of its own). Other threads (a pin-memory thread, the profiler's
-- own) are left out, so that their work is not charged to whatever phase is running.
CREATE PERFETTO TABLE guide_train_thread(
  -- Track of the thread.
  track_id JOINID(track.id),
  -- Thread id in the trace.
  tid LONG,
  -- 'step' or 'autograd'.
  role STRING
) AS
WITH
  step_track AS (
    SELECT DISTINCT s.track_id, s.tid
    FROM guide_kineto_slice AS s
    WHERE s.id IN (SELECT id FROM guide_train_step)
  )
SELECT track_id, tid, 'step' AS role
FROM step_track
UNION ALL
SELECT DISTINCT track_id, tid, 'autograd' AS role
FROM guide_kineto_slice
WHERE name GLOB 'autograd::engine::evaluate_function: *'
  AND track_id NOT IN (SELECT track_id FROM step_track);

-- Every phase of every profiled step, found in one of three ways (`found_by`):
--
-- * 'label': an annotation on the step's thread whose name marks a phase
--   (_guide_train_phase_name): PyTorch's own (DataLoader, optimizer step, zero_grad) in any
--   trace, the guide's `record_function` labels in its own.
-- * 'autograd engine': a step with no `backward` label. Its backward runs from the start of the
--   first `autograd::engine::evaluate_function: <Node>` slice in the step to the end of the
--   last, on whichever thread the engine ran them (its own on a GPU, the step's on a CPU), or
--   to the end of the last work on the engine's own thread in the step if that is later (a
--   DDP reducer's bucket copies follow the last node): the time the step's thread spends in
--   `loss.backward()`. Every training trace has these slices.
-- * 'before the backward': a step with no `forward` label, whose backward was found. Its
--   forward is the step's thread's work before the backward begins: from the first slice on
--   that thread (an operator, or an annotation of the loop's own, such as DDP's
--   `DistributedDataParallel.forward`) that starts after the last labelled phase that ended
--   before the backward (or after the step's start) to the backward's start. It holds what the loop runs there: the model, the
--   loss, and a copy of the batch to the device unless a label marks it.
--
-- One forward and one backward per step: with several backward passes in a step (gradient
-- accumulation), the derived backward runs from the first to the last, the forwards between
-- them inside it.
CREATE PERFETTO TABLE guide_train_phase(
  -- Slice id of the annotation; for a derived phase, of its first slice (the first
  -- evaluate_function, the forward's first operator).
  id JOINID(slice.id),
  -- Profiler step it belongs to.
  step LONG,
  -- Phase (_guide_train_phase_name).
  phase STRING,
  -- Annotation name as the trace writes it (names the optimizer and the DataLoader iterator);
  -- for a derived phase, the name of its first slice.
  name STRING,
  -- Start (ns).
  ts TIMESTAMP,
  -- CPU time of the phase: the annotation's duration, or the derived window's (ns).
  dur DURATION,
  -- Track of the step's thread.
  track_id JOINID(track.id),
  -- Depth of the annotation on its track; for a derived phase, the step annotation's depth
  -- (everything on the step's thread inside the window is in the phase).
  depth LONG,
  -- 'label', 'autograd engine' or 'before the backward'.
  found_by STRING
) AS
WITH
  labelled AS (
    SELECT
      s.id,
      st.step,
      _guide_train_phase_name(s.name) AS phase,
      s.name,
      s.ts,
      s.dur,
      s.track_id,
      s.depth,
      'label' AS found_by
    FROM guide_kineto_slice AS s
    JOIN guide_train_step AS st
      ON s.track_id = st.track_id AND s.ts >= st.ts AND s.ts < st.ts + st.dur
    WHERE s.category = 'user_annotation' AND _guide_train_phase_name(s.name) IS NOT NULL
  ),
  node AS (
    SELECT
      st.step,
      s.id,
      s.name,
      s.ts,
      s.ts + s.dur AS end_ts,
      ROW_NUMBER() OVER (PARTITION BY st.step ORDER BY s.ts, s.id) AS nth
    FROM guide_train_step AS st
    JOIN guide_kineto_slice AS s ON s.ts >= st.ts AND s.ts < st.ts + st.dur
    WHERE s.name GLOB 'autograd::engine::evaluate_function: *'
      AND s.track_id IN (SELECT track_id FROM guide_train_thread)
  ),
  -- The end of the engine's own threads' last work in each step: after the last node, a DDP
  -- reducer copies its gradient buckets and waits on streams there, and the step's thread is
  -- still waiting in loss.backward().
  engine_thread_end AS (
    SELECT st.step, MAX(s.ts + s.dur) AS end_ts
    FROM guide_train_step AS st
    JOIN guide_train_thread AS th ON th.role = 'autograd'
    JOIN slice AS s
      ON s.track_id = th.track_id AND s.depth = 0 AND s.ts >= st.ts AND s.ts < st.ts + st.dur
    GROUP BY st.step
  ),
  engine AS (
    SELECT
      n.id,
      n.step,
      'backward' AS phase,
      n.name,
      n.ts,
      MAX(
        (SELECT MAX(end_ts) FROM node AS m WHERE m.step = n.step),
        COALESCE((SELECT e.end_ts FROM engine_thread_end AS e WHERE e.step = n.step), 0)
      ) - n.ts AS dur,
      st.track_id,
      st.depth,
      'autograd engine' AS found_by
    FROM node AS n
    JOIN guide_train_step AS st USING (step)
    WHERE n.nth = 1
      AND NOT EXISTS (SELECT 1 FROM labelled AS l WHERE l.step = n.step AND l.phase = 'backward')
  ),
  backward AS (
    SELECT step, ts FROM labelled WHERE phase = 'backward'
    UNION ALL
    SELECT step, ts FROM engine
  ),
  -- Where a derived forward may start: after the step's start and after every labelled phase
  -- that ended before the step's (first) backward.
  forward_after AS (
    SELECT
      st.step,
      st.track_id,
      st.depth,
      b.ts AS backward_ts,
      MAX(st.ts, COALESCE(
        (SELECT MAX(l.ts + l.dur) FROM labelled AS l
          WHERE l.step = st.step AND l.ts + l.dur <= b.ts),
        st.ts
      )) AS after_ts
    FROM guide_train_step AS st
    JOIN (SELECT step, MIN(ts) AS ts FROM backward GROUP BY step) AS b USING (step)
    WHERE NOT EXISTS (SELECT 1 FROM labelled AS l WHERE l.step = st.step AND l.phase = 'forward')
  ),
  first_op AS (
    SELECT
      f.*,
      (SELECT s.id FROM guide_kineto_slice AS s
        WHERE s.track_id = f.track_id AND s.category IN ('cpu_op', 'user_annotation')
          AND s.ts >= f.after_ts AND s.ts < f.backward_ts AND s.id NOT IN (
            SELECT id FROM guide_train_step
          )
        ORDER BY s.ts, s.depth LIMIT 1) AS op_id
    FROM forward_after AS f
  ),
  before_backward AS (
    SELECT
      s.id,
      f.step,
      'forward' AS phase,
      s.name,
      s.ts,
      f.backward_ts - s.ts AS dur,
      f.track_id,
      f.depth,
      'before the backward' AS found_by
    FROM first_op AS f
    JOIN slice AS s ON s.id = f.op_id
  )
SELECT * FROM labelled
UNION ALL
SELECT * FROM engine
UNION ALL
SELECT * FROM before_backward
ORDER BY ts;

-- The CPU operators of each phase: on the step's thread inside the annotation, and on an
-- autograd engine thread during it.
CREATE PERFETTO TABLE guide_train_phase_op(
  -- Phase annotation (guide_train_phase.id).
  phase_id JOINID(slice.id),
  -- Slice id of the operator.
  id JOINID(slice.id),
  -- Operator name.
  name STRING,
  -- Start (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- Nesting below the phase annotation: 1 = called by the phase's own code (on an engine
  -- thread: an operator with no operator above it).
  level LONG,
  -- 'step' or 'autograd' (guide_train_thread.role).
  thread_role STRING,
  -- 1 for an operator; 0 for the autograd engine's own rows, which Kineto records as CPU ops
  -- too: `autograd::engine::evaluate_function: <Node>` and the node's row directly under it
  -- (`MmBackward0`, `torch::autograd::AccumulateGrad`). They are bookkeeping around the
  -- operators a node runs, and would double the backward's count if counted as operators.
  is_operator LONG
) AS
SELECT
  p.id AS phase_id,
  s.id,
  s.name,
  s.ts,
  s.dur,
  IIF(th.role = 'step', s.depth - p.depth,
    1 + (SELECT COUNT(*) FROM ancestor_slice(s.id) AS a WHERE a.category = 'cpu_op')) AS level,
  th.role AS thread_role,
  NOT (
    s.name GLOB 'autograd::engine::evaluate_function: *'
    OR COALESCE(up.name = 'autograd::engine::evaluate_function: ' || s.name, FALSE)
  ) AS is_operator
FROM guide_train_phase AS p
JOIN guide_kineto_slice AS s ON s.ts >= p.ts AND s.ts < p.ts + p.dur
JOIN guide_train_thread AS th ON th.track_id = s.track_id
LEFT JOIN slice AS up ON up.id = s.parent_id
WHERE s.category = 'cpu_op'
  AND (th.role = 'autograd' OR (s.track_id = p.track_id AND s.depth > p.depth));

-- The GPU work each phase launched: kernels, copies and memsets whose launch call ran on the
-- step's thread inside the phase, or on an autograd engine thread during it.
CREATE PERFETTO TABLE guide_train_phase_gpu(
  -- Phase annotation (guide_train_phase.id).
  phase_id JOINID(slice.id),
  -- Slice id of the launch (runtime or driver call).
  launch_id JOINID(slice.id),
  -- Launch call name.
  launch_name STRING,
  -- Slice id of the GPU activity.
  gpu_id JOINID(slice.id),
  -- Kernel, copy or memset name.
  name STRING,
  -- kernel, gpu_memcpy or gpu_memset.
  category STRING,
  -- GPU start (ns).
  ts TIMESTAMP,
  -- GPU duration (ns).
  dur DURATION
) AS
WITH
  -- Every launch from a training thread, with the GPU work it started, once: joining the
  -- phases to these rows, not to every slice of the trace, keeps this table fast on a trace of
  -- a hundred thousand events.
  launch AS MATERIALIZED (
    SELECT r.id, r.name, r.ts, r.track_id, th.role, ll.gpu_id
    FROM guide_kineto_launch_link AS ll
    JOIN slice AS r ON r.id = ll.launch_id
    JOIN guide_train_thread AS th ON th.track_id = r.track_id
  )
SELECT
  p.id AS phase_id,
  l.id AS launch_id,
  l.name AS launch_name,
  g.id AS gpu_id,
  g.name,
  g.category,
  g.ts,
  g.dur
FROM guide_train_phase AS p
JOIN launch AS l
  ON l.ts >= p.ts AND l.ts < p.ts + p.dur AND (l.role = 'autograd' OR l.track_id = p.track_id)
JOIN guide_kineto_gpu_activity AS g ON g.id = l.gpu_id;

-- What each phase cost: its CPU time and operators, and the GPU work it launched.
CREATE PERFETTO TABLE guide_train_phase_cost(
  -- Phase annotation (guide_train_phase.id).
  id JOINID(slice.id),
  -- Profiler step.
  step LONG,
  -- Phase name.
  phase STRING,
  -- Start (ns).
  ts TIMESTAMP,
  -- CPU time of the phase (ns).
  dur DURATION,
  -- Operators in the phase, at every level (guide_train_phase_op.is_operator: the autograd
  -- engine's node rows are not operators).
  cpu_ops LONG,
  -- Operators the phase's own code called (level 1).
  top_ops LONG,
  -- Kernels it launched (NULL on a trace without GPU activity, or whose GPU activity cannot be
  -- tied to any launch: here and in the next three).
  kernels LONG,
  -- Memory copies it launched.
  copies LONG,
  -- Memory sets it launched.
  memsets LONG,
  -- GPU time of the work it launched, a union of intervals (guide_windows_union), whenever it
  -- ran (ns).
  gpu_ns DURATION
) AS
WITH
  ops AS (
    SELECT phase_id, SUM(is_operator) AS cpu_ops, SUM(is_operator AND level = 1) AS top_ops
    FROM guide_train_phase_op
    GROUP BY phase_id
  ),
  gpu AS (
    SELECT
      phase_id,
      SUM(category = 'kernel') AS kernels,
      SUM(category = 'gpu_memcpy') AS copies,
      SUM(category = 'gpu_memset') AS memsets
    FROM guide_train_phase_gpu
    GROUP BY phase_id
  ),
  busy AS (
    SELECT * FROM guide_windows_union!(
      (SELECT phase_id AS group_id, ts, dur FROM guide_train_phase_gpu)
    )
  )
SELECT
  p.id,
  p.step,
  p.phase,
  p.ts,
  p.dur,
  COALESCE(ops.cpu_ops, 0) AS cpu_ops,
  COALESCE(ops.top_ops, 0) AS top_ops,
  IIF(traced.yes, COALESCE(gpu.kernels, 0), NULL) AS kernels,
  IIF(traced.yes, COALESCE(gpu.copies, 0), NULL) AS copies,
  IIF(traced.yes, COALESCE(gpu.memsets, 0), NULL) AS memsets,
  IIF(traced.yes, COALESCE(busy.busy_ns, 0), NULL) AS gpu_ns
FROM guide_train_phase AS p
-- GPU work is counted only where it can be tied to its launch: on a trace with GPU activity but
-- no link at all (no flows, no correlation ids), 0 kernels would be a claim; NULL says unknown.
CROSS JOIN (SELECT EXISTS (SELECT 1 FROM guide_kineto_launch_link) AS yes) AS traced
LEFT JOIN ops ON ops.phase_id = p.id
LEFT JOIN gpu ON gpu.phase_id = p.id
LEFT JOIN busy ON busy.group_id = p.id;

-- Every GEMM (guide_gemm_op) with the phase it ran in: forward GEMMs on the step's thread,
-- backward GEMMs on whichever thread ran the backward.
CREATE PERFETTO TABLE guide_train_gemm(
  -- Slice id of the GEMM operator.
  id JOINID(slice.id),
  -- Phase annotation it ran in.
  phase_id JOINID(slice.id),
  -- Phase name.
  phase STRING,
  -- Operator name (aten::mm, aten::addmm, ...).
  name STRING,
  -- CPU duration of the call (ns).
  dur DURATION,
  -- Floating-point operations (guide_gemm_op.flops).
  flops LONG,
  -- Element type of the first operand as recorded.
  dtype STRING,
  -- Kernels the call launched.
  kernels LONG,
  -- Name of the longest kernel it launched (NULL on a CPU trace).
  kernel_name STRING,
  -- Summed duration of its kernels (ns; 0 on a CPU trace).
  kernel_dur DURATION
) AS
SELECT
  g.id,
  o.phase_id,
  p.phase,
  g.name,
  g.dur,
  g.flops,
  g.dtype,
  g.kernels,
  g.kernel_name,
  g.kernel_dur
FROM guide_gemm_op AS g
JOIN guide_train_phase_op AS o ON o.id = g.id
JOIN guide_train_phase AS p ON p.id = o.phase_id;

-- The model's parameters, read from the shapes of the first profiled forward: each linear
-- layer's weight (the second input of the outermost `aten::linear`; autocast's wrapper row
-- holds an inner `aten::linear` of the same weight cast to bf16, which is not counted again),
-- the embedding table (`aten::embedding`'s first input) and the norms' weights (a 1-D tensor
-- multiplying the hidden states, `aten::mul`). Each parameter is used once per forward in this
-- guide's model (no weight tying), so every row is one parameter tensor. Empty when the trace
-- records no shapes.
CREATE PERFETTO TABLE guide_train_param(
  -- Slice id of the operator that reads the parameter.
  id JOINID(slice.id),
  -- Operator name.
  name STRING,
  -- Elements of the parameter.
  numel LONG,
  -- Bytes per element of the parameter as stored (the operator's recorded input type).
  elem_bytes LONG
) AS
WITH
  fwd AS (
    SELECT o.id, o.name, s.arg_set_id, up.name AS parent_name
    FROM guide_train_phase AS p
    JOIN guide_train_phase_op AS o ON o.phase_id = p.id
    JOIN slice AS s ON s.id = o.id
    LEFT JOIN slice AS up ON up.id = s.parent_id
    WHERE p.phase = 'forward' AND p.step = (SELECT MIN(step) FROM guide_train_step)
  ),
  param AS (
    SELECT id, name, arg_set_id, 1 AS i FROM fwd
    WHERE name = 'aten::linear' AND COALESCE(parent_name, '') <> 'aten::linear'
    UNION ALL
    SELECT id, name, arg_set_id, 0 FROM fwd WHERE name = 'aten::embedding'
    UNION ALL
    SELECT id, name, arg_set_id, 0 FROM fwd
    WHERE name = 'aten::mul'
      AND extract_arg(arg_set_id, 'args.Input Dims[0][0]') IS NOT NULL
      AND extract_arg(arg_set_id, 'args.Input Dims[0][1]') IS NULL
  )
SELECT
  id,
  name,
  guide_traffic_input_numel(arg_set_id, i) AS numel,
  guide_dtypes_elem_bytes(extract_arg(arg_set_id, 'args.Input type[' || i || ']')) AS elem_bytes
FROM param
WHERE guide_traffic_input_numel(arg_set_id, i) IS NOT NULL;

-- Each operator of the optimizer step that launched kernels, with its kernels' time and the
-- bytes it must move (the guide's one count of the optimizer's memory traffic):
--   - a single-tensor operator (`aten::mul_`, `aten::addcdiv_`, ... of a per-parameter loop)
--     records its shapes: guide_traffic_op counts its bytes;
--   - a multi-tensor operator (`aten::_foreach_*`, `aten::_fused_adamw_`) records its tensor
--     lists without shapes: when it runs over every parameter, its bytes are its operands per
--     element (guide_traffic_list_operands) x the parameters' elements (guide_train_param) x
--     their element size. A call whose kernels have fewer blocks than the parameters need
--     (multi_tensor_apply gives a block at most 65,536 elements) runs over smaller tensors, the
--     step counters: `small`, a few bytes, left out (bytes NULL).
CREATE PERFETTO TABLE guide_train_optimizer_op(
  -- Slice id of the operator.
  id JOINID(slice.id),
  -- Operator name.
  name STRING,
  -- Its optimizer-step annotation (guide_train_phase.id).
  phase_id JOINID(slice.id),
  -- Kernels it launched.
  kernels LONG,
  -- Summed duration of those kernels (ns).
  kernel_dur DURATION,
  -- Whether it is a multi-tensor operator over tensor lists.
  listed BOOL,
  -- Whether it is a multi-tensor call over tensors smaller than the parameters.
  small BOOL,
  -- Bytes it must read and write at least; NULL when not counted (a small call, an operator
  -- without recorded shapes or a rule).
  bytes LONG
) AS
WITH
  param AS (SELECT SUM(numel) AS numel, MAX(elem_bytes) AS elem_bytes FROM guide_train_param),
  k AS MATERIALIZED (
    SELECT
      op.id,
      op.name,
      op.arg_set_id,
      g.phase_id,
      g.dur,
      COALESCE(extract_arg(ks.arg_set_id, 'args.grid[0]'), 1)
        * COALESCE(extract_arg(ks.arg_set_id, 'args.grid[1]'), 1)
        * COALESCE(extract_arg(ks.arg_set_id, 'args.grid[2]'), 1) AS blocks
    FROM guide_train_phase AS p
    JOIN guide_train_phase_gpu AS g ON g.phase_id = p.id AND g.category = 'kernel'
    JOIN slice AS r ON r.id = g.launch_id
    JOIN slice AS op ON op.id = r.parent_id
    JOIN slice AS ks ON ks.id = g.gpu_id
    WHERE p.phase = 'optimizer'
  ),
  ops AS MATERIALIZED (
    SELECT id, name, arg_set_id, phase_id, COUNT(*) AS kernels, SUM(dur) AS kernel_dur,
      SUM(blocks) AS blocks, name GLOB 'aten::_f*' AS listed
    FROM k GROUP BY id
  ),
  shaped AS (
    SELECT op_id, read_bytes + write_bytes AS bytes
    FROM guide_traffic_op!((SELECT id, name, arg_set_id FROM ops WHERE NOT listed))
  )
SELECT
  ops.id,
  ops.name,
  ops.phase_id,
  ops.kernels,
  ops.kernel_dur,
  ops.listed,
  ops.listed AND ops.blocks * 65536 < param.numel AS small,
  CASE
    WHEN NOT ops.listed THEN NULLIF(shaped.bytes, 0)
    WHEN ops.blocks * 65536 >= param.numel
      THEN guide_traffic_list_operands(ops.name) * param.numel * param.elem_bytes
  END AS bytes
FROM ops
CROSS JOIN param
LEFT JOIN shaped ON shaped.op_id = ops.id;

-- The trace's forward-to-backward links: Kineto writes a `fwdbwd` flow from each forward
-- operator to the backward node that autograd runs for it (the sequence number ties them).
CREATE PERFETTO TABLE guide_train_fwdbwd(
  -- Slice id of the forward operator.
  forward_id JOINID(slice.id),
  -- Its name.
  forward_name STRING,
  -- Its thread's track.
  forward_track_id JOINID(track.id),
  -- Slice id of the backward node's slice.
  backward_id JOINID(slice.id),
  -- Its name (e.g. MmBackward0).
  backward_name STRING,
  -- Its thread's track.
  backward_track_id JOINID(track.id),
  -- Start of the backward slice (ns).
  backward_ts TIMESTAMP
) AS
SELECT
  o.id AS forward_id,
  o.name AS forward_name,
  o.track_id AS forward_track_id,
  i.id AS backward_id,
  i.name AS backward_name,
  i.track_id AS backward_track_id,
  i.ts AS backward_ts
FROM flow AS f
JOIN slice AS o ON o.id = f.slice_out
JOIN slice AS i ON i.id = f.slice_in
WHERE extract_arg(f.arg_set_id, 'cat') = 'fwdbwd';

-- The allocator's memory events. With `profile_memory=True` Kineto writes one `[memory]`
-- instant event per allocation and free; Perfetto's JSON importer keeps each as a zero-length
-- slice named `[memory]` on the thread that made it, with the event's fields as arguments. On a
-- GPU, CUDA events count the caching allocator's live bytes; on a CPU the running total counts
-- only what was allocated since the profiler started (earlier allocations are not in it).
--
-- One device's events can come from more than one counter: with DataLoader workers on a CPU,
-- the shared-memory blocks a batch arrives in report their own allocations and frees with a
-- `Total Allocated` of 0, interleaved with the allocator's. Mixed in, they would drop the line
-- to 0 and back. So an event is kept only when it continues the running total of the events
-- kept before it (its total less its own bytes equals the last kept total), walking each
-- device's events in order from the first one whose total is not below its own bytes.
CREATE PERFETTO TABLE guide_train_memory(
  -- Time of the allocation or free (ns).
  ts TIMESTAMP,
  -- Bytes allocated (positive) or freed (negative).
  bytes LONG,
  -- The allocator's running total of allocated bytes on this device after the event.
  allocated_bytes LONG,
  -- The allocator's reserved bytes on this device after the event: what it holds from the
  -- driver, allocated or cached for reuse (Kineto's `Total Reserved`).
  reserved_bytes LONG,
  -- Address of the block allocated or freed (an allocation and its free share it).
  addr LONG,
  -- 'CPU' or 'CUDA' (Kineto's Device Type 0 or 1).
  device STRING,
  -- Profiler step the event falls in (NULL outside the steps).
  step LONG,
  -- Phase the event falls in (NULL between phases).
  phase STRING
) AS
WITH RECURSIVE
  ev AS MATERIALIZED (
    SELECT
      s.ts,
      extract_arg(s.arg_set_id, 'args.Bytes') AS bytes,
      extract_arg(s.arg_set_id, 'args.Total Allocated') AS allocated_bytes,
      extract_arg(s.arg_set_id, 'args.Total Reserved') AS reserved_bytes,
      extract_arg(s.arg_set_id, 'args.Addr') AS addr,
      CASE extract_arg(s.arg_set_id, 'args.Device Type') WHEN 0 THEN 'CPU' WHEN 1 THEN 'CUDA' END
        AS device,
      s.id
    FROM slice AS s
    WHERE s.name = '[memory]'
  ),
  numbered AS MATERIALIZED (
    SELECT ev.*, ROW_NUMBER() OVER (PARTITION BY device ORDER BY ts, id) AS rn
    FROM ev
    WHERE device IS NOT NULL
  ),
  first_kept AS (
    SELECT device, MIN(rn) AS rn FROM numbered WHERE allocated_bytes >= bytes GROUP BY device
  ),
  -- One row per event from the first kept one on: the running total so far, and whether the
  -- event continues it.
  walk(device, rn, id, total, kept) AS (
    SELECT n.device, n.rn, n.id, n.allocated_bytes, 1
    FROM numbered AS n
    JOIN first_kept AS f ON f.device = n.device AND f.rn = n.rn
    UNION ALL
    SELECT
      n.device,
      n.rn,
      n.id,
      IIF(n.allocated_bytes - n.bytes = w.total, n.allocated_bytes, w.total),
      n.allocated_bytes - n.bytes = w.total
    FROM walk AS w
    JOIN numbered AS n ON n.device = w.device AND n.rn = w.rn + 1
  )
SELECT
  n.ts,
  n.bytes,
  n.allocated_bytes,
  n.reserved_bytes,
  n.addr,
  n.device,
  (SELECT st.step FROM guide_train_step AS st
    WHERE n.ts >= st.ts AND n.ts < st.ts + st.dur) AS step,
  (SELECT p.phase FROM guide_train_phase AS p
    WHERE n.ts >= p.ts AND n.ts < p.ts + p.dur ORDER BY p.depth DESC LIMIT 1) AS phase
FROM walk AS w
JOIN numbered AS n ON n.id = w.id
WHERE w.kept
ORDER BY n.ts, n.id;

-- The steps whose derived split cannot be trusted, with why. The rules that find the forward and
-- the backward without labels read the autograd engine's `evaluate_function` slices; where those
-- are missing (a trace that recorded only some of them), or where one step holds several
-- backward passes (gradient accumulation, a pipeline schedule), the derived backward is not the
-- step's backward, and nothing else in the numbers says so. Three signs, each per step:
--
-- * 'no operator in the derived backward': the engine's nodes were found but ran no operator;
-- * 'operators on the step's thread inside the derived backward': on a trace with GPU work the
--   engine runs the backward on a thread of its own, and the step's thread only waits in it;
-- * 'far fewer engine nodes than fwdbwd links': fewer than half as many evaluate_function
--   slices as `fwdbwd` links end in the step (each link ends at a node the engine ran).
CREATE PERFETTO TABLE guide_train_step_warning(
  -- Profiler step.
  step LONG,
  -- Why its split is unreliable.
  warning STRING
) AS
WITH
  derived AS (
    SELECT p.id, p.step, p.ts, p.dur, p.track_id, c.cpu_ops
    FROM guide_train_phase AS p
    JOIN guide_train_phase_cost AS c USING (id)
    WHERE p.found_by = 'autograd engine'
  ),
  on_step_thread AS (
    SELECT o.phase_id, SUM(o.is_operator) AS n
    FROM guide_train_phase_op AS o
    WHERE o.thread_role = 'step'
    GROUP BY o.phase_id
  ),
  nodes AS (
    SELECT st.step, COUNT(*) AS n
    FROM guide_train_step AS st
    JOIN guide_kineto_slice AS s ON s.ts >= st.ts AND s.ts < st.ts + st.dur
    WHERE s.name GLOB 'autograd::engine::evaluate_function: *'
      AND s.track_id IN (SELECT track_id FROM guide_train_thread)
    GROUP BY st.step
  ),
  links AS (
    SELECT st.step, COUNT(*) AS n
    FROM guide_train_step AS st
    JOIN guide_train_fwdbwd AS f ON f.backward_ts >= st.ts AND f.backward_ts < st.ts + st.dur
    GROUP BY st.step
  ),
  signs AS (
    SELECT step, 'no operator in the derived backward' AS warning
    FROM derived WHERE cpu_ops = 0
    UNION ALL
    SELECT d.step, 'operators on the step''s thread inside the derived backward'
    FROM derived AS d
    JOIN on_step_thread AS o ON o.phase_id = d.id
    WHERE o.n > 0 AND EXISTS (SELECT 1 FROM guide_kineto_gpu_activity)
    UNION ALL
    SELECT l.step, 'far fewer engine nodes than fwdbwd links'
    FROM links AS l
    LEFT JOIN nodes AS n USING (step)
    WHERE COALESCE(n.n, 0) * 2 < l.n
  )
SELECT step, warning FROM signs ORDER BY step, warning;
