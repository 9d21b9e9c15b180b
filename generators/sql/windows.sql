-- Windows of time on the CPU timeline (profiler steps, decode turns, a synchronisation call) and
-- how busy the GPU was inside them.
--
-- The guide's one definition of the GPU's busy share: the union of the GPU's activity intervals
-- (kernels, memory copies, memory sets) clipped to the window, divided by the window's width.
-- A union, not a sum: kernels on one stream can overlap (cuBLAS's split-K reduce kernel starts
-- before its GEMM ends), and work on several streams can run at once. Clipped, because the GPU
-- runs behind the CPU: a kernel launched in one step may run in the next, or after the last.
-- Activities the trace processor's importer dropped (see generators/trace_json.py) are not in
-- the trace processor's tables, so they cannot count; where they overlap a kept kernel (the
-- split-K case) the union loses only the part that sticks out.
INCLUDE PERFETTO MODULE guide.kineto;

-- Time covered by at least one interval of each group: the union of the intervals, not the sum
-- of their durations. The guide's one union of intervals: the busy share (guide_windows_gpu_busy,
-- intervals clipped to a window) and the GPU time of work launched from a CPU region (the
-- attention and LLM modules, intervals not clipped: everything that region launched counts,
-- whenever it ran) both use it.
CREATE PERFETTO MACRO guide_windows_union(
  -- Intervals: needs the columns group_id, ts and dur (ns); an interval with NULL ts or dur is
  -- left out.
  intervals TableOrSubquery
)
-- One row per group that has intervals, with the columns group_id, intervals (how many) and
-- busy_ns (the union's length, ns).
RETURNS TableOrSubquery AS
(
  WITH
    _wu_iv AS (
      SELECT group_id, ts AS cs, ts + dur AS ce
      FROM $intervals
      WHERE ts IS NOT NULL AND dur IS NOT NULL
    ),
    -- In start order, the latest end of every earlier interval of the group: the part of an
    -- interval before that end is already counted.
    _wu_run AS (
      SELECT
        group_id,
        cs,
        ce,
        MAX(ce) OVER (
          PARTITION BY group_id ORDER BY cs, ce
          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS covered_until
      FROM _wu_iv
    )
  SELECT
    group_id,
    COUNT(*) AS intervals,
    SUM(MAX(ce - MAX(cs, COALESCE(covered_until, cs)), 0)) AS busy_ns
  FROM _wu_run
  GROUP BY group_id
);

-- GPU busy time inside each window: the union (guide_windows_union) of the GPU activities that
-- overlap the window, each clipped to it.
CREATE PERFETTO MACRO guide_windows_gpu_busy(
  -- Windows: needs the columns window_id, ts and dur (ns).
  windows TableOrSubquery
)
-- One row per window with the columns:
--   window_id: the input window;
--   window_ns: the window's width (ns);
--   activities: GPU activities that overlap the window;
--   busy_ns: the union of those activities' intervals, clipped to the window (ns): at most
--     window_ns. NULL when the trace recorded no GPU activity at all (a CPU-only capture), so a
--     CPU trace shows "no data" rather than a measured zero.
RETURNS TableOrSubquery AS
(
  WITH
    _gw_win AS MATERIALIZED (SELECT window_id, ts, dur FROM $windows),
    _gw_clip AS (
      SELECT
        w.window_id AS group_id,
        MAX(g.ts, w.ts) AS ts,
        MIN(g.ts + g.dur, w.ts + w.dur) - MAX(g.ts, w.ts) AS dur
      FROM _gw_win AS w
      JOIN guide_kineto_gpu_activity AS g ON g.ts < w.ts + w.dur AND g.ts + g.dur > w.ts
    ),
    _gw_busy AS (SELECT * FROM guide_windows_union!(_gw_clip))
  SELECT
    w.window_id,
    w.dur AS window_ns,
    COALESCE(b.intervals, 0) AS activities,
    IIF(gpu.traced, COALESCE(b.busy_ns, 0), NULL) AS busy_ns
  FROM _gw_win AS w
  CROSS JOIN (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS traced) AS gpu
  LEFT JOIN _gw_busy AS b ON b.group_id = w.window_id
);

-- GPU busy time inside each of many windows (one per synchronisation call, say): the same
-- number as guide_windows_gpu_busy's busy_ns, found by one sweep instead of clipping the
-- activities to each window. The GPU activities are merged once into disjoint busy stretches,
-- each with the busy time up to its end; the busy time before any point is then the latest
-- stretch started by then, less what of it lies after the point; a window's is the difference
-- at its two ends. Costs one sort of the activities however many windows there are, where
-- guide_windows_gpu_busy reads every activity that starts before each window ends.
CREATE PERFETTO MACRO guide_windows_gpu_busy_swept(
  -- Windows: needs the columns window_id, ts and dur (ns) (a window given twice: a row each).
  windows TableOrSubquery
)
-- One row per window: window_id and busy_ns (the union of GPU activity inside the window, ns;
-- 0 for a window of no width, NULL on a trace without GPU activity).
RETURNS TableOrSubquery AS
(
  WITH
    _gs_win AS MATERIALIZED (
      SELECT ROW_NUMBER() OVER () AS point_id, window_id, ts, dur FROM $windows
    ),
    -- Activities of no length add nothing to a union; read only when there are windows.
    _gs_act AS MATERIALIZED (
      SELECT ts, ts + dur AS end_ts FROM guide_kineto_gpu_activity
      WHERE dur > 0 AND EXISTS (SELECT 1 FROM _gs_win)
    ),
    -- The activities merged into disjoint stretches: one that starts after every earlier one
    -- (by start) has ended opens a new stretch.
    _gs_stretch AS (
      SELECT MIN(ts) AS ts, MAX(end_ts) AS end_ts
      FROM (
        SELECT ts, end_ts,
          SUM(prev_end IS NULL OR ts > prev_end) OVER (
            ORDER BY ts, end_ts ROWS UNBOUNDED PRECEDING
          ) AS stretch
        FROM (
          SELECT ts, end_ts,
            MAX(end_ts) OVER (
              ORDER BY ts, end_ts ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
            ) AS prev_end
          FROM _gs_act
        )
      )
      GROUP BY stretch
    ),
    -- The stretches with the busy time up to each one's end, and both ends of every window with
    -- a width; stretches first at the same time.
    _gs_point AS (
      SELECT ts AS at, end_ts, SUM(end_ts - ts) OVER (ORDER BY ts ROWS UNBOUNDED PRECEDING)
        AS busy_ns, NULL AS point_id, 0 AS sign
      FROM _gs_stretch
      UNION ALL
      SELECT ts, NULL, NULL, point_id, -1 FROM _gs_win WHERE dur > 0
      UNION ALL
      SELECT ts + dur, NULL, NULL, point_id, 1 FROM _gs_win WHERE dur > 0
    ),
    _gs_at AS (
      SELECT point_id, sign, at, MAX(end_ts) OVER sweep AS last_end,
        MAX(busy_ns) OVER sweep AS busy_ns
      FROM _gs_point
      WINDOW sweep AS (ORDER BY at, point_id IS NOT NULL ROWS UNBOUNDED PRECEDING)
    ),
    _gs_busy AS (
      SELECT point_id, SUM(sign * COALESCE(busy_ns - MAX(last_end - at, 0), 0)) AS busy_ns
      FROM _gs_at
      WHERE point_id IS NOT NULL
      GROUP BY point_id
    )
  SELECT
    w.window_id,
    IIF(gpu.traced, COALESCE(b.busy_ns, 0), NULL) AS busy_ns
  FROM _gs_win AS w
  CROSS JOIN (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS traced) AS gpu
  LEFT JOIN _gs_busy AS b USING (point_id)
);

-- The profiled steps (`ProfilerStep#N`) as windows, with the GPU busy time inside each.
CREATE PERFETTO VIEW guide_windows_step_busy(
  -- Step number N.
  step LONG,
  -- Start of the step (ns).
  ts TIMESTAMP,
  -- Width of the step (ns).
  dur DURATION,
  -- GPU activities that overlap the step.
  activities LONG,
  -- Union of GPU activity inside the step (ns); NULL on a CPU-only trace.
  busy_ns DURATION
) AS
SELECT st.step, st.ts, st.dur, b.activities, b.busy_ns
FROM guide_kineto_profiler_step AS st
JOIN guide_windows_gpu_busy!(
  (SELECT step AS window_id, ts, dur FROM guide_kineto_profiler_step)
) AS b ON b.window_id = st.step;

-- All profiled steps as one window, from the first step's start to the last step's end (the
-- short stretches between steps included: the GPU keeps running through them), with the GPU busy
-- time inside it. One row; the busy share of the steps is 100 * busy_ns / window_ns.
CREATE PERFETTO VIEW guide_windows_steps_busy(
  -- Start of the first step (ns).
  ts TIMESTAMP,
  -- From the first step's start to the last step's end (ns).
  window_ns DURATION,
  -- GPU activities that overlap the window.
  activities LONG,
  -- Union of GPU activity inside the window (ns); NULL on a CPU-only trace.
  busy_ns DURATION
) AS
WITH span AS (
  SELECT 0 AS window_id, MIN(ts) AS ts, MAX(ts + dur) - MIN(ts) AS dur
  FROM guide_kineto_profiler_step
)
SELECT span.ts, b.window_ns, b.activities, b.busy_ns
FROM span
JOIN guide_windows_gpu_busy!(span) AS b USING (window_id);

-- `ProfilerStep#N` annotations that the JSON importer dropped (each partly overlapped another
-- event on its thread, as with_stack's python_function events do), recovered from the trace file
-- itself. A plain table, created here empty when nobody filled it first: the doctor
-- (generators/doctor/trust.py) reads the file and fills it before this module is included, so the
-- step loop below is the trace's own even where the importer lost its markers.
CREATE TABLE IF NOT EXISTS guide_trace_recovered_step(
  step INT, ts INT, dur INT, location TEXT, location_ja TEXT
);

-- The windows of the step loop: each `ProfilerStep#N` on a CPU thread (with those recovered from
-- the file, guide_trace_recovered_step); for a trace without steps (a profiler used without a
-- schedule), one window over the whole trace. Kineto's GPU-side copies of the step annotations
-- (`gpu_user_annotation`) are not windows: they mark GPU time, not the loop.
CREATE PERFETTO TABLE guide_windows_loop(
  -- Window id: the step's slice id, minus one minus the step number for a recovered step (it has
  -- no slice), or 0 for the one window of a trace without steps.
  window_id JOINID(slice.id),
  -- Step number N, or NULL for the one window of a trace without steps.
  step LONG,
  -- Start of the window (ns).
  ts TIMESTAMP,
  -- Width of the window (ns).
  dur DURATION,
  -- Where the window is: the CPU thread that ran the step, or 'whole trace'.
  location STRING,
  -- The same in Japanese (a thread's name as the trace spells it), for the doctor's reports.
  location_ja STRING
) AS
WITH steps AS (
  SELECT st.id, st.step, st.ts, st.dur, COALESCE(s.thread_name, 'thread ' || s.tid) AS location,
    COALESCE(s.thread_name, 'スレッド ' || s.tid) AS location_ja
  FROM guide_kineto_profiler_step AS st
  JOIN guide_kineto_slice AS s USING (id)
  WHERE s.category IS NOT 'gpu_user_annotation'
  UNION ALL
  SELECT -1 - r.step, r.step, r.ts, r.dur, r.location, r.location_ja
  FROM guide_trace_recovered_step AS r
)
SELECT id AS window_id, step, ts, dur, location, location_ja FROM steps
UNION ALL
SELECT 0, NULL, start_ts, end_ts - start_ts, 'whole trace', 'トレース全体'
FROM trace_bounds
WHERE NOT EXISTS (SELECT 1 FROM steps);

-- The GPU's busy time inside each window of the step loop (guide_windows_gpu_busy over
-- guide_windows_loop), computed once: several checks divide by it.
CREATE PERFETTO TABLE guide_windows_loop_busy(
  -- Loop window (guide_windows_loop.window_id).
  window_id JOINID(slice.id),
  -- The window's width (ns).
  window_ns DURATION,
  -- GPU activities that overlap the window.
  activities LONG,
  -- Union of GPU activity inside the window (ns); NULL on a CPU-only trace.
  busy_ns DURATION
) AS
SELECT window_id, window_ns, activities, busy_ns
FROM guide_windows_gpu_busy!((SELECT window_id, ts, dur FROM guide_windows_loop));

-- Stretches inside the step loop when a GPU ran nothing between two of its activities, each with
-- what the GPU was waiting for. Per device: a stream waiting while another stream runs is not a
-- gap. A gap is clipped to the loop window it falls in (guide_windows_loop).
CREATE PERFETTO TABLE guide_windows_gpu_gap(
  -- Loop window the gap lies in (guide_windows_loop.window_id).
  window_id JOINID(slice.id),
  -- Device index.
  device LONG,
  -- Start of the gap, clipped to its window (ns).
  ts TIMESTAMP,
  -- Length of the gap inside its window (ns).
  dur DURATION,
  -- Slice id of the GPU activity that ended the gap.
  next_gpu_id JOINID(slice.id),
  -- Start of the CPU call that launched that activity (ns); NULL when the trace has no launch
  -- flows for it.
  next_launch_ts TIMESTAMP,
  -- Why the GPU waited: 'profiler' when CUPTI's `Activity Buffer Request` overlaps the gap (the
  -- profiler stalled the CPU), 'sync' when a synchronisation returned inside the gap (the CPU
  -- had been waiting for this GPU to drain, so nothing new was queued), 'host' when the next
  -- activity's launch call was still running when the GPU ran dry (the CPU was too slow to keep
  -- it fed, and the work started soon after the call returned), or 'other' (the launch had
  -- returned before the gap began, or long before the work started, and the work still started
  -- late: a dependency on another stream, an event, or a launch without a flow to tell).
  cause STRING
) AS
WITH
  ordered AS MATERIALIZED (
    SELECT
      id, device, ts,
      MAX(ts + dur) OVER (
        PARTITION BY device ORDER BY ts, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
      ) AS covered_until
    FROM guide_kineto_gpu_activity
  ),
  gap AS MATERIALIZED (
    SELECT device, covered_until AS gap_ts, ts AS gap_end, id AS next_gpu_id
    FROM ordered
    WHERE covered_until IS NOT NULL AND ts > covered_until
  ),
  sync_return AS MATERIALIZED (SELECT ts + dur AS end_ts FROM guide_kineto_sync_call),
  -- Whether a synchronisation returned inside each gap (at either end included): the earliest
  -- return at or after the gap's start is at most its end. Found by one sweep from the end of
  -- the trace (returns before gaps at the same time), not by reading every return per gap.
  synced AS MATERIALIZED (
    SELECT next_gpu_id, first_return <= gap_end AS synced
    FROM (
      SELECT next_gpu_id, gap_end,
        MIN(end_ts) OVER (
          ORDER BY at DESC, next_gpu_id IS NOT NULL ROWS UNBOUNDED PRECEDING
        ) AS first_return
      FROM (
        SELECT gap_ts AS at, gap_end, next_gpu_id, NULL AS end_ts FROM gap
        UNION ALL
        SELECT end_ts, NULL, NULL, end_ts FROM sync_return
      )
    )
    WHERE next_gpu_id IS NOT NULL
  ),
  clipped AS (
    SELECT
      w.window_id, g.device, MAX(g.gap_ts, w.ts) AS ts,
      MIN(g.gap_end, w.ts + w.dur) - MAX(g.gap_ts, w.ts) AS dur,
      g.gap_ts, g.gap_end, g.next_gpu_id, y.synced
    FROM gap AS g
    JOIN synced AS y USING (next_gpu_id)
    JOIN guide_windows_loop AS w ON g.gap_ts < w.ts + w.dur AND g.gap_end > w.ts
  ),
  stall AS MATERIALIZED (
    SELECT ts, ts + dur AS end_ts FROM guide_kineto_slice WHERE name = 'Activity Buffer Request'
  )
