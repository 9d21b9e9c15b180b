-- trace: mini:one_op_two_kernels.json
-- what: aten::mm asked the occupancy calculator once before its first kernel and not before its second
INCLUDE PERFETTO MODULE guide.launch;
SELECT ts, launch_name, op_name, substr(kernel_name, 1, 40) AS kernel_name, occupancy_calls
FROM guide_launch_occupancy
ORDER BY ts;
