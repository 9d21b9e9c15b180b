-- trace: mini:one_op_two_kernels.json
-- what: registers, shared memory, grid and block each kernel asked for, as Kineto recorded them
INCLUDE PERFETTO MODULE guide.launch;
SELECT ts, substr(name, 1, 40) AS name, registers_per_thread, shared_memory_bytes, grid, block,
  block_threads, threads, blocks_per_sm, warps_per_sm, est_occupancy_pct
FROM guide_launch_kernel_footprint
ORDER BY ts;
