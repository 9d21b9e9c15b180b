-- Which occupancy queries does the GEMM library make, from which operator, and in which of the profiled steps?
-- output: values
-- question_ja: GEMM ライブラリはどの占有率の問い合わせを、どの演算子から、プロファイルしたどのステップで行うか
-- needs: cuda
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.launch;

WITH
  step AS (SELECT * FROM guide_kineto_profiler_step),
  -- Every cuda/hipOccupancy* call, with the operator it was made from and the step it falls in.
  occ AS (
    SELECT
      o.name,
      st.step,
      (
        SELECT a.name FROM ancestor_slice(o.id) AS a
        WHERE a.category = 'cpu_op' ORDER BY a.depth DESC LIMIT 1
      ) AS op_name,
      (
        SELECT a.id FROM ancestor_slice(o.id) AS a
        WHERE a.category = 'cpu_op' ORDER BY a.depth DESC LIMIT 1
      ) AS op_id
    FROM guide_kineto_runtime_call AS o
    JOIN step AS st ON o.ts >= st.ts AND o.ts < st.ts + st.dur
    WHERE o.name GLOB '*Occupancy*'
  ),
  gemm AS (
    SELECT g.op_id, st.step
    FROM guide_launch_gemm AS g
    JOIN step AS st ON g.ts >= st.ts AND g.ts < st.ts + st.dur
  )
SELECT
  (SELECT COUNT(*) FROM step) AS steps,
  (SELECT COUNT(*) FROM gemm) AS gemm_calls,
  (SELECT COUNT(*) FROM occ) AS occupancy_calls,
  (SELECT COUNT(*) FROM occ WHERE name GLOB '*OccupancyMaxActiveClusters*') AS cluster_calls,
  (SELECT COUNT(*) FROM occ WHERE name GLOB '*OccupancyMaxActiveBlocksPerMultiprocessor*')
    AS blocks_per_sm_calls,
  (SELECT COUNT(*) FROM occ WHERE name GLOB '*OccupancyAvailableDynamicSMemPerBlock*')
    AS dynamic_smem_calls,
  -- The blocks-per-SM query's exact name (with or without WithFlags).
  (SELECT MIN(name) FROM occ WHERE name GLOB '*OccupancyMaxActiveBlocksPerMultiprocessor*')
    AS blocks_per_sm_call,
  (SELECT COUNT(DISTINCT op_id) FROM occ) AS asking_ops,
  (SELECT GROUP_CONCAT(DISTINCT op_name) FROM occ) AS asking_op_names,
  (SELECT COUNT(DISTINCT step) FROM occ) AS asking_steps,
  (SELECT MIN(step) FROM occ) AS asking_step,
  -- GEMM calls after the one that asked: the same shape, asked nothing.
  (SELECT COUNT(*) FROM gemm WHERE op_id NOT IN (SELECT op_id FROM occ WHERE op_id IS NOT NULL))
    AS silent_gemm_calls;
