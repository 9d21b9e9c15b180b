-- Reading the loss back with loss.item(): what it costs the CPU, and the GPU idle it leaves
-- output: values
-- question_ja: loss.item() による損失の読み戻し: CPU にかかるコストと、それが残す GPU のアイドル
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.train;

WITH
  steps AS (SELECT COUNT(*) AS n FROM guide_train_step),
  reads AS (SELECT * FROM guide_train_phase WHERE phase = 'log_loss'),
  gpu AS (SELECT ts, dur FROM guide_kineto_gpu_activity),
  traced AS (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS yes),
  -- The GPU after each read: the last activity that ended before the read returned, and the
  -- first that started after it. Between the two the GPU had nothing to do: the read waited
  -- for the queue to drain, and the CPU had yet to launch the next step's work.
  idle AS (
    SELECT
      r.id,
      (SELECT MIN(g.ts) FROM gpu AS g WHERE g.ts >= r.ts + r.dur)
        - (SELECT MAX(g.ts + g.dur) FROM gpu AS g WHERE g.ts < r.ts + r.dur) AS idle_ns
    FROM reads AS r
  ),
  sync AS (
    SELECT SUM(s.dur) AS dur
    FROM guide_kineto_slice AS s
    JOIN reads AS r ON s.track_id = r.track_id AND s.ts >= r.ts AND s.ts < r.ts + r.dur
    WHERE s.category IN ('cuda_runtime', 'cuda_driver')
      AND (s.name GLOB '*Synchronize*' OR s.name GLOB 'cudaMemcpy*')
  )
SELECT
  (SELECT COUNT(*) FROM reads) * 1.0 / steps.n AS reads_per_step,
  (SELECT COUNT(*) FROM guide_kineto_slice AS s JOIN reads AS r
    ON s.track_id = r.track_id AND s.ts >= r.ts AND s.ts < r.ts + r.dur
    WHERE s.name = 'aten::item') AS item_calls,
  (SELECT CAST(AVG(dur) AS INT) FROM reads) AS read_cpu_ns,
  -- Per read: a read makes a device-to-host copy and a synchronisation, both counted.
  IIF(traced.yes, (SELECT CAST(sync.dur / NULLIF((SELECT COUNT(*) FROM reads), 0) AS INT)
    FROM sync), NULL) AS read_wait_ns,
  IIF(traced.yes, (SELECT CAST(AVG(idle_ns) AS INT) FROM idle), NULL) AS gpu_idle_after_read_ns,
  IIF(traced.yes, (SELECT ROUND(100.0 * busy_ns / window_ns, 1) FROM guide_windows_steps_busy),
    NULL) AS gpu_busy_pct
FROM steps, traced;
