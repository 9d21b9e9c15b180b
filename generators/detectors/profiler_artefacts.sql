-- id: profiler-artefacts
-- title: The profiler's own marks in the trace
-- severity: info
-- param: cold_x_min = 2  The first profiled step is called cold when it is at least this many times as wide as the median of the others.
-- guide: part-1/02-cpu-and-gpu-lanes.md#the-profilers-own-start-up
-- breakdown: kind
-- seen: Marks in this trace that come from the profiler rather than from the code's steady
--   state: {count} ({sum(cost_ns)} of profiler time, not counting the closing synchronisation,
--   which waits for the code's own GPU work).
-- why: `Activity Buffer Request` is CUPTI asking the profiler for a buffer to record into: it
--   stalls the CUDA call it happens in, so the kernels behind it start late. The
--   `cudaDeviceSynchronize` after the last step is the profiler waiting, before it stops, for
--   GPU work the code launched and that is still queued: its length is that work's, not a cost
--   of its own. A cold first active step pays for first calls (allocations, library handles,
--   autotuning) and for the profiler switching to recording, which later steps do not.
-- try: Nothing to optimise here. Use `wait` and `warmup` steps in the profiler's schedule, read
--   steady-state numbers from the later active steps, and do not count a stalled launch or the
--   gap after it as the code's cost.
-- after: —
-- false-positives: A first step that is slow for a reason that recurs (a new input shape every
--   few steps) is not an artefact.
INCLUDE PERFETTO MODULE guide.windows;

WITH
  step AS MATERIALIZED (
    SELECT window_id, step, ts, dur, location,
      ROW_NUMBER() OVER (ORDER BY ts) AS n, COUNT(*) OVER () AS steps
    FROM guide_windows_loop WHERE step IS NOT NULL
  ),
  later AS (SELECT dur, ROW_NUMBER() OVER (ORDER BY dur) AS k FROM step WHERE n > 1),
  median AS (
    SELECT dur AS median_ns FROM later
    WHERE k = (SELECT (COUNT(*) + 1) / 2 FROM later)
  ),
  last_step AS (SELECT MAX(ts + dur) AS end_ts FROM step),
  marks AS (
    SELECT s.ts, s.dur, 'thread ' || COALESCE(t.tid, '?') AS location,
      s.name AS what, 'CUPTI buffer request' AS kind
    FROM slice AS s
    LEFT JOIN thread_track AS tt ON tt.id = s.track_id
    LEFT JOIN thread AS t USING (utid)
    WHERE s.name = 'Activity Buffer Request'
    UNION ALL
    SELECT s.ts, s.dur, 'thread ' || COALESCE(t.tid, '?'),
      s.name || ' after the last step: waits for GPU work still queued', 'closing synchronisation'
    FROM slice AS s
    LEFT JOIN thread_track AS tt ON tt.id = s.track_id
    LEFT JOIN thread AS t USING (utid)
    WHERE s.name GLOB '*DeviceSynchronize' AND s.depth = 0
      AND s.ts >= (SELECT end_ts FROM last_step)
    UNION ALL
    SELECT step.ts, step.dur, step.location,
      'ProfilerStep#' || step.step || ': ' || printf('%.1f', 1.0 * step.dur / median.median_ns)
        || '× the median of the later steps',
      'cold first step'
    FROM step, median
    WHERE step.n = 1 AND step.steps >= 3 AND step.dur >= {{cold_x_min}} * median.median_ns
  )
-- The closing synchronisation's time is the code's GPU work still running, not a profiler cost.
SELECT ts, dur, location, what, IIF(kind = 'closing synchronisation', 0, dur) AS cost_ns, kind
FROM marks
ORDER BY cost_ns DESC
