-- What does torch.compile add to, and remove from, each step?
-- output: values
-- question_ja: torch.compile は各ステップに何を加え、何を取り除くか
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.launch;

WITH
  step AS (SELECT * FROM guide_kineto_profiler_step),
  s AS (
    SELECT sl.*
    FROM guide_kineto_slice AS sl
    JOIN step AS st ON sl.track_id = st.track_id AND sl.ts >= st.ts AND sl.ts < st.ts + st.dur
  ),
  gpu AS (
    SELECT c.*
    FROM guide_launch_chain AS c
    JOIN step AS st ON c.ts >= st.ts AND c.ts < st.ts + st.dur
    WHERE c.gpu_id IS NOT NULL
  ),
  -- Does the trace record GPU work at all? Without it, GPU counts are unknown, not zero.
  on_gpu AS (SELECT (SELECT COUNT(*) FROM guide_kineto_gpu_activity) > 0 AS yes),
  self AS (
    -- Self time of every operator or annotation in the steps: its duration minus its children's.
    SELECT
      s.name,
      s.dur,
      s.dur - COALESCE((SELECT SUM(c.dur) FROM slice AS c WHERE c.parent_id = s.id), 0) AS self_ns
    FROM s
  )
SELECT
  (SELECT COUNT(*) FROM step) AS steps,
  (SELECT COUNT(*) FROM s WHERE name = 'TorchDynamo Cache Lookup') AS cache_lookups,
  (SELECT COUNT(*) FROM s WHERE name GLOB 'Torch-Compiled Region*') AS compiled_regions,
  (SELECT COUNT(*) FROM s WHERE name = 'AOTDispatcher Runtime Wrapper Prologue')
    AS aot_prologues,
  (SELECT COUNT(*) FROM s WHERE name GLOB '## Call CompiledFxGraph *') AS graph_calls,
  (SELECT COUNT(DISTINCT name) FROM s WHERE name GLOB '## Call CompiledFxGraph *') AS graph_names,
  (SELECT MIN(name) FROM s WHERE name GLOB '## Call CompiledFxGraph *') AS graph_name,
  (SELECT COUNT(*) FROM s WHERE name = 'aten::addmm') AS addmm_calls,
  (SELECT COUNT(*) FROM s WHERE name = 'aten::mm') AS mm_calls,
  (SELECT COUNT(*) FROM s WHERE name = 'aten::add') AS add_calls,
  -- The bias is copied into the output buffer before the GEMM accumulates onto it.
  (SELECT COUNT(*) FROM s WHERE name = 'aten::copy_') AS copy_calls,
  -- Per step, the GEMM's self time (aten::mm eager, aten::addmm compiled: its self time then
  -- includes accumulating onto the bias).
  (SELECT SUM(self_ns) FROM self WHERE name IN ('aten::mm', 'aten::addmm'))
    / (SELECT COUNT(*) FROM step) AS gemm_self_ns_per_step,
  -- Per step, the op that puts the bias into the output: aten::add eager, aten::copy_ compiled.
  (SELECT SUM(dur) FROM s WHERE name IN ('aten::add', 'aten::copy_'))
    / (SELECT COUNT(*) FROM step) AS bias_ns_per_step,
  -- Per step, the self time of the rows only compiled code has (the wrappers around the graph).
  (
    SELECT COALESCE(SUM(self_ns), 0)
    FROM self
    WHERE name IN (
      'TorchDynamo Cache Lookup', 'AOTDispatcher Runtime Wrapper Prologue', 'Pregraph bytecode'
    )
      OR name GLOB 'Torch-Compiled Region*'
      OR name GLOB '## Call CompiledFxGraph *'
  ) / (SELECT COUNT(*) FROM step) AS compile_rows_self_ns_per_step,
  (SELECT CASE WHEN yes THEN (SELECT COUNT(*) FROM s WHERE name = 'cudaMemcpyAsync') END FROM on_gpu)
    AS memcpy_calls,
  (SELECT CASE WHEN yes THEN (SELECT COUNT(*) FROM gpu WHERE gpu_name GLOB 'Memcpy DtoD*') END
   FROM on_gpu) AS dtod_copies,
  -- GPU work started from inside aten::copy_ (the bias copy): a copy kernel or a memory copy.
  (SELECT CASE WHEN yes THEN (SELECT COUNT(*) FROM gpu WHERE op_name = 'aten::copy_') END
   FROM on_gpu) AS copy_gpu_work,
  (SELECT MIN(gpu_name) FROM gpu WHERE op_name = 'aten::copy_') AS copy_gpu_name,
  (SELECT CASE WHEN yes THEN (SELECT COUNT(*) FROM gpu WHERE gpu_category = 'kernel') END
   FROM on_gpu) AS kernels,
  (SELECT kernel_name FROM guide_launch_gemm WHERE kernel_name IS NOT NULL LIMIT 1)
    AS gemm_kernel;
