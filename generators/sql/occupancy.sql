-- Theoretical occupancy: how many warps of a kernel an SM can hold at once, out of the most it
-- can hold, from the kernel's recorded footprint (registers per thread, threads per block,
-- shared memory per block). The guide's one rule for it; every page that shows an occupancy
-- computes it here.
--
-- The limits are those of an SM of compute capability 9.0 (H100, H200), the GPU of the guide's
-- CUDA captures (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability",
-- and the occupancy calculator in cuda_occupancy.h):
--   65,536 32-bit registers per SM, split over 4 sub-partitions of 16,384; registers are given
--     to a warp in units of 256, and a warp's registers come from one sub-partition;
--   at most 64 resident warps (2,048 threads) and 32 resident blocks per SM;
--   228 KB (233,472 bytes) of shared memory per SM, at most 227 KB per block, allocated in units
--     of 128 bytes, plus 1 KB the system reserves per block.
-- A100 (8.0) has the same register and warp limits but 164 KB of shared memory per SM.
--
-- This is a ceiling set by the launch configuration, not a measurement: it does not know how
-- many blocks the grid has, nor how many warps were resident while the kernel ran.

-- Blocks of a kernel that fit on one SM at once (0: the block does not fit at all).
CREATE PERFETTO FUNCTION guide_occupancy_blocks_per_sm(
  -- Registers per thread.
  registers_per_thread LONG,
  -- Threads per block.
  block_threads LONG,
  -- Shared memory per block in bytes, static plus dynamic (Kineto's "shared memory").
  shared_memory_bytes LONG
)
-- Blocks per SM (0-32), or NULL without a block size.
RETURNS LONG AS
WITH
  k AS (
    SELECT
      ($block_threads + 31) / 32 AS warps,
      ((COALESCE($registers_per_thread, 0) * 32 + 255) / 256) * 256 AS regs_per_warp,
      ((COALESCE($shared_memory_bytes, 0) + 1024 + 127) / 128) * 128 AS smem
  ),
  lim AS (
    SELECT
      k.warps,
      64 / k.warps AS by_warps,
      CASE
        WHEN k.regs_per_warp = 0 THEN 32
        -- A block's warps are spread over the 4 sub-partitions; one block must fit the SM.
        WHEN k.regs_per_warp * (((k.warps + 3) / 4) * 4) > 65536 THEN 0
        ELSE ((16384 / k.regs_per_warp) * 4) / k.warps
      END AS by_registers,
      IIF(k.smem - 1024 > 232448, 0, 233472 / k.smem) AS by_shared_memory
    FROM k
  )
SELECT CASE
  WHEN $block_threads IS NULL OR $block_threads <= 0 THEN NULL
  ELSE MIN(32, by_warps, by_registers, by_shared_memory)
END
FROM lim;

-- Theoretical occupancy, 0-100: resident warps per SM at most, as a share of the SM's 64.
CREATE PERFETTO FUNCTION guide_occupancy_theoretical_pct(
  -- Registers per thread.
  registers_per_thread LONG,
  -- Threads per block.
  block_threads LONG,
  -- Shared memory per block in bytes, static plus dynamic.
  shared_memory_bytes LONG
)
-- Percent, 0-100, or NULL without a block size.
RETURNS DOUBLE AS
SELECT
  100.0 * guide_occupancy_blocks_per_sm(
    $registers_per_thread, $block_threads, $shared_memory_bytes
  ) * (($block_threads + 31) / 32) / 64;

-- What sets the ceiling: 'registers', 'shared memory', 'warps' (threads per block) or 'blocks'
-- (the 32-block limit), whichever allows the fewest blocks (the first of them on a tie).
CREATE PERFETTO FUNCTION guide_occupancy_limit(
  -- Registers per thread.
  registers_per_thread LONG,
  -- Threads per block.
  block_threads LONG,
  -- Shared memory per block in bytes, static plus dynamic.
  shared_memory_bytes LONG
)
-- The limiting resource, or NULL without a block size.
RETURNS STRING AS
WITH
  k AS (
    SELECT
      guide_occupancy_blocks_per_sm($registers_per_thread, $block_threads, $shared_memory_bytes)
        AS blocks,
      guide_occupancy_blocks_per_sm($registers_per_thread, $block_threads, 0) AS without_smem,
      guide_occupancy_blocks_per_sm(0, $block_threads, 0) AS threads_only
  )
SELECT CASE
  WHEN blocks IS NULL THEN NULL
  WHEN blocks < without_smem THEN 'shared memory'
  WHEN blocks < threads_only THEN 'registers'
  WHEN blocks < 32 THEN 'warps'
  ELSE 'blocks'
END
FROM k;
