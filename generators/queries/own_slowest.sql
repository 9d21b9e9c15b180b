-- The slowest calls of one operator (aten::mm): CPU time, the step it ran in, and the GPU work it launched
-- output: table
-- columns: operator=Operator, step=Step, cpu_ns=CPU time, launched=GPU work launched, gpu_ns=Its GPU time
-- question_ja: ある演算子（aten::mm）の遅い呼び出し: CPU 時間、実行したステップ、起動した GPU の処理
-- columns_ja: operator=演算子, step=ステップ, cpu_ns=CPU 時間, launched=起動した GPU の処理の数, gpu_ns=その GPU 時間
WITH
  launched AS (
    -- Each runtime call with the GPU work its flow leads to.
    SELECT launch.track_id, launch.ts, kernel.dur
    FROM flow AS f
    JOIN slice AS launch ON launch.id = f.slice_out
    JOIN slice AS kernel ON kernel.id = f.slice_in
    WHERE launch.category IN ('cuda_runtime', 'cuda_driver')
      AND kernel.category IN ('kernel', 'gpu_memcpy', 'gpu_memset')
  )
SELECT
  op.name AS operator,
  step.name AS step,
  op.dur AS cpu_ns,
  (
    SELECT COUNT(*) FROM launched AS l
    WHERE l.track_id = op.track_id AND l.ts >= op.ts AND l.ts < op.ts + op.dur
  ) AS launched,
  (
    SELECT SUM(l.dur) FROM launched AS l
    WHERE l.track_id = op.track_id AND l.ts >= op.ts AND l.ts < op.ts + op.dur
  ) AS gpu_ns
FROM slice AS op
-- The step the call ran in: a LEFT JOIN, so that a trace without ProfilerStep#N still lists its
-- calls (with no step).
LEFT JOIN slice AS step
  ON step.track_id = op.track_id AND step.name GLOB 'ProfilerStep#*'
  AND op.ts >= step.ts AND op.ts < step.ts + step.dur
WHERE op.name = 'aten::mm'
ORDER BY op.dur DESC
LIMIT 5;
