-- Memory over the first profiled training steps: activations, gradients, optimizer state, peak
-- output: values
-- question_ja: プロファイルした最初の学習ステップ群のメモリ: 活性化、勾配、オプティマイザの状態、ピーク
INCLUDE PERFETTO MODULE guide.train;

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
  (SELECT ts / 1e9 FROM first_step) AS first_step_start_s,
  (SELECT (ts + dur) / 1e9 FROM first_step) AS first_step_end_s;
