-- The step windows: each ProfilerStep#N, when it starts and how long it lasts
-- output: table
-- columns: step=Step, start_ns=Start (from the first step), dur_ns=Length, cpu_ops=CPU operators inside
-- question_ja: ステップのウィンドウ: 各 ProfilerStep#N の開始と長さ
-- columns_ja: step=ステップ, start_ns=開始（最初のステップから）, dur_ns=長さ, cpu_ops=ステップ内の CPU 演算子数
SELECT
  step.name AS step,
  step.ts - (SELECT MIN(ts) FROM slice WHERE name GLOB 'ProfilerStep#*') AS start_ns,
  step.dur AS dur_ns,
  (
    SELECT COUNT(*) FROM slice AS op
    WHERE op.track_id = step.track_id AND op.category = 'cpu_op'
      AND op.ts >= step.ts AND op.ts < step.ts + step.dur
  ) AS cpu_ops
FROM slice AS step
WHERE step.name GLOB 'ProfilerStep#*'
ORDER BY step.ts;
