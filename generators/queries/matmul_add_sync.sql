-- How long is the device synchronisation at the end of the window, and how much of it was GPU work it waited for?
-- output: values
-- question_ja: ウィンドウ末尾のデバイス同期はどれだけ長く、そのうち待っていた GPU の処理はどれだけか
-- needs: cuda
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.launch;

WITH
  sync AS (SELECT * FROM guide_launch_sync ORDER BY ts DESC LIMIT 1),
  last_step AS (SELECT * FROM guide_kineto_profiler_step ORDER BY step DESC LIMIT 1)
SELECT
  (SELECT COUNT(*) FROM guide_launch_sync) AS sync_calls,
  (SELECT dur FROM sync) AS sync_ns,
  (SELECT pending_activities FROM sync) AS pending_activities,
  (SELECT gpu_busy_ns FROM sync) AS waited_gpu_ns,
  (SELECT 100.0 * gpu_busy_ns / dur FROM sync) AS waited_gpu_pct,
  (SELECT tail_ns FROM sync) AS tail_ns,
  -- Focus: the synchronisation if there is one, else the last step.
  COALESCE((SELECT ts FROM sync), (SELECT ts FROM last_step)) / 1e9 AS sync_start_s,
  COALESCE((SELECT ts + dur FROM sync), (SELECT ts + dur FROM last_step)) / 1e9 AS sync_end_s;
