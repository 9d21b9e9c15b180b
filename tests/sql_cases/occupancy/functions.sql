-- trace: mini:cpu_only.json
-- what: theoretical occupancy and its limit on compute capability 9.0 for footprints that hit each limit
INCLUDE PERFETTO MODULE guide.occupancy;
WITH k(what, registers_per_thread, block_threads, shared_memory_bytes) AS (
  VALUES
    ('small block, few registers', 16, 128, 0),
    ('many registers', 128, 256, 0),
    ('large shared memory', 32, 128, 100000),
    ('too much shared memory', 32, 128, 240000),
    ('full blocks of 1024', 32, 1024, 0),
    ('tiny blocks', 16, 32, 0),
    ('no block size', 32, NULL, 0)
)
SELECT
  what,
  guide_occupancy_blocks_per_sm(registers_per_thread, block_threads, shared_memory_bytes)
    AS blocks_per_sm,
  guide_occupancy_theoretical_pct(registers_per_thread, block_threads, shared_memory_bytes)
    AS theoretical_pct,
  guide_occupancy_limit(registers_per_thread, block_threads, shared_memory_bytes) AS limiting
FROM k;
