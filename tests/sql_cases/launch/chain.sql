-- trace: mini:one_op_two_kernels.json
-- what: ProfilerStep → label → aten::matmul → aten::mm → launch → kernel: one chain per launch; the occupancy query is not a leaf
INCLUDE PERFETTO MODULE guide.launch;
SELECT ts, leaf_name, leaf_category, op_name, ancestors, gpu_category, gpu_ts, gpu_dur,
  launch_to_start_ns, substr(chain, 1, 120) AS chain
FROM guide_launch_chain
ORDER BY ts;