SELECT
  c.window_id,
  c.device,
  c.ts,
  c.dur,
  c.next_gpu_id,
  l.ts AS next_launch_ts,
  CASE
    WHEN EXISTS (
      SELECT 1 FROM stall AS p WHERE p.ts < c.gap_end AND p.end_ts > c.gap_ts
    ) THEN 'profiler'
    WHEN c.synced THEN 'sync'
    -- The launch returned after the GPU ran dry, and the work started soon after it returned:
    -- within 100 µs (a launch's latency, with room), or no later than the launch's own share
    -- of the gap. Work held back longer than both after its launch returned waited on
    -- something else (an event, another stream): its cause is 'other'.
    WHEN l.ts + l.dur > c.gap_ts AND (
      c.gap_end - (l.ts + l.dur) < 100000
      OR c.gap_end - (l.ts + l.dur) <= (l.ts + l.dur) - c.gap_ts
    ) THEN 'host'
    ELSE 'other'
  END AS cause
FROM clipped AS c
-- The launch of the activity that ended the gap (the links are indexed by gpu_id).
LEFT JOIN guide_kineto_launch_link AS ll ON ll.gpu_id = c.next_gpu_id
LEFT JOIN slice AS l ON l.id = ll.launch_id
WHERE c.dur > 0;

-- The stub steps of the loop: the last `ProfilerStep#N` of several when it ran no operator (the
-- stub the profiler's stop leaves after the last `prof.step()`), or one under 5 % of the (upper)
-- median step. Not steps of the loop: the step count, the median and per-step averages leave them
-- out. The no-operator rule applies only where the trace records operators at all; a trace's only
-- step is never a stub (a step spent waiting, in a collective or a data loader, runs no operator).
CREATE PERFETTO TABLE guide_windows_stub_step(
  -- Loop window of the stub (guide_windows_loop.window_id).
  window_id JOINID(slice.id),
  -- Step number N.
  step LONG,
  -- Width of the stub (ns).
  dur DURATION
) AS
WITH
  steps AS (SELECT window_id, step, ts, dur FROM guide_windows_loop WHERE step IS NOT NULL),
  ranked AS (SELECT dur, ROW_NUMBER() OVER (ORDER BY dur) AS k, COUNT(*) OVER () AS m FROM steps),
  median AS (SELECT dur AS median_ns FROM ranked WHERE k = m / 2 + 1),
  has_ops AS (SELECT EXISTS (SELECT 1 FROM slice WHERE category = 'cpu_op') AS yes)
SELECT s.window_id, s.step, s.dur
FROM steps AS s, median, has_ops
WHERE s.dur < 0.05 * median.median_ns
  OR (has_ops.yes
    AND s.step = (SELECT MAX(step) FROM steps) AND (SELECT COUNT(*) FROM steps) > 1
    AND NOT EXISTS (
      SELECT 1 FROM slice AS o
      WHERE o.category = 'cpu_op' AND o.ts >= s.ts AND o.ts < s.ts + s.dur
    ));

-- The windows of the step loop less its stub steps (guide_windows_stub_step): the loop the
-- doctor's checks count, average and take medians over.
CREATE PERFETTO VIEW guide_windows_real_loop(
  -- Window id (guide_windows_loop.window_id).
  window_id JOINID(slice.id),
  -- Step number N, or NULL for the one window of a trace without steps.
  step LONG,
  -- Start of the window (ns).
  ts TIMESTAMP,
  -- Width of the window (ns).
  dur DURATION,
  -- Where the window is.
  location STRING,
  -- The same in Japanese.
  location_ja STRING
) AS
SELECT window_id, step, ts, dur, location, location_ja FROM guide_windows_loop
WHERE window_id NOT IN (SELECT window_id FROM guide_windows_stub_step);

-- The first real step of the loop when it ran cold: at least three times as long as the median
-- of the real steps after it (one-time work: CUDA context and library start-up, lazy module
-- loading, cuDNN's algorithm search, the caching allocator's first requests). The one
-- definition of a cold step: every check reads it from here. One row or none; none with fewer
-- than two real steps, where nothing tells a cold step from a slow one. Per-step checks leave it
-- out.
CREATE PERFETTO TABLE guide_windows_cold_step(
  -- Loop window of the cold step (guide_windows_loop.window_id).
  window_id JOINID(slice.id),
  -- Step number N.
  step LONG,
  -- Width of the cold step (ns).
  dur DURATION,
  -- Median width of the steps after it (ns).
  warm_median_ns DURATION
) AS
WITH
  ordered AS (
    SELECT window_id, step, dur, ROW_NUMBER() OVER (ORDER BY ts) AS n
    FROM guide_windows_real_loop
    WHERE step IS NOT NULL
  ),
  rest AS (
    SELECT dur, ROW_NUMBER() OVER (ORDER BY dur) AS k, COUNT(*) OVER () AS m
    FROM ordered
    WHERE n > 1
  ),
  median AS (SELECT dur AS warm_median_ns FROM rest WHERE k = (m + 1) / 2)
SELECT o.window_id, o.step, o.dur, median.warm_median_ns
FROM ordered AS o, median
WHERE o.n = 1 AND o.dur >= 3 * median.warm_median_ns;
