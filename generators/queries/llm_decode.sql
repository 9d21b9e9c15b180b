-- What one decode step (one new token per sequence) costs, and what it must read from memory
-- output: values
-- question_ja: デコードステップ 1 回（系列ごとに新しいトークン 1 個）のコストと、メモリから読まなければならない量
-- GPU columns (kernels, launches, kernel time, busy share, gaps) are NULL on a CPU-only trace.
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.hardware;
INCLUDE PERFETTO MODULE guide.llm;
INCLUDE PERFETTO MODULE guide.windows;

WITH
  fwd AS (SELECT id AS window_id, ts, token_dur AS dur, track_id, phase, step, idx FROM guide_llm_forward),
  -- Decode turns: the forward plus generate's own work until the next forward starts.
  turn AS MATERIALIZED (
    SELECT * FROM guide_llm_window_cost!((SELECT * FROM fwd WHERE phase = 'decode'))
  ),
  -- The GPU's busy share of each decode turn, the guide's one definition (guide.windows): the
  -- union of GPU activity clipped to the turn, over the turn's width.
  turn_busy AS MATERIALIZED (
    SELECT * FROM guide_windows_gpu_busy!((SELECT * FROM fwd WHERE phase = 'decode'))
  ),
  fwd_cpu AS MATERIALIZED (
    SELECT * FROM guide_llm_window_cost!(
      (SELECT id AS window_id, ts, dur, track_id FROM guide_llm_forward WHERE phase = 'decode')
    )
  ),
  gen AS (
    SELECT st.step, g.ts, g.dur
    FROM guide_kineto_profiler_step AS st
    JOIN guide_kineto_slice AS g
      ON g.track_id = st.track_id AND g.ts >= st.ts AND g.ts < st.ts + st.dur
    WHERE g.name = 'generate'
  ),
  -- The calls of each decode forward the columns below read: the operators that read weights
  -- and cache, and a compiled forward's guard check, input copies and graph launch.
  fwd_slice AS MATERIALIZED (
    SELECT window_id, slice.id AS slice_id, slice.name, slice.dur
    FROM guide_llm_window_slice!(
      (SELECT id AS window_id, ts, dur, track_id FROM guide_llm_forward WHERE phase = 'decode')
    ) AS slice
    WHERE slice.name IN (
      'aten::linear', 'aten::scaled_dot_product_attention', 'TorchDynamo Cache Lookup',
      'cudaMemcpyAsync', 'cudaGraphLaunch'
    )
  ),
  -- Bytes read by each decode forward: every linear layer's weights, every cached key and value.
  reads AS MATERIALIZED (
    SELECT window_id AS id, slice_id, name
    FROM fwd_slice
    WHERE name IN ('aten::linear', 'aten::scaled_dot_product_attention')
  ),
  -- Waits for the GPU in each decode step: a value read back (`aten::item`) synchronizes.
  sync AS MATERIALIZED (
    SELECT window_id, ts, dur
    FROM guide_llm_window_slice!((SELECT * FROM fwd WHERE phase = 'decode'))
    WHERE name = 'cudaStreamSynchronize'
  ),
  -- From the end of each step's last wait to the end of the step: CPU work that comes after
  -- the GPU has caught up.
  after_sync AS (
    SELECT f.window_id, f.ts + f.dur - MAX(s.ts + s.dur) AS ns
    FROM fwd AS f
    JOIN sync AS s USING (window_id)
    GROUP BY f.window_id
  ),
  -- How long the GPU is idle in each decode step: in all, after the step's last wait, and
  -- before the step's first kernel (the width of each window less the GPU's busy time in it).
  after_sync_busy AS (
    SELECT * FROM guide_windows_gpu_busy!((
      SELECT f.window_id, MAX(s.ts + s.dur) AS ts, f.ts + f.dur - MAX(s.ts + s.dur) AS dur
      FROM fwd AS f JOIN sync AS s USING (window_id)
      GROUP BY f.window_id
    ))
  ),
  weights AS MATERIALIZED (
    SELECT r.id, SUM(l.weight_bytes) AS bytes, SUM(l.dur) AS linear_ns
    FROM reads AS r
    JOIN guide_llm_linear_read AS l ON l.id = r.slice_id
    GROUP BY r.id
  ),
  kv AS MATERIALIZED (
    SELECT r.id, SUM(a.kv_bytes) AS bytes, MAX(a.batch) AS batch, MAX(a.kv_len) AS kv_len
    FROM reads AS r
    JOIN guide_llm_attention_read AS a ON a.id = r.slice_id
    GROUP BY r.id
  ),
  -- The time to the first decode, the trace's counterpart of the time to first token (TTFT,
  -- which the workload measures without the profiler): from the start of generate to the start
  -- of its first decode forward (by then the prefill's token has been chosen).
  to_first_decode AS (
    SELECT MIN(f.ts) - gen.ts AS ns
    FROM gen JOIN guide_llm_forward AS f USING (step)
    WHERE f.phase = 'decode'
    GROUP BY gen.step
  ),
  first_step AS (SELECT MIN(step) AS step FROM guide_llm_forward),
  -- The decode in the middle of the first profiled generate call: the one the page zooms on.
  focus AS (
    SELECT f.* FROM guide_llm_forward AS f, first_step
    WHERE f.step = first_step.step AND f.phase = 'decode'
    ORDER BY f.idx
    LIMIT 1 OFFSET (
      SELECT COUNT(*) / 2 FROM guide_llm_forward AS f, first_step
      WHERE f.step = first_step.step AND f.phase = 'decode'
    )
  ),
  prefill AS (
    SELECT f.* FROM guide_llm_forward AS f, first_step
    WHERE f.step = first_step.step AND f.phase = 'prefill'
  ),
  -- The prefill forward's own cost (its label only, as the phases table's prefill row).
  pre AS MATERIALIZED (
    SELECT * FROM guide_llm_window_cost!(
      (SELECT id AS window_id, ts, dur, track_id FROM guide_llm_forward WHERE phase = 'prefill')
    )
  ),
  -- The kernels of each decode step with their class (guide_llm_kernel_class).
  dk AS MATERIALIZED (
    SELECT window_id, launch_name, kernel_id, kernel_ts, kernel_dur, kernel_name,
      guide_llm_kernel_class(kernel_name) AS class
    FROM guide_llm_window_kernel!((SELECT * FROM fwd WHERE phase = 'decode'))
  ),
  -- From the start of each decode step to the start of its first kernel: the GPU has nothing
  -- of this step to run before then.
  to_first_kernel AS (
    SELECT f.window_id, MIN(k.kernel_ts) - f.ts AS ns
    FROM fwd AS f
    JOIN dk AS k USING (window_id)
    WHERE k.kernel_id IS NOT NULL
    GROUP BY f.window_id
  ),
  before_first_busy AS (
    SELECT * FROM guide_windows_gpu_busy!((
      SELECT window_id, ts, ns AS dur FROM to_first_kernel JOIN fwd USING (window_id)
    ))
  ),
  -- GPU time of the GEMMs of each step as a union of their intervals (a running maximum of the
  -- ends, as guide_llm_window_cost does for all kernels), so overlapping kernels count once.
  gemm_gap AS (
    SELECT
      window_id,
      kernel_dur,
      MAX(0, kernel_ts - MAX(kernel_ts + kernel_dur) OVER (
        PARTITION BY window_id ORDER BY kernel_ts, kernel_id
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
      )) AS gap_ns,
      kernel_ts,
      kernel_id
    FROM dk
    WHERE class = 'GEMM'
  ),
  gemm AS (
    SELECT
      window_id,
      COUNT(*) AS kernels,
      MAX(kernel_ts + kernel_dur) - MIN(kernel_ts) - COALESCE(SUM(gap_ns), 0) AS union_ns
    FROM gemm_gap
    GROUP BY window_id
  ),
  -- Each decode forward's cudaGraphLaunch calls, ranked by duration for their median: a mean
  -- alone hides how unequal the calls are.
  graph_launch AS MATERIALIZED (
    SELECT dur, ROW_NUMBER() OVER (ORDER BY dur) AS k, COUNT(*) OVER () AS n
    FROM fwd_slice
    WHERE name = 'cudaGraphLaunch'
  ),
  m AS (
    SELECT
      (SELECT AVG(bytes) FROM weights) AS weight_bytes,
      (SELECT AVG(bytes) FROM kv) AS kv_bytes,
      -- Sequences per call: from the decodes' attention calls, else (a decode replayed as a
      -- CUDA graph records no attention call) from the prefill's, which has the same batch.
      COALESCE((SELECT MAX(batch) FROM kv), (SELECT MAX(batch) FROM guide_llm_attention_read))
        AS batch,
      (SELECT AVG(cpu_ns) FROM turn) AS token_ns,
      (SELECT AVG(linear_ns) FROM weights) AS linear_ns,
      (SELECT AVG(kernel_ns) FROM turn) AS kernel_ns,
      (SELECT AVG(kernel_union_ns) FROM turn) AS kernel_union_ns,
      (SELECT AVG(union_ns) FROM gemm) AS gemm_ns,
      -- Whether the trace recorded GPU activity (counts are NULL, not 0, on a CPU trace).
      (SELECT MAX(kernels) IS NOT NULL FROM turn) AS gpu,
      guide_hardware_peak_bytes_per_s() AS peak
  )
