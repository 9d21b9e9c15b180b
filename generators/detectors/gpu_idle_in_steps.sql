-- id: gpu-idle-in-steps
-- title: GPU idle inside the step loop, by cause
-- severity: warning
-- param: idle_pct_min = 20  Reported when the GPU sat idle between its activities for at least this share (%) of the loop's time.
-- param: gap_ns_min = 1000  Gaps shorter than this (ns) are listed in the totals but not as evidence.
-- needs: gpu, flows
-- guide: part-1/01-first-trace.md#reading-the-table-where-does-the-time-go
-- breakdown: cause
-- seen: Between its activities the GPU sat idle for {sum(cost_ns)} of the loop's
--   {first(loop_ns)} ({first(idle_pct)} per device; gaps: {count}).
-- why: Every gap is time the GPU could have worked. Its cause says where to look: "host" means
--   the launch call was still running when the GPU ran dry (the CPU could not keep up), "sync"
--   that the CPU had stopped to wait for the GPU and only then launched more, "profiler" that
--   CUPTI's buffer request stalled the CPU (not the code's cost), "other" that the work was
--   launched in time but started late (a wait on another stream or an event).
-- try: For "host": less CPU work per kernel (torch.compile, CUDA graphs, larger batches). For
--   "sync": remove the synchronisation from the loop (see sync-in-loop). For "other": look at
--   the streams and events the next kernel waited on.
-- after: The GPU row shows kernels back to back, and the gaps that remain are short and rare.
-- false-positives: Gaps at the start of a step that a data loader or an evaluation fills on
--   purpose. A gap is counted per device, between activities: idle time before the first
--   activity of the trace is not.
INCLUDE PERFETTO MODULE guide.windows;

WITH
  loop AS (SELECT SUM(dur) AS loop_ns FROM guide_windows_loop),
  gap AS (
    SELECT g.*, w.location AS window_location, w.step
    FROM guide_windows_gpu_gap AS g
    JOIN guide_windows_loop AS w USING (window_id)
  ),
  -- Idle time per device: on several GPUs the loop's time counts once per device.
  devices AS (SELECT MAX(COUNT(DISTINCT device), 1) AS n FROM gap),
  total AS (SELECT SUM(dur) / (SELECT n FROM devices) AS idle_ns FROM gap)
SELECT
  gap.ts,
  gap.dur,
  'GPU ' || gap.device AS location,
  IIF(gap.step IS NULL, '', 'ProfilerStep#' || gap.step || ': ') || 'idle, cause: '
    || gap.cause AS what,
  gap.dur AS cost_ns,
  gap.cause,
  loop.loop_ns,
  100.0 * total.idle_ns / loop.loop_ns AS idle_pct,
  gap.dur >= {{gap_ns_min}} AS evidence
FROM gap, loop, total
WHERE loop.loop_ns > 0 AND 100.0 * total.idle_ns / loop.loop_ns >= {{idle_pct_min}}
ORDER BY gap.dur DESC
