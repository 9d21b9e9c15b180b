-- Where is the bias add: which operators does aten::linear call, and how many kernels per call?
-- output: values
-- question_ja: バイアス加算はどこにあるか（aten::linear が呼ぶ演算子と、呼び出し 1 回あたりのカーネル数）
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.gemm;

WITH
  op AS (SELECT * FROM guide_kineto_slice WHERE category = 'cpu_op'),
  linear AS (SELECT * FROM op WHERE name = 'aten::linear'),
  first_linear AS (SELECT * FROM linear ORDER BY ts LIMIT 1),
  addmm AS (SELECT * FROM op WHERE name = 'aten::addmm'),
  -- GPU counts only mean something on a trace with GPU activity: NULL (not 0) on a CPU capture.
  gpu AS (SELECT COUNT(*) > 0 AS yes FROM guide_kineto_gpu_activity),
  -- GPU work (kernels, copies, sets) started by runtime calls made inside an aten::addmm.
  addmm_gpu AS (
    SELECT g.*
    FROM addmm
    JOIN guide_kineto_runtime_call AS r
      ON r.ts >= addmm.ts AND r.ts < addmm.ts + addmm.dur
    JOIN guide_kineto_slice AS rs ON rs.id = r.id AND rs.track_id = addmm.track_id
    JOIN guide_kineto_launch_link AS ll ON ll.launch_id = r.id
    JOIN guide_kineto_gpu_activity AS g ON g.id = ll.gpu_id
  )
SELECT
  (SELECT COUNT(*) FROM linear) AS linear_calls,
  (SELECT COUNT(*) FROM addmm) AS addmm_calls,
  (
    SELECT COUNT(*) FROM addmm JOIN op AS p ON p.id = addmm.parent_id
    WHERE p.name = 'aten::linear'
  ) AS addmm_called_by_linear,
  (SELECT COUNT(*) FROM op WHERE name IN ('aten::add', 'aten::add_')) AS add_calls,
  (SELECT COUNT(*) FROM op WHERE name IN ('aten::mm', 'aten::matmul')) AS mm_calls,
  -- On a CPU, addmm broadcasts the bias into the output first (a copy), then accumulates the
  -- product onto it: these are the copies made inside addmm.
  (
    SELECT COUNT(*) FROM addmm JOIN op AS c ON c.parent_id = addmm.id
    WHERE c.name = 'aten::copy_'
  ) AS copies_inside_addmm,
  CASE WHEN (SELECT yes FROM gpu) THEN
    (SELECT COUNT(*) FROM guide_kineto_gpu_activity WHERE category = 'kernel')
  END AS kernels,
  -- Kernels launched from inside aten::addmm, and the GPU memory copies or sets it started
  -- (a bias copied into the output before the GEMM shows up as one or the other).
  CASE WHEN (SELECT yes FROM gpu) THEN
    (SELECT COUNT(*) FROM addmm_gpu WHERE category = 'kernel')
  END AS addmm_kernels,
  CASE WHEN (SELECT yes FROM gpu) THEN
    (SELECT COUNT(*) FROM addmm_gpu WHERE category IN ('gpu_memcpy', 'gpu_memset'))
  END AS addmm_copies,
  (SELECT MIN(flops) FROM guide_gemm_op WHERE name = 'aten::addmm') AS addmm_flops,
  (SELECT ts FROM first_linear) / 1e9 AS first_linear_start_s,
  (SELECT ts + dur FROM first_linear) / 1e9 AS first_linear_end_s;
