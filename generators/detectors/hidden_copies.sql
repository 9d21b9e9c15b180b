-- id: hidden-copies
-- title: Device copies made inside other operators
-- title_ja: ほかの演算子の中で行われるデバイス上のコピー
-- severity: warning
-- param: copy_pct_min = 2  Reported when these copies take at least this share (%) of the GPU's busy time in the loop.
-- param_ja: copy_pct_min  これらのコピーが、ループ内で GPU が稼働していた時間のこの割合（%）
--   以上を占めるとき報告します。
-- param: copy_ns_min = 10000  ...and at least this long (ns) in all.
-- param_ja: copy_ns_min  ……かつ、合計がこの時間（ns）以上のとき。
-- needs: gpu, flows
-- relies: kernels, operators
-- guide: part-3/01-attention.md#the-hidden-copy-and-the-one-character-fix
-- breakdown: operator
-- columns: operator=Operator, copy_pct=Share of the GPU's busy time
-- columns_ja: operator=演算子, copy_pct=GPU の稼働時間に占める割合
-- seen: Device copies inside operators that are not copies themselves: {count}, {sum(cost_ns)}
--   of GPU time ({first(copy_pct)} of the GPU's busy time in the loop).
-- seen_ja: それ自体はコピーではない演算子の中で行われたデバイス上のコピーが {count} 回あり、GPU
--   時間は {sum(cost_ns)} です（ループ内で GPU が稼働していた時間の {first(copy_pct)}）。
-- why: An out-of-place operator (`masked_fill`, `reshape` of a non-contiguous tensor, a dtype
--   cast) must leave its input untouched, so it first copies it: a whole extra read and write
--   of the tensor, hidden under an operator that does not sound like a copy.
-- why_ja: アウトオブプレースの演算子（`masked_fill`、非連続なテンソルの `reshape`、dtype のキャスト）
--   は入力を変更してはならないため、まず入力をコピーします。テンソル全体の読み書きが余分に 1
--   回ずつ発生し、それがコピーらしくない名前の演算子の下に隠れます。
-- try: Use the in-place form where nothing needs the old value (`masked_fill_`, `add_`); keep
--   tensors contiguous in the layout the next operator wants; cast once, not per step.
-- try_ja: 古い値が不要なところではインプレース版を使ってください（`masked_fill_`、`add_`）。
--   テンソルは次の演算子が求めるレイアウトで連続に保ち、キャストはステップごとではなく 1
--   回だけにします。
-- after: The `aten::clone → aten::copy_` rows under the operator are gone, with their
--   `Memcpy DtoD` or copy kernels on the GPU row.
-- after_ja: その演算子の下の `aten::clone → aten::copy_` の行が消え、GPU の行にあったそれらの
--   `Memcpy DtoD` やコピーカーネルもなくなります。
-- false-positives: A copy the algorithm needs (a KV-cache update, an explicit `.clone()` that
--   keeps a value for later) shows the same way when a library makes it inside another
--   operator.
-- false-positives_ja: アルゴリズムに必要なコピー（KV キャッシュの更新、値を後で使うための明示的な
--   `.clone()`）も、ライブラリが別の演算子の中で行うと同じように見えます。
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;

WITH
  -- SDPA's math backend casts to fp32 and back inside: its finding is
  -- attention-materialised, and the fix is another backend, not an in-place operator.
  sdpa_math AS MATERIALIZED (
    SELECT id FROM slice WHERE name = 'aten::_scaled_dot_product_attention_math'
  ),
  -- The device copies and copy kernels launched directly by an aten::copy_ inside the loop:
  -- the links read with their slices (a lookup by id), then the GPU activities they start
  -- (their device and stream) in one pass, not searched one by one.
  copy_link AS MATERIALIZED (
    SELECT c.id AS copy_id, ll.gpu_id
    FROM guide_kineto_launch_link AS ll
    JOIN slice AS g ON g.id = ll.gpu_id
    JOIN slice AS r ON r.id = ll.launch_id
    JOIN slice AS c ON c.id = r.parent_id
    CROSS JOIN guide_windows_real_loop AS w ON c.ts >= w.ts AND c.ts < w.ts + w.dur
    WHERE c.name = 'aten::copy_' AND c.category = 'cpu_op'
      AND ((g.category = 'gpu_memcpy' AND g.name GLOB '*DtoD*') OR g.category = 'kernel')
  ),
  launched AS MATERIALIZED (
    SELECT l.copy_id, g.id, g.ts, g.dur, g.name, g.device, g.stream
    FROM guide_kineto_gpu_activity AS g
    JOIN copy_link AS l ON l.gpu_id = g.id
  ),
  busy AS MATERIALIZED (SELECT SUM(busy_ns) AS busy_ns FROM guide_windows_loop_busy),
  -- The copies, read further only when they, all of them, would reach the threshold (the
  -- hidden ones are some of them), and not under SDPA's math backend (whose ancestors are read
  -- only when the trace ran it at all).
  copy AS MATERIALIZED (
    SELECT c.copy_id
    FROM (SELECT DISTINCT copy_id FROM launched) AS c
    WHERE (SELECT 100.0 * SUM(dur) FROM launched) >= {{copy_pct_min}} * (SELECT busy_ns FROM busy)
      AND (
        NOT EXISTS (SELECT 1 FROM sdpa_math)
        OR NOT EXISTS (
          SELECT 1 FROM ancestor_slice(c.copy_id) AS a
          WHERE a.id IN (SELECT id FROM sdpa_math)
        )
      )
  ),
  -- The operators above each copy, read once per copy.
  above AS MATERIALIZED (
    SELECT c.copy_id, a.name, a.depth
    FROM copy AS c
    CROSS JOIN ancestor_slice(c.copy_id) AS a
    WHERE a.category = 'cpu_op'
  ),
  -- Each copy with the outermost operator above it, and the nearest one that is not itself a
  -- copy: the operator that asked for the copy.
  copy_op AS MATERIALIZED (
    SELECT
      copy_id,
      MAX(IIF(depth = top, name, NULL)) AS outer_op,
      MAX(IIF(depth = nearest, name, NULL)) AS asked_by
    FROM (
      SELECT copy_id, name, depth,
        MIN(depth) OVER (PARTITION BY copy_id) AS top,
        MAX(IIF(name IN (
            'aten::copy_', 'aten::clone', 'aten::to', 'aten::_to_copy', 'aten::contiguous',
            'aten::copy'
          ), NULL, depth)) OVER (PARTITION BY copy_id) AS nearest
      FROM above
    )
    GROUP BY copy_id
  ),
  hidden AS MATERIALIZED (
    SELECT l.id, l.ts, l.dur, l.name, l.device, l.stream, c.outer_op
    FROM launched AS l
    JOIN copy_op AS c USING (copy_id)
    WHERE c.outer_op NOT IN (
        'aten::copy_', 'aten::clone', 'aten::to', 'aten::_to_copy', 'aten::contiguous',
        'aten::index_copy_', 'aten::index_put_', 'aten::copy', 'aten::cat'
      )
      -- A copy asked for by an ATen operator is hidden in it; one that an autograd node
      -- (AccumulateGrad, a cast's backward), a compiled function or a library's own operator
      -- (vllm::all_reduce, say) makes is that code's explicit copy, which no in-place form
      -- removes.
      AND c.asked_by GLOB 'aten::*'
  ),
  total AS (SELECT SUM(dur) AS copy_ns FROM hidden)
SELECT
  hidden.ts,
  hidden.dur,
  'GPU ' || hidden.device || ', stream ' || hidden.stream AS location,
  'GPU ' || hidden.device || '、ストリーム ' || hidden.stream AS location_ja,
  hidden.name || ' under ' || hidden.outer_op AS what,
  hidden.outer_op || ' の中の ' || hidden.name AS what_ja,
  hidden.dur AS cost_ns,
  hidden.outer_op AS operator,
  100.0 * total.copy_ns / busy.busy_ns AS copy_pct
FROM hidden, busy, total
WHERE busy.busy_ns > 0 AND 100.0 * total.copy_ns / busy.busy_ns >= {{copy_pct_min}}
  AND total.copy_ns >= {{copy_ns_min}}
ORDER BY hidden.dur DESC, hidden.ts, hidden.id
