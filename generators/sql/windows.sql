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

-- GPU busy time inside each window. `windows` needs the columns window_id, ts and dur (ns).
-- Columns:
--   window_id: the input window;
--   window_ns: the window's width (ns);
--   activities: GPU activities that overlap the window;
--   busy_ns: the union of those activities' intervals, clipped to the window (ns): at most
--     window_ns. NULL when the trace recorded no GPU activity at all (a CPU-only capture), so a
--     CPU trace shows "no data" rather than a measured zero.
CREATE PERFETTO MACRO guide_windows_gpu_busy(windows TableOrSubquery)
RETURNS TableOrSubquery AS
(
  WITH
    _gw_win AS MATERIALIZED (SELECT window_id, ts, dur FROM $windows),
    _gw_clip AS (
      SELECT
        w.window_id,
        g.id,
        MAX(g.ts, w.ts) AS cs,
        MIN(g.ts + g.dur, w.ts + w.dur) AS ce
      FROM _gw_win AS w
      JOIN guide_kineto_gpu_activity AS g ON g.ts < w.ts + w.dur AND g.ts + g.dur > w.ts
    ),
    -- In start order, the latest end of every earlier interval of the window: the part of an
    -- interval before that end is already counted.
    _gw_run AS (
      SELECT
        window_id,
        cs,
        ce,
        MAX(ce) OVER (
          PARTITION BY window_id ORDER BY cs, ce, id
          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS covered_until
      FROM _gw_clip
    ),
    _gw_busy AS (
      SELECT
        window_id,
        COUNT(*) AS activities,
        SUM(MAX(ce - MAX(cs, COALESCE(covered_until, cs)), 0)) AS busy_ns
      FROM _gw_run
      GROUP BY window_id
    )
  SELECT
    w.window_id,
    w.dur AS window_ns,
    COALESCE(b.activities, 0) AS activities,
    IIF(gpu.traced, COALESCE(b.busy_ns, 0), NULL) AS busy_ns
  FROM _gw_win AS w
  CROSS JOIN (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS traced) AS gpu
  LEFT JOIN _gw_busy AS b USING (window_id)
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
  busy_ns LONG
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
  window_ns LONG,
  -- GPU activities that overlap the window.
  activities LONG,
  -- Union of GPU activity inside the window (ns); NULL on a CPU-only trace.
  busy_ns LONG
) AS
WITH span AS (
  SELECT 0 AS window_id, MIN(ts) AS ts, MAX(ts + dur) - MIN(ts) AS dur
  FROM guide_kineto_profiler_step
)
SELECT span.ts, b.window_ns, b.activities, b.busy_ns
FROM span
JOIN guide_windows_gpu_busy!(span) AS b USING (window_id);
