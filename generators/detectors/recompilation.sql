-- id: recompilation
-- title: Recompiled torch.compile frames
-- title_ja: 再コンパイルされた torch.compile のフレーム
-- severity: warning
-- relies: operators
-- guide: part-1/05-torch-compile.md#new-rows-in-the-cpu-lane
-- breakdown: frame
-- columns: frame=Frame, compile_id=Compile id
-- columns_ja: frame=フレーム, compile_id=コンパイル ID
-- seen: Calls into a frame that torch.compile had compiled again: {count} ({sum(cost_ns)}
--   inside those regions).
-- seen_ja: torch.compile が再コンパイルしたフレームの呼び出しが {count}
--   回あります（それらの領域の中で {sum(cost_ns)}）。
-- why: `Torch-Compiled Region: F/C` names frame F and its compilation C: C above 0 means the
--   frame's guards failed (a new shape, dtype, or Python value) and Dynamo compiled it again.
--   Each recompilation costs seconds of compile time, and past the cache limit Dynamo falls
--   back to eager.
-- why_ja: `Torch-Compiled Region: F/C` はフレーム F とそのコンパイル C を示します。C が 0
--   より大きければ、フレームのガードが失敗し（新しい形状、dtype、Python の値）、Dynamo
--   がもう一度コンパイルしたということです。再コンパイルには 1 回ごとに数秒のコンパイル時間がかかり、
--   キャッシュの上限を超えると Dynamo は eager 実行に戻ります。
-- try: Run with `TORCH_LOGS=recompiles` to see which guard failed; mark changing sizes dynamic
--   (`torch._dynamo.mark_dynamic`, `dynamic=True`), pad inputs to a few fixed shapes, and keep
--   Python scalars that change out of the compiled function's arguments.
-- try_ja: `TORCH_LOGS=recompiles` をつけて実行し、どのガードが失敗したかを確認してください。
--   変化するサイズは動的として印をつけ（`torch._dynamo.mark_dynamic`、`dynamic=True`）、
--   入力は少数の固定形状にパディングし、変化する Python のスカラーはコンパイル済み関数の引数に入れ
--   ないようにします。
-- after: Only `/0` regions: one compilation per frame, reused on every step.
-- after_ja: `/0` の領域だけになります。フレームごとにコンパイルは 1 回で、
--   すべてのステップで再利用されます。
-- false-positives: A deliberate second shape (a last, smaller batch) compiled once and then
--   reused.
-- false-positives_ja: 意図的な 2 つ目の形状（最後の小さなバッチ）が 1 回だけコンパイルされ、
--   その後再利用される場合。

WITH region AS MATERIALIZED (
  SELECT
    s.id, s.ts, s.dur, s.name, s.track_id,
    regexp_extract(s.name, ': ([0-9]+)/[0-9]+') AS frame,
    CAST(regexp_extract(s.name, '/([0-9]+)$') AS INT) AS compile_id
  FROM slice AS s
  WHERE s.name GLOB 'Torch-Compiled Region: *'
)
SELECT
  r.ts,
  r.dur,
  COALESCE(t.name, 'thread ' || t.tid) AS location,
  COALESCE(t.name, 'スレッド ' || t.tid) AS location_ja,
  r.name AS what,
  r.name AS what_ja,
  r.dur AS cost_ns,
  'frame ' || r.frame AS frame,
  'フレーム ' || r.frame AS frame_ja,
  r.compile_id
FROM region AS r
LEFT JOIN thread_track AS tt ON tt.id = r.track_id
LEFT JOIN thread AS t USING (utid)
WHERE r.compile_id > 0
ORDER BY r.ts
