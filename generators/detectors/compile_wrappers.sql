-- id: compile-wrappers
-- title: What torch.compile's wrappers cost on the CPU
-- severity: info
-- guide: part-2/02-mlp.md#what-the-wrappers-cost
-- breakdown: wrapper
-- seen: torch.compile's wrappers inside the loop: {count} calls, {sum(cost_ns)} of CPU time of
--   their own: time inside them not spent in a profiled operator below (guard checks, cache
--   lookups, Inductor's Python wrapper and kernel launcher).
-- why: Every call into a compiled function first looks up the compiled code and checks its
--   guards (`TorchDynamo Cache Lookup`), then runs it inside `Torch-Compiled Region`. That is CPU
--   time per call: small next to a large model's GPU work, but a real share of a small,
--   overhead-bound step.
-- try: Compile a larger region (the whole model or step, not each small function), so the
--   wrappers run once per step; `mode="reduce-overhead"` adds CUDA graphs on top.
-- after: One `Torch-Compiled Region` per step, and a wrapper self time that is small next to
--   the step.
-- false-positives: Nothing to fix when the steps are GPU-bound: this is a note on how to read
--   the compiled rows.
INCLUDE PERFETTO MODULE guide.windows;

WITH
  wrapper AS MATERIALIZED (
    SELECT s.id, s.ts, s.dur, s.name, s.track_id
    FROM slice AS s
    JOIN guide_windows_loop AS w ON s.ts >= w.ts AND s.ts < w.ts + w.dur
    WHERE s.name GLOB 'Torch-Compiled Region*' OR s.name = 'TorchDynamo Cache Lookup'
  ),
  child AS (
    SELECT w.id, SUM(c.dur) AS child_ns
    FROM wrapper AS w JOIN slice AS c ON c.parent_id = w.id
    GROUP BY w.id
  )
SELECT
  w.ts,
  w.dur,
  COALESCE(t.name, 'thread ' || t.tid) AS location,
  w.name AS what,
  w.dur - COALESCE(c.child_ns, 0) AS cost_ns,
  IIF(w.name GLOB 'Torch-Compiled Region*', 'Torch-Compiled Region', w.name) AS wrapper
FROM wrapper AS w
LEFT JOIN child AS c USING (id)
LEFT JOIN thread_track AS tt ON tt.id = w.track_id
LEFT JOIN thread AS t USING (utid)
ORDER BY cost_ns DESC
