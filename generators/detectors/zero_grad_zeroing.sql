-- id: zero-grad-zeroing
-- title: zero_grad that writes zeros instead of dropping the gradients
-- title_ja: 勾配を捨てずにゼロを書き込む zero_grad
-- severity: warning
-- relies: operators, cpu-time
-- guide: part-5/02-optimizer-and-data.md#zero_grad
-- columns: zeroing_ops=Zeroing operators
-- columns_ja: zeroing_ops=ゼロ埋めの演算子
-- seen: `zero_grad` calls that wrote zeros into the gradients: {count}, with
--   {sum(zeroing_ops)} zeroing operators and {sum(cost_ns)} of CPU time.
-- seen_ja: 勾配にゼロを書き込んだ `zero_grad` の呼び出しが {count} 回あり、ゼロ埋めの演算子は
--   {sum(zeroing_ops)} 個、CPU 時間は {sum(cost_ns)} でした。
-- why: `zero_grad(set_to_none=False)` fills every gradient with zeros: a memset or fill kernel
--   per parameter (or a `_foreach_zero_`), and memory traffic for the whole gradient size. With
--   `set_to_none=True` (the default since PyTorch 2.0) the gradients are dropped and the next
--   backward writes them fresh.
-- why_ja: `zero_grad(set_to_none=False)` はすべての勾配をゼロで埋めます。パラメータごとに memset か
--   fill のカーネル（または `_foreach_zero_`）が動き、勾配全体の大きさの分だけメモリトラフィックが
--   発生します。`set_to_none=True`（PyTorch 2.0 以降のデフォルト）なら勾配は破棄され、
--   次の逆伝播が新しく書き込みます。
-- try: `optimizer.zero_grad()` (or `set_to_none=True`), unless code reads `.grad` between steps
--   and needs zeros there.
-- try_ja: `optimizer.zero_grad()`（または `set_to_none=True`）を使ってください。ただし、
--   ステップの間でコードが `.grad` を読み、そこにゼロが必要な場合は別です。
-- after: `Optimizer.zero_grad#…` holds no `aten::zero_`, `aten::fill_` or `aten::_foreach_zero_`,
--   and the GPU row has no memsets at that moment.
-- after_ja: `Optimizer.zero_grad#…` の下に `aten::zero_`、`aten::fill_`、`aten::_foreach_zero_`
--   がなくなり、その時点の GPU の行に memset もなくなります。
-- false-positives: Code that writes into `.grad` itself (in place) and needs zeros there.
--   Gradient accumulation alone does not: backward writes a fresh gradient into a None `.grad`.
-- false-positives_ja: `.grad` に自分で（インプレースで）書き込み、そこにゼロが必要なコード。
--   勾配の累積だけなら必要ありません。逆伝播は None の `.grad` に新しい勾配を書き込みます。
WITH
  zg AS MATERIALIZED (
    SELECT s.id, s.ts, s.dur, s.name, s.track_id
    FROM slice AS s
    WHERE s.name GLOB 'Optimizer.zero_grad#*' AND s.category IS NOT 'gpu_user_annotation'
  ),
  inside AS (
    SELECT z.id, COUNT(*) AS zeroing_ops
    FROM zg AS z
    JOIN descendant_slice(z.id) AS d
    WHERE d.category = 'cpu_op'
      AND d.name IN ('aten::zero_', 'aten::fill_', 'aten::_foreach_zero_')
    GROUP BY z.id
  )
SELECT
  z.ts,
  z.dur,
  COALESCE(t.name, 'thread ' || t.tid) AS location,
  COALESCE(t.name, 'スレッド ' || t.tid) AS location_ja,
  z.name || ': ' || printf('%,d', i.zeroing_ops) || ' zeroing operators' AS what,
  z.name || ': ゼロ埋めの演算子 ' || printf('%,d', i.zeroing_ops) || ' 個' AS what_ja,
  z.dur AS cost_ns,
  i.zeroing_ops
FROM zg AS z
JOIN inside AS i USING (id)
LEFT JOIN thread_track AS tt ON tt.id = z.track_id
LEFT JOIN thread AS t USING (utid)
ORDER BY z.dur DESC, ts, location
