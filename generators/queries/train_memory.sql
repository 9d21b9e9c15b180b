-- Memory over the first profiled training steps: activations, gradients, optimizer state, peak
-- output: values
-- question_ja: プロファイルした最初の学習ステップ群のメモリ: 活性化、勾配、オプティマイザの状態、ピーク
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.train;
INCLUDE PERFETTO MODULE guide.traffic;

WITH
  dev AS (
    SELECT IIF(EXISTS (SELECT 1 FROM guide_train_memory WHERE device = 'CUDA'), 'CUDA', 'CPU')
      AS device
  ),
  mem AS (
    SELECT m.* FROM guide_train_memory AS m, dev WHERE m.device = dev.device
  ),
  steps AS (SELECT step, ts, dur FROM guide_train_step ORDER BY step LIMIT 2),
  first_step AS (SELECT * FROM steps ORDER BY step LIMIT 1),
  second_step AS (SELECT * FROM steps ORDER BY step DESC LIMIT 1),
  -- Allocated bytes at a moment: the running total after the last event before it (the first
  -- event's total less its own bytes, before any event).
  first_event AS (
    -- guide_train_memory starts each device's series at an event whose total holds its own
    -- bytes, so this is never below 0; MAX keeps it so on any trace.
    SELECT MAX(allocated_bytes - bytes, 0) AS before FROM mem ORDER BY ts LIMIT 1
  ),
  -- Phase boundaries of the first two steps.
  bounds AS (
    SELECT p.step, p.phase, p.ts AS start_ts, p.ts + p.dur AS end_ts
    FROM guide_train_phase AS p
    WHERE p.step IN (SELECT step FROM steps)
  ),
  at_bounds AS (
    SELECT
      b.step,
      b.phase,
      COALESCE((SELECT m.allocated_bytes FROM mem AS m WHERE m.ts < b.start_ts
        ORDER BY m.ts DESC LIMIT 1), (SELECT before FROM first_event)) AS at_start,
      COALESCE((SELECT m.allocated_bytes FROM mem AS m WHERE m.ts < b.end_ts
        ORDER BY m.ts DESC LIMIT 1), (SELECT before FROM first_event)) AS at_end,
      (SELECT MAX(m.allocated_bytes) FROM mem AS m WHERE m.ts >= b.start_ts AND m.ts < b.end_ts)
        AS peak
    FROM bounds AS b
  ),
  f AS (SELECT * FROM at_bounds WHERE step = (SELECT step FROM first_step)),
  -- The first forward's allocations still held when it ends: what the forward keeps for the
  -- backward, block by block (an allocation and its free share an address).
  fwd AS (SELECT start_ts, end_ts FROM bounds WHERE phase = 'forward' ORDER BY step LIMIT 1),
  held AS MATERIALIZED (
    SELECT m.bytes
    FROM mem AS m, fwd
    WHERE m.ts >= fwd.start_ts AND m.ts < fwd.end_ts AND m.bytes > 0
      AND NOT EXISTS (SELECT 1 FROM mem AS x
        WHERE x.addr = m.addr AND x.bytes < 0 AND x.ts > m.ts AND x.ts < fwd.end_ts)
  ),
  -- Elements of the logits, tokens x vocabulary: the embedding's token ids (its second input)
  -- and its table's rows (its first input's first dimension), in the first forward.
  logits AS (
    SELECT guide_traffic_input_numel(s.arg_set_id, 1)
      * extract_arg(s.arg_set_id, 'args.Input Dims[0][0]') AS numel
    FROM guide_kineto_slice AS s, fwd
    WHERE s.name = 'aten::embedding' AND s.ts >= fwd.start_ts AND s.ts < fwd.end_ts
    LIMIT 1
  ),
  -- The moment of each step's allocated peak (the first event at it).
  peak_event AS (
    SELECT st.step, m.reserved_bytes, m.allocated_bytes,
      ROW_NUMBER() OVER (PARTITION BY st.step ORDER BY m.allocated_bytes DESC, m.ts) AS k
    FROM mem AS m, steps AS st
    WHERE m.ts >= st.ts AND m.ts < st.ts + st.dur
  ),
  s AS (SELECT * FROM at_bounds WHERE step = (SELECT step FROM second_step))
