-- What one decode step (one new token per sequence) costs, and what it must read from memory
-- output: values
-- GPU columns (kernels, launches, kernel time, busy share, gaps) are NULL on a CPU-only trace.
INCLUDE PERFETTO MODULE guide.llm;

WITH
  fwd AS (SELECT id AS window_id, ts, token_dur AS dur, track_id, phase, step, idx FROM guide_llm_forward),
  -- Decode turns: the forward plus generate's own work until the next forward starts.
  turn AS MATERIALIZED (
    SELECT * FROM guide_llm_window_cost!((SELECT * FROM fwd WHERE phase = 'decode'))
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
  -- Bytes read by each decode forward: every linear layer's weights, every cached key and value.
  reads AS MATERIALIZED (
    SELECT window_id AS id, slice.id AS slice_id, slice.name
    FROM guide_llm_window_slice!(
      (SELECT id AS window_id, ts, dur, track_id FROM guide_llm_forward WHERE phase = 'decode')
    ) AS slice
    WHERE slice.name IN ('aten::linear', 'aten::scaled_dot_product_attention')
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
  -- Time to first token: from the start of generate to the start of the first decode (by then
  -- the prefill's token has been chosen).
  ttft AS (
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
  m AS (
    SELECT
      (SELECT AVG(bytes) FROM weights) AS weight_bytes,
      (SELECT AVG(bytes) FROM kv) AS kv_bytes,
      (SELECT MAX(batch) FROM kv) AS batch,
      (SELECT AVG(cpu_ns) FROM turn) AS token_ns,
      (SELECT AVG(linear_ns) FROM weights) AS linear_ns,
      (SELECT AVG(kernel_ns) FROM turn) AS kernel_ns,
      (SELECT peak_bytes_per_s FROM guide_llm_device) AS peak
  )
SELECT
  (SELECT COUNT(DISTINCT step) FROM guide_llm_forward) AS generate_calls,
  (SELECT COUNT(*) FROM turn) / (SELECT COUNT(DISTINCT step) FROM guide_llm_forward)
    AS decodes_per_call,
  (SELECT name FROM guide_llm_device) AS device_name,
  m.batch,
  CAST((SELECT AVG(dur) FROM gen) AS INT) AS generate_ns,
  CAST((SELECT AVG(ns) FROM ttft) AS INT) AS ttft_ns,
  -- Tokens made per second of generate: batch x (one from the prefill + one per decode).
  m.batch * ((SELECT COUNT(*) FROM turn) * 1.0 / (SELECT COUNT(DISTINCT step) FROM guide_llm_forward) + 1)
    * 1e9 / (SELECT AVG(dur) FROM gen) AS tokens_per_second,
  CAST(m.token_ns AS INT) AS token_ns,
  CAST((SELECT AVG(cpu_ns) FROM fwd_cpu) AS INT) AS forward_cpu_ns,
  100.0 * (SELECT AVG(cpu_ns) FROM fwd_cpu) / m.token_ns AS forward_share_pct,
  -- CPU operators per decode step (forward + generate's own work) and in the forward alone.
  (SELECT AVG(cpu_ops) FROM turn) AS cpu_ops_per_token,
  (SELECT AVG(cpu_ops) FROM fwd_cpu) AS forward_ops_per_token,
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
  100.0 * m.kernel_ns / m.token_ns AS gpu_busy_pct,
  CAST((SELECT AVG(idle_ns) FROM turn) AS INT) AS gpu_idle_ns_per_token,
  (SELECT MAX(max_gap_ns) FROM turn) AS max_gap_ns,
  m.weight_bytes,
  m.kv_bytes,
  -- Most key/value positions one decode's attention reads per sequence (prompt + tokens so far).
  (SELECT MAX(kv_len) FROM kv) AS max_kv_len,
  m.weight_bytes + m.kv_bytes AS read_bytes,
  -- Bytes read per decode step / time per decode step: the memory traffic the step sustained.
  (m.weight_bytes + m.kv_bytes) * 1e9 / m.token_ns AS read_bytes_per_s,
  (m.weight_bytes + m.kv_bytes) * 1e9 / NULLIF(m.kernel_ns, 0) AS kernel_read_bytes_per_s,
  m.peak AS peak_bytes_per_s,
  100.0 * (m.weight_bytes + m.kv_bytes) * 1e9 / m.token_ns / m.peak AS bandwidth_pct,
  CAST((m.weight_bytes + m.kv_bytes) * 1e9 / m.peak AS INT) AS read_at_peak_ns,
  (SELECT ts FROM focus) / 1e9 AS decode_start_s,
  (SELECT ts + token_dur FROM focus) / 1e9 AS decode_end_s,
  (SELECT ts FROM prefill) / 1e9 AS prefill_start_s,
  (SELECT ts + token_dur FROM prefill) / 1e9 AS prefill_end_s
FROM m;
