-- Which kernel launches in the first step are preceded by an occupancy query, and from which operator?
-- output: table
-- needs: cuda
-- columns: op_name=Operator, launch_name=Launch call, kernel_name=Kernel, occupancy_calls=Occupancy queries before it
INCLUDE PERFETTO MODULE guide.launch;

WITH first_step AS (SELECT * FROM guide_kineto_profiler_step ORDER BY step LIMIT 1)
SELECT o.op_name, o.launch_name, o.kernel_name, o.occupancy_calls
FROM guide_launch_occupancy AS o, first_step AS f
WHERE o.ts >= f.ts AND o.ts < f.ts + f.dur
ORDER BY o.ts;
