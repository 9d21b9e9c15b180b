-- Which kernels and copies does a forward run on the GPU, how are they launched, and how full can they keep an SM?
-- output: table
-- needs: cuda
-- columns: family=What it is, name=Kernel, per_fwd=Per forward, time_ns_per_fwd=GPU time per forward, launch_api=Launched by, registers_per_thread=Registers per thread, block_threads=Threads per block, grid_blocks=Blocks, reported_occupancy_pct=Reported occupancy, register_occupancy_pct=Register-limited occupancy
INCLUDE PERFETTO MODULE guide.attention;

-- Register-limited occupancy assumes an A100/H100-class SM (65536 registers, 64 warps).
WITH
  fwd AS (SELECT * FROM guide_attention_forward WHERE name = 'attn_fwd'),
  work AS (SELECT * FROM guide_attention_work_in!(fwd))
SELECT
  family,
  name,
  1.0 * COUNT(*) / (SELECT COUNT(*) FROM fwd) AS per_fwd,
  1.0 * SUM(dur) / (SELECT COUNT(*) FROM fwd) AS time_ns_per_fwd,
  GROUP_CONCAT(DISTINCT launch_api) AS launch_api,
  MAX(registers_per_thread) AS registers_per_thread,
  MAX(block_threads) AS block_threads,
  MAX(grid_blocks) AS grid_blocks,
  MAX(reported_occupancy_pct) AS reported_occupancy_pct,
  guide_attention_register_occupancy_pct(
    MAX(registers_per_thread), MAX(block_threads), 65536, 64
  ) AS register_occupancy_pct
FROM work
GROUP BY name
ORDER BY MIN(ts);
