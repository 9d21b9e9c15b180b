-- Which kernel launches in the first step are preceded by an occupancy query, and from which operator?
-- output: table
-- needs: cuda
-- columns: op_name=Operator, launch_name=Launch call, kernel_name=Kernel, occupancy_calls=Occupancy queries before it
-- question_ja: 最初のステップで、直前に占有率の問い合わせがあったカーネル起動はどれか、それを起動した演算子は何か
-- columns_ja: op_name=演算子, launch_name=起動呼び出し, kernel_name=カーネル, occupancy_calls=直前の占有率の問い合わせ回数
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.launch;

WITH first_step AS (SELECT * FROM guide_kineto_profiler_step ORDER BY step LIMIT 1)
SELECT o.op_name, o.launch_name, o.kernel_name, o.occupancy_calls
FROM guide_launch_occupancy AS o, first_step AS f
WHERE o.ts >= f.ts AND o.ts < f.ts + f.dur
ORDER BY o.ts;
