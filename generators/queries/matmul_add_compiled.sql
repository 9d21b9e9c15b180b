-- What does torch.compile add to, and remove from, each step?
-- output: values
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
  (SELECT COUNT(*) FROM s WHERE name = 'cudaMemcpyAsync') AS memcpy_calls,
  (SELECT COUNT(*) FROM gpu WHERE gpu_name GLOB 'Memcpy DtoD*') AS dtod_copies,
  (SELECT COUNT(*) FROM gpu WHERE gpu_category = 'kernel') AS kernels,
  (SELECT kernel_name FROM guide_launch_gemm WHERE kernel_name IS NOT NULL LIMIT 1)
    AS gemm_kernel;