SELECT
  (SELECT device FROM dev) AS device,
  (SELECT COUNT(*) FROM mem WHERE step IS NOT NULL) AS memory_events,
  -- The device's events that do not continue its running total (guide_train_memory leaves them
  -- out), over the whole trace.
  (SELECT COUNT(*) FROM slice AS s, dev WHERE s.name = '[memory]'
    AND CASE extract_arg(s.arg_set_id, 'args.Device Type') WHEN 0 THEN 'CPU' WHEN 1 THEN 'CUDA' END
      = dev.device) - (SELECT COUNT(*) FROM mem) AS other_counter_events,
  (SELECT at_start FROM f WHERE phase = 'data') AS first_start_bytes,
  (SELECT MAX(m.allocated_bytes) FROM mem AS m, first_step AS st
    WHERE m.ts >= st.ts AND m.ts < st.ts + st.dur) AS first_peak_bytes,
  (SELECT phase FROM mem AS m, first_step AS st
    WHERE m.ts >= st.ts AND m.ts < st.ts + st.dur ORDER BY m.allocated_bytes DESC, m.ts LIMIT 1)
    AS first_peak_phase,
  (SELECT at_end - at_start FROM f WHERE phase = 'forward') AS forward_kept_bytes,
  (SELECT at_end FROM f WHERE phase = 'backward') AS after_backward_bytes,
  (SELECT at_end - at_start FROM f WHERE phase = 'optimizer') AS first_optimizer_kept_bytes,
  (SELECT MAX(at_end - at_start, 0) FROM s WHERE phase = 'optimizer')
    AS second_optimizer_kept_bytes,
  (SELECT at_end FROM f WHERE phase = 'zero_grad') AS first_end_bytes,
  (SELECT at_start FROM s WHERE phase = 'data') AS second_start_bytes,
  (SELECT MAX(m.allocated_bytes) FROM mem AS m, second_step AS st
    WHERE m.ts >= st.ts AND m.ts < st.ts + st.dur) AS second_peak_bytes,
  (SELECT phase FROM mem AS m, second_step AS st
    WHERE m.ts >= st.ts AND m.ts < st.ts + st.dur ORDER BY m.allocated_bytes DESC, m.ts LIMIT 1)
    AS second_peak_phase,
  -- What the allocator holds from the driver at each step's allocated peak, and at most over
  -- the two steps: reserved, against allocated. CUDA only: the CPU allocator caches nothing and
  -- records 0.
  (SELECT reserved_bytes FROM peak_event AS p, first_step AS st, dev
    WHERE p.step = st.step AND k = 1 AND dev.device = 'CUDA') AS first_peak_reserved_bytes,
  (SELECT reserved_bytes FROM peak_event AS p, second_step AS st, dev
    WHERE p.step = st.step AND k = 1 AND dev.device = 'CUDA') AS second_peak_reserved_bytes,
  (SELECT MAX(reserved_bytes) FROM peak_event, dev WHERE dev.device = 'CUDA')
    AS max_reserved_bytes,
  -- The blocks the first forward keeps: how many, the largest, and those the logits' size or a
  -- whole multiple of it (tokens x vocabulary elements: the logits, their fp32 copy, the loss's
  -- log-softmax), which no other tensor of this model is.
  (SELECT COUNT(*) FROM held) AS forward_held_blocks,
  (SELECT MAX(bytes) FROM held) AS forward_held_largest_bytes,
  (SELECT COUNT(*) FROM held, logits WHERE held.bytes % logits.numel = 0) AS logits_held_blocks,
  (SELECT SUM(held.bytes) FROM held, logits WHERE held.bytes % logits.numel = 0)
    AS logits_held_bytes,
  (SELECT ts / 1e9 FROM first_step) AS first_step_start_s,
  (SELECT (ts + dur) / 1e9 FROM first_step) AS first_step_end_s;
