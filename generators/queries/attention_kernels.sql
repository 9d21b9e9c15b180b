-- Which kernels and copies does a forward run on the GPU, how are they launched, and how full can they keep an SM?
-- output: table
-- needs: cuda
-- columns: family=What it is, name=Kernel, per_fwd=Per forward, time_ns_per_fwd=GPU time per forward, launch_api=Launched by, registers_per_thread=Registers per thread, block_threads=Threads per block, grid_blocks=Blocks, theoretical_occupancy_pct=Theoretical occupancy, occupancy_limit=Limited by, reported_occupancy=Kineto's est. achieved occupancy
-- question_ja: 順伝播は GPU でどのカーネルとコピーを実行し、それらはどう起動され、SM をどこまで埋められるか
-- columns_ja: family=種類, name=カーネル, per_fwd=順伝播 1 回あたりの回数, time_ns_per_fwd=順伝播 1 回あたりの GPU 時間, launch_api=起動元, registers_per_thread=スレッドあたりのレジスタ数, block_threads=ブロックあたりのスレッド数, grid_blocks=ブロック数, theoretical_occupancy_pct=理論占有率, occupancy_limit=制限要因, reported_occupancy=Kineto による達成占有率の推定
INCLUDE PERFETTO MODULE guide.attention;
INCLUDE PERFETTO MODULE guide.occupancy;

-- Theoretical occupancy: the guide's one rule (guide.occupancy), with the limits of an H100/H200
-- SM. Kineto's estimate is shown as it wrote it, a whole percent.
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
  guide_occupancy_theoretical_pct(
    MAX(registers_per_thread), MAX(block_threads), MAX(shared_memory_bytes)
  ) AS theoretical_occupancy_pct,
  guide_occupancy_limit(MAX(registers_per_thread), MAX(block_threads), MAX(shared_memory_bytes))
    AS occupancy_limit,
  IIF(
    MAX(reported_occupancy_pct) IS NULL,
    NULL,
    printf('%d %%', CAST(MAX(reported_occupancy_pct) AS INT))
  ) AS reported_occupancy
FROM work
GROUP BY name
ORDER BY MIN(ts);
