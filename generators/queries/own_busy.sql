-- GPU busy in each step window, with the guide's one definition (the union of GPU activity, clipped to the window)
-- output: table
-- columns: step=Step, dur_ns=Step time, activities=GPU activities, busy_ns=GPU busy, busy_pct=GPU busy share
-- question_ja: 各ステップのウィンドウでの GPU 稼働（ガイドの一つの定義: ウィンドウに切り詰めた GPU の処理の和集合）
-- columns_ja: step=ステップ, dur_ns=ステップ時間, activities=GPU の処理数, busy_ns=GPU 稼働時間, busy_pct=GPU 稼働率
INCLUDE PERFETTO MODULE guide.windows;

SELECT
  step,
  dur AS dur_ns,
  activities,
  busy_ns,
  ROUND(100.0 * busy_ns / dur, 1) AS busy_pct
FROM guide_windows_step_busy
ORDER BY step;
