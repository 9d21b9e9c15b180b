-- Allocated memory over the profiled training steps, event by event
-- output: table
-- columns: step=Step, phase=Phase, t_ns=Time from the first step's start, allocated_bytes=Allocated
-- question_ja: プロファイルした学習ステップを通じた確保済みメモリ（イベントごと）
-- columns_ja: step=ステップ, phase=フェーズ, t_ns=最初のステップの開始からの時間, allocated_bytes=確保済み
INCLUDE PERFETTO MODULE guide.train;

WITH
  dev AS (
    -- The GPU's allocator where the trace has one, else the CPU's.
    SELECT IIF(EXISTS (SELECT 1 FROM guide_train_memory WHERE device = 'CUDA'), 'CUDA', 'CPU')
      AS device
  ),
  first_step AS (SELECT MIN(ts) AS ts FROM guide_train_step)
SELECT
  m.step,
  COALESCE(m.phase, 'between phases') AS phase,
  m.ts - first_step.ts AS t_ns,
  m.allocated_bytes
FROM guide_train_memory AS m, dev, first_step
WHERE m.device = dev.device AND m.step IS NOT NULL
ORDER BY m.ts;
