-- What did each kernel ask of the GPU: registers, shared memory, grid, block, and how many of its warps can an SM hold?
-- output: table
-- needs: cuda
-- columns: name=Kernel, instances=Instances, registers_per_thread=Registers per thread, shared_memory_bytes=Shared memory per block, grid=Grid (blocks), block=Block (threads), blocks_per_sm=Grid blocks per SM, theoretical_occupancy_pct=Theoretical occupancy, occupancy_limit=Limited by, est_occupancy=Kineto's est. achieved occupancy
-- question_ja: 各カーネルは GPU に何を要求したか（レジスタ、共有メモリ、グリッド、ブロック）、また SM はそのワープをいくつ保持できるか
-- columns_ja: name=カーネル, instances=インスタンス数, registers_per_thread=スレッドあたりのレジスタ数, shared_memory_bytes=ブロックあたりの共有メモリ, grid=グリッド（ブロック数）, block=ブロック（スレッド数）, blocks_per_sm=SM あたりのグリッドブロック数, theoretical_occupancy_pct=理論占有率, occupancy_limit=制限要因, est_occupancy=Kineto による達成占有率の推定
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.launch;
INCLUDE PERFETTO MODULE guide.occupancy;

SELECT
  k.name,
  COUNT(*) AS instances,
  k.registers_per_thread,
  k.shared_memory_bytes,
  k.grid,
  k.block,
  MAX(k.blocks_per_sm) AS blocks_per_sm,
  guide_occupancy_theoretical_pct(k.registers_per_thread, k.block_threads, k.shared_memory_bytes)
    AS theoretical_occupancy_pct,
  guide_occupancy_limit(k.registers_per_thread, k.block_threads, k.shared_memory_bytes)
    AS occupancy_limit,
  -- Kineto writes its estimate rounded to a whole percent: shown as it wrote it, so that a
  -- rounded 13 does not read as more precise than a computed 12.5.
  printf('%d %%', CAST(MAX(k.est_occupancy_pct) AS INT)) AS est_occupancy
FROM guide_launch_kernel_footprint AS k
JOIN guide_launch_chain AS c ON c.gpu_id = k.id
-- Kernels launched during a profiled step (they may finish after it).
JOIN guide_kineto_profiler_step AS st ON c.ts >= st.ts AND c.ts < st.ts + st.dur
GROUP BY k.name, k.registers_per_thread, k.shared_memory_bytes, k.grid, k.block
ORDER BY MIN(k.ts);
