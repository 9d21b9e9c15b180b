-- What the CPU thread does inside a workload's `record_function` label, row by row, sorted into
-- the kinds a reader compares between eager and `torch.compile` runs.

INCLUDE PERFETTO MODULE guide.kineto;

-- Every CPU operator or annotation inside the label that sits directly in a profiled step
-- (`ProfilerStep#N` > label > ...), with its kind:
-- 'aten' (an `aten::` operator), 'compile wrapper' (rows torch.compile adds around the compiled
-- code: `Torch-Compiled Region`, `TorchDynamo Cache Lookup`, `Pregraph bytecode`,
-- `AOTDispatcher ...`, `## Call CompiledFxGraph ... ##`), 'generated kernel' (an Inductor kernel's
-- own row: `triton_*` launchers on GPU, `*cpp_fused_*` with the C++ kernel profile on CPU) or
-- 'other'. Runtime calls (`cudaLaunchKernel`, ...) are not rows of this view.
CREATE PERFETTO TABLE guide_dispatch_row(
  -- Profiled step number.
  step LONG,
  -- Slice id.
  id ID(slice.id),
  -- Row name.
  name STRING,
  -- Kineto category (cpu_op or user_annotation).
  category STRING,
  -- Depth below the label (1 = directly inside it).
  depth LONG,
  -- Start timestamp (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- Duration minus that of the rows directly inside it (ns).
  self_dur DURATION,
  -- aten, compile wrapper, generated kernel or other.
  kind STRING
) AS
WITH label AS (SELECT step, id, ts, dur, depth, track_id FROM guide_kineto_step_label)
SELECT
  label.step,
  s.id,
  s.name,
  s.category,
  s.depth - label.depth AS depth,
  s.ts,
  s.dur,
  s.dur - COALESCE((SELECT SUM(c.dur) FROM slice AS c WHERE c.parent_id = s.id), 0) AS self_dur,
  CASE
    WHEN s.name GLOB 'aten::*' THEN 'aten'
    WHEN s.name GLOB 'Torch-Compiled Region*' OR s.name GLOB 'TorchDynamo*'
      OR s.name = 'Pregraph bytecode' OR s.name GLOB 'AOTDispatcher*'
      OR s.name GLOB '## Call CompiledFxGraph*' THEN 'compile wrapper'
    WHEN s.name GLOB 'triton_*' OR s.name GLOB '*cpp_fused_*' THEN 'generated kernel'
    ELSE 'other'
  END AS kind
FROM label
JOIN guide_kineto_slice AS s
  ON s.track_id = label.track_id AND s.ts >= label.ts AND s.ts + s.dur <= label.ts + label.dur
  AND s.depth > label.depth AND s.category IN ('cpu_op', 'user_annotation');

-- The rows that do a workload's arithmetic, per profiled step. On a GPU trace: every kernel
-- launched from inside a step, with the CPU operator whose runtime call launched it. On a trace
-- without kernels (CPU only): the operators that compute (`aten::mm`, `aten::addmm`, `aten::bmm`,
-- `aten::gelu`, `aten::mul`, `aten::add`, and Inductor's generated-kernel rows); view and
-- bookkeeping operators are left out.
CREATE PERFETTO TABLE guide_dispatch_work(
  -- Profiled step number.
  step LONG,
  -- Slice id of the kernel (GPU) or operator (CPU).
  id JOINID(slice.id),
  -- Start timestamp (ns).
  ts TIMESTAMP,
  -- Duration (ns): kernel time on a GPU, operator wall time on a CPU.
  dur DURATION,
  -- Kernel or operator name.
  name STRING,
  -- 'GPU kernel' or 'CPU operator'.
  kind STRING,
  -- Slice id of the operator that launched the kernel (the operator itself on a CPU).
  op_id JOINID(slice.id),
  -- Name of that operator.
  op_name STRING
) AS
WITH
  has_kernels AS (
    SELECT COUNT(*) > 0 AS yes FROM guide_kineto_gpu_activity WHERE category = 'kernel'
  ),
  gpu AS (
    SELECT st.step, g.id, g.ts, g.dur, g.name, 'GPU kernel' AS kind, r.parent_id AS op_id,
      (SELECT p.name FROM slice AS p WHERE p.id = r.parent_id) AS op_name
    FROM guide_kineto_launch_link AS ll
    JOIN guide_kineto_gpu_activity AS g ON g.id = ll.gpu_id AND g.category = 'kernel'
    JOIN guide_kineto_runtime_call AS r ON r.id = ll.launch_id
    JOIN guide_kineto_profiler_step AS st ON r.ts >= st.ts AND r.ts < st.ts + st.dur
  ),
  cpu AS (
    SELECT d.step, d.id, d.ts, d.dur, d.name, 'CPU operator' AS kind, d.id AS op_id,
      d.name AS op_name
    FROM guide_dispatch_row AS d
    WHERE d.name IN (
        'aten::mm', 'aten::addmm', 'aten::bmm', 'aten::gelu', 'aten::mul', 'aten::add'
      ) OR d.kind = 'generated kernel'
  )
SELECT * FROM gpu WHERE (SELECT yes FROM has_kernels)
UNION ALL
SELECT * FROM cpu WHERE NOT (SELECT yes FROM has_kernels);
