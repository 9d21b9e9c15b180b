-- trace: mini:one_op_two_kernels.json
-- what: four launches, four links (a memset, the GEMM, its split-K reduce, the add), each with its launch-to-start time
INCLUDE PERFETTO MODULE guide.kineto;
SELECT r.ts AS launch_ts, r.name AS launch_name, g.category, substr(g.name, 1, 40) AS gpu_name,
  l.launch_to_start_ns
FROM guide_kineto_launch_link AS l
JOIN guide_kineto_runtime_call AS r ON r.id = l.launch_id
JOIN guide_kineto_gpu_activity AS g ON g.id = l.gpu_id
ORDER BY r.ts;
