-- id: sync-in-loop
-- title: Synchronisations inside the step loop
-- severity: warning
-- needs: gpu
-- guide: part-5/02-optimizer-and-data.md#reading-the-loss-back
-- breakdown: caller
-- seen: Synchronisations inside the loop: {count}, with the CPU blocked for {sum(cost_ns)} in
--   all; the GPU work they waited for took {sum(waited_gpu_ns)}.
-- why: A synchronisation blocks the CPU until the GPU has caught up, so the queue of launched
--   work runs empty: after it returns, the GPU idles while the CPU launches again. Reading a
--   value back (`.item()`, `print(loss)`, a Python `if` on a tensor, `.cpu()`, `.tolist()`)
--   synchronises too.
-- try: Keep values on the GPU and read them back every N steps, not every step; use
--   `non_blocking=True` copies into pinned memory; let conditions stay on the GPU
--   (`torch.where`) instead of branching in Python.
-- after: No synchronisation calls inside the steps except where a value is truly needed, and
--   the GPU row has no gap after each of them.
-- false-positives: A synchronisation that a benchmark's timing or the last step needs. The
--   profiler's own closing `cudaDeviceSynchronize` lies after the last step and is not counted
--   (see profiler-artefacts), except in a trace without steps.
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  sync AS MATERIALIZED (
    SELECT r.id, r.name, r.ts, r.dur, w.step, s.thread_name, s.tid
    FROM guide_kineto_runtime_call AS r
    JOIN guide_kineto_slice AS s USING (id)
    JOIN guide_windows_loop AS w ON r.ts >= w.ts AND r.ts < w.ts + w.dur
    WHERE (r.name GLOB '*Synchronize' OR r.name IN ('cudaMemcpy', 'hipMemcpy'))
      AND EXISTS (SELECT 1 FROM guide_kineto_gpu_activity)
  ),
  waited AS (SELECT * FROM guide_windows_gpu_busy!((SELECT id AS window_id, ts, dur FROM sync))),
  -- The operator that asked for the synchronisation: the nearest enclosing cpu_op.
  caller AS (
    SELECT sync.id, (
      SELECT a.name FROM ancestor_slice(sync.id) AS a
      WHERE a.category = 'cpu_op' ORDER BY a.depth DESC LIMIT 1
    ) AS op
    FROM sync
  )
SELECT
  sync.ts,
  sync.dur,
  COALESCE(sync.thread_name, 'thread ' || sync.tid) AS location,
  IIF(sync.step IS NULL, '', 'ProfilerStep#' || sync.step || ': ') || sync.name
    || IIF(caller.op IS NULL, '', ' in ' || caller.op) AS what,
  sync.dur AS cost_ns,
  COALESCE(waited.busy_ns, 0) AS waited_gpu_ns,
  sync.name || IIF(caller.op IS NULL, '', ' in ' || caller.op) AS caller
FROM sync
JOIN caller USING (id)
LEFT JOIN waited ON waited.window_id = sync.id
ORDER BY sync.dur DESC
