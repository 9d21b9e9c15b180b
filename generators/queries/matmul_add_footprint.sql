-- What did each kernel ask of the GPU: registers, shared memory, grid, block, estimated occupancy?
-- output: table
-- needs: cuda
-- columns: name=Kernel, instances=Instances, registers_per_thread=Registers per thread, shared_memory_bytes=Shared memory per block, grid=Grid (blocks), block=Block (threads), blocks_per_sm=Blocks per SM, est_occupancy_pct=Est. achieved occupancy
INCLUDE PERFETTO MODULE guide.launch;

SELECT
  k.name,
  COUNT(*) AS instances,
  k.registers_per_thread,
  k.shared_memory_bytes,
  k.grid,
  k.block,
  MAX(k.blocks_per_sm) AS blocks_per_sm,
  MAX(k.est_occupancy_pct) AS est_occupancy_pct
FROM guide_launch_kernel_footprint AS k
JOIN guide_launch_chain AS c ON c.gpu_id = k.id
-- Kernels launched during a profiled step (they may finish after it).
JOIN guide_kineto_profiler_step AS st ON c.ts >= st.ts AND c.ts < st.ts + st.dur
GROUP BY k.name, k.registers_per_thread, k.shared_memory_bytes, k.grid, k.block
ORDER BY MIN(k.ts);
