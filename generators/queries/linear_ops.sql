-- Where is the bias add: which operators does aten::linear call, and how many kernels per call?
-- output: values
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.gemm;

WITH
  op AS (SELECT * FROM guide_kineto_slice WHERE category = 'cpu_op'),
  linear AS (SELECT * FROM op WHERE name = 'aten::linear'),
  first_linear AS (SELECT * FROM linear ORDER BY ts LIMIT 1),
  addmm AS (SELECT * FROM op WHERE name = 'aten::addmm')
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
  (SELECT COUNT(*) FROM guide_kineto_gpu_activity WHERE category = 'kernel') AS kernels,
  (SELECT SUM(kernels) FROM guide_gemm_op WHERE name = 'aten::addmm') AS addmm_kernels,
  (SELECT MIN(flops) FROM guide_gemm_op WHERE name = 'aten::addmm') AS addmm_flops,
  (SELECT ts FROM first_linear) / 1e9 AS first_linear_start_s,
  (SELECT ts + dur FROM first_linear) / 1e9 AS first_linear_end_s;