SELECT
  (SELECT COUNT(DISTINCT step) FROM guide_llm_forward) AS generate_calls,
  (SELECT COUNT(*) FROM turn) / (SELECT COUNT(DISTINCT step) FROM guide_llm_forward)
    AS decodes_per_call,
  -- The trace's GPU (Kineto's deviceProperties), or 'cpu' on a CPU-only trace.
  COALESCE((SELECT name FROM guide_hardware_device), 'cpu') AS device_name,
  m.batch,
  CAST((SELECT AVG(dur) FROM gen) AS INT) AS generate_ns,
  CAST((SELECT AVG(ns) FROM to_first_decode) AS INT) AS to_first_decode_ns,
  -- Tokens made per second of generate: batch x (one from the prefill + one per decode).
  m.batch * ((SELECT COUNT(*) FROM turn) * 1.0 / (SELECT COUNT(DISTINCT step) FROM guide_llm_forward) + 1)
    * 1e9 / (SELECT AVG(dur) FROM gen) AS tokens_per_second,
  CAST(m.token_ns AS INT) AS token_ns,
  CAST((SELECT AVG(cpu_ns) FROM fwd_cpu) AS INT) AS forward_cpu_ns,
  100.0 * (SELECT AVG(cpu_ns) FROM fwd_cpu) / m.token_ns AS forward_share_pct,
  -- CPU operators per decode step (forward + generate's own work) and in the forward alone.
  (SELECT AVG(cpu_ops) FROM turn) AS cpu_ops_per_token,
  (SELECT AVG(cpu_ops) FROM fwd_cpu) AS forward_ops_per_token,
  -- generate's own work between forwards: the step less its forward (time, operators, launches).
  CAST(m.token_ns - (SELECT AVG(cpu_ns) FROM fwd_cpu) AS INT) AS own_ns_per_token,
  (SELECT AVG(cpu_ops) FROM turn) - (SELECT AVG(cpu_ops) FROM fwd_cpu) AS own_ops_per_token,
  (SELECT AVG(kernel_launches) FROM turn) - (SELECT AVG(kernel_launches) FROM fwd_cpu)
    AS own_kernel_launches_per_token,
  -- CPU time inside the launch calls of the decode forward alone (graph launches included).
  CAST((SELECT AVG(launch_ns) FROM fwd_cpu) AS INT) AS forward_launch_ns,
  -- A compiled forward: its guard check (TorchDynamo Cache Lookup; NULL without one), the
  -- cudaMemcpyAsync calls and the CPU time of cudaGraphLaunch, per decode forward.
  CAST(
    (SELECT SUM(dur) FROM fwd_slice WHERE name = 'TorchDynamo Cache Lookup')
      / (SELECT COUNT(*) FROM turn) AS INT
  ) AS guard_ns_per_token,
  IIF(m.gpu, (SELECT COUNT(*) FROM fwd_slice WHERE name = 'cudaMemcpyAsync') * 1.0
    / (SELECT COUNT(*) FROM turn), NULL) AS forward_memcpys_per_token,
  IIF(m.gpu, CAST(
    COALESCE((SELECT SUM(dur) FROM fwd_slice WHERE name = 'cudaGraphLaunch'), 0)
      / (SELECT COUNT(*) FROM turn) AS INT
  ), NULL) AS graph_launch_ns_per_token,
  IIF(m.gpu,
    100.0 * COALESCE((SELECT SUM(dur) FROM fwd_slice WHERE name = 'cudaGraphLaunch'), 0)
      / (SELECT SUM(cpu_ns) FROM fwd_cpu),
    NULL) AS graph_launch_share_pct,
  -- The cudaGraphLaunch calls of the decode forwards one by one: how many, and the shortest,
  -- median and longest (NULL without a graph launch).
  IIF(m.gpu, (SELECT COUNT(*) FROM graph_launch), NULL) AS graph_launch_calls,
  (SELECT MIN(dur) FROM graph_launch) AS graph_launch_min_ns,
  (SELECT CAST(AVG(dur) AS INT) FROM graph_launch WHERE k IN ((n + 1) / 2, (n + 2) / 2))
    AS graph_launch_median_ns,
  (SELECT MAX(dur) FROM graph_launch) AS graph_launch_max_ns,
  -- cudaStreamSynchronize per decode step: calls, and the CPU time spent waiting in them.
  IIF(m.gpu, (SELECT COUNT(*) FROM sync) * 1.0 / (SELECT COUNT(*) FROM turn), NULL)
    AS syncs_per_token,
  IIF(m.gpu, CAST(
    COALESCE((SELECT SUM(dur) FROM sync), 0) / (SELECT COUNT(*) FROM turn) AS INT
  ), NULL) AS sync_ns_per_token,
  -- Mean time from the end of a step's last wait to the end of the step.
  CAST((SELECT AVG(ns) FROM after_sync) AS INT) AS after_sync_ns,
  -- Mean time from the start of a step to the start of its first kernel.
  CAST((SELECT AVG(ns) FROM to_first_kernel) AS INT) AS to_first_kernel_ns,
  -- The GPU's idle time per decode step: in all, after the last wait, before the first kernel.
  IIF(m.gpu, CAST((SELECT AVG(window_ns - busy_ns) FROM turn_busy) AS INT), NULL)
    AS gpu_idle_in_step_ns,
  CAST((SELECT AVG(window_ns - busy_ns) FROM after_sync_busy) AS INT) AS after_sync_idle_ns,
  CAST((SELECT AVG(window_ns - busy_ns) FROM before_first_busy) AS INT)
    AS to_first_kernel_idle_ns,
  -- CPU time inside aten::linear (the operators that read the weights) per decode step.
  CAST(m.linear_ns AS INT) AS linear_ns_per_token,
  100.0 * m.linear_ns / m.token_ns AS linear_share_pct,
  (SELECT AVG(kernel_launches) FROM turn) AS kernel_launches_per_token,
  (SELECT AVG(graph_launches) FROM turn) AS graph_launches_per_token,
  CAST((SELECT AVG(launch_ns) FROM turn) AS INT) AS launch_ns_per_token,
  (SELECT AVG(kernels) FROM turn) AS kernels_per_token,
  -- Of those, kernels the trace processor dropped (counted from their launches, time unknown).
  (SELECT AVG(dropped_kernels) FROM turn) AS dropped_kernels_per_token,
  CAST(m.kernel_ns AS INT) AS kernel_ns_per_token,
  100.0 * (SELECT SUM(busy_ns) FROM turn_busy) / (SELECT SUM(window_ns) FROM turn_busy)
    AS gpu_busy_pct,
  CAST((SELECT AVG(idle_ns) FROM turn) AS INT) AS gpu_idle_ns_per_token,
  (SELECT MAX(max_gap_ns) FROM turn) AS max_gap_ns,
  m.weight_bytes,
  m.kv_bytes,
  -- Most key/value positions one decode's attention reads per sequence (prompt + tokens so far).
  (SELECT MAX(kv_len) FROM kv) AS max_kv_len,
  m.weight_bytes + m.kv_bytes AS read_bytes,
  -- Over the time the step's kernels run (their union: overlapping kernels count once).
  (m.weight_bytes + m.kv_bytes) * 1e9 / NULLIF(m.kernel_union_ns, 0) AS kernel_read_bytes_per_s,
  m.peak AS peak_bytes_per_s,
  CAST((m.weight_bytes + m.kv_bytes) * 1e9 / m.peak AS INT) AS read_at_peak_ns,
  -- The bandwidth floor (those bytes read once at peak) as a share of a decode step's time: a
  -- share of time, not a rate, so no bandwidth is ever divided by CPU time.
  100.0 * (m.weight_bytes + m.kv_bytes) * 1e9 / m.peak / m.token_ns AS floor_share_pct,
  CAST(m.kernel_union_ns AS INT) AS kernel_union_ns_per_token,
  -- How many times the floor (bytes read at peak bandwidth) the step's kernels take.
  m.kernel_union_ns / (m.weight_bytes + m.kv_bytes) / 1e9 * m.peak AS kernel_over_floor,
  -- The GEMMs (which read the weights) against every other kernel of a decode step.
  IIF(m.gpu, (SELECT COUNT(*) FROM dk WHERE class = 'GEMM') * 1.0 / (SELECT COUNT(*) FROM turn), NULL)
    AS gemm_kernels_per_token,
  CAST(m.gemm_ns AS INT) AS gemm_ns_per_token,
  m.weight_bytes * 1e9 / NULLIF(m.gemm_ns, 0) AS gemm_read_bytes_per_s,
  100.0 * m.weight_bytes * 1e9 / NULLIF(m.gemm_ns, 0) / m.peak AS gemm_bandwidth_pct,
  100.0 * m.gemm_ns / NULLIF(m.kernel_union_ns, 0) AS gemm_share_pct,
  IIF(m.gpu, (SELECT COUNT(*) FROM dk WHERE class NOT IN ('GEMM', 'attention')) * 1.0
    / (SELECT COUNT(*) FROM turn), NULL) AS small_kernels_per_token,
  CAST(
    (SELECT SUM(kernel_dur) FROM dk WHERE class NOT IN ('GEMM', 'attention'))
      / (SELECT COUNT(*) FROM turn) AS INT
  ) AS small_kernel_ns_per_token,
  -- Split-K: GEMMs that split their reduction, and the reduce kernels that finish them, kept in
  -- the trace or dropped by the importer (a dropped kernel has a launch and no kernel).
  IIF(m.gpu, (
    SELECT COUNT(*) FROM dk
    WHERE kernel_name GLOB '*splitK*' AND kernel_name NOT GLOB '*splitKreduce*'
  ) * 1.0 / (SELECT COUNT(*) FROM turn), NULL) AS splitk_gemms_per_token,
  IIF(m.gpu, (SELECT COUNT(*) FROM dk WHERE kernel_name GLOB '*splitKreduce*') * 1.0
    / (SELECT COUNT(*) FROM turn), NULL) AS splitk_reduce_kept_per_token,
  -- GPU time of the reduce kernels kept in the trace (a dropped one has no time).
  IIF(m.gpu, CAST(
    COALESCE((SELECT SUM(kernel_dur) FROM dk WHERE kernel_name GLOB '*splitKreduce*'), 0)
      / (SELECT COUNT(*) FROM turn) AS INT
  ), NULL) AS splitk_reduce_ns_per_token,
  (SELECT GROUP_CONCAT(DISTINCT launch_name) FROM dk WHERE kernel_name GLOB '*splitKreduce*')
    AS splitk_reduce_launch,
  (SELECT GROUP_CONCAT(DISTINCT launch_name) FROM dk WHERE kernel_id IS NULL)
    AS dropped_kernel_launch,
  -- The importer's own count of the complete events it dropped, whole trace.
  (SELECT COALESCE(SUM(value), 0) FROM stats WHERE name = 'slice_drop_overlapping_complete_event')
    AS importer_dropped_events,
  IIF(m.gpu, (SELECT COUNT(*) FROM guide_llm_kernel_launch WHERE kernel_id IS NULL), NULL)
    AS trace_dropped_kernels,
  -- The prefill forward: CPU time against the GPU time of its kernels.
  CAST((SELECT AVG(cpu_ns) FROM pre) AS INT) AS prefill_cpu_ns,
  (SELECT AVG(cpu_ops) FROM pre) AS prefill_ops,
  CAST((SELECT AVG(launch_ns) FROM pre) AS INT) AS prefill_launch_ns,
  (SELECT AVG(kernels) FROM pre) AS prefill_kernels,
  CAST((SELECT AVG(kernel_ns) FROM pre) AS INT) AS prefill_kernel_ns,
  CAST((SELECT AVG(kernel_union_ns) FROM pre) AS INT) AS prefill_kernel_union_ns,
  (SELECT AVG(cpu_ns) * 1.0 / NULLIF(AVG(kernel_union_ns), 0) FROM pre) AS prefill_cpu_over_kernel,
  (SELECT ts FROM focus) / 1e9 AS decode_start_s,
  (SELECT ts + token_dur FROM focus) / 1e9 AS decode_end_s,
  (SELECT ts FROM prefill) / 1e9 AS prefill_start_s,
  (SELECT ts + token_dur FROM prefill) / 1e9 AS prefill_end_s
FROM m;
