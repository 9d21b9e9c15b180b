-- Which chain of annotations, operators and launches leads to each piece of work in the first step?
-- output: table
-- columns: start_ns=Start (from step start), chain=Chain (outermost first), op_name=Operator, gpu_name=GPU work, launch_to_start_ns=Launch to GPU start
-- question_ja: 最初のステップで、各処理に至るのはどのようなアノテーション・演算子・起動の連鎖か
-- columns_ja: start_ns=開始（ステップの開始から）, chain=連鎖（外側から順に）, op_name=演算子, gpu_name=GPU の処理, launch_to_start_ns=起動から GPU での開始まで
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.launch;

WITH first_step AS (SELECT * FROM guide_kineto_profiler_step ORDER BY step LIMIT 1)
SELECT
  c.ts - f.ts AS start_ns,
  c.chain,
  c.op_name,
  c.gpu_name,
  c.launch_to_start_ns
FROM guide_launch_chain AS c, first_step AS f
WHERE c.ts >= f.ts AND c.ts < f.ts + f.dur
ORDER BY c.ts, c.leaf_id;
