-- id: compile-wrappers
-- title: What torch.compile's wrappers cost on the CPU
-- title_ja: torch.compile のラッパーが CPU で使う時間
-- severity: info
-- relies: cpu-time
-- scope: loop
-- guide: part-2/02-mlp.md#what-the-wrappers-cost
-- breakdown: wrapper
-- columns: wrapper=Wrapper
-- columns_ja: wrapper=ラッパー
-- seen: torch.compile's wrappers inside the loop: {count} calls, {sum(cost_ns)} of CPU time of
--   their own: time inside them not spent in a profiled operator below (guard checks, cache
--   lookups, Inductor's Python wrapper and kernel launcher).
-- seen_ja: ループ内で torch.compile のラッパーが {count} 回呼ばれ、ラッパー自身の CPU 時間は
--   {sum(cost_ns)} でした。ラッパーの中にいて、その下に記録された演算子の外にある時間です
--   （ガードのチェック、キャッシュの検索、Inductor の Python ラッパーとカーネルランチャー）。
-- why: Every call into a compiled function first looks up the compiled code and checks its
--   guards (`TorchDynamo Cache Lookup`), then runs it inside `Torch-Compiled Region`. That is CPU
--   time per call: small next to a large model's GPU work, but a real share of a small,
--   overhead-bound step.
-- why_ja: コンパイル済み関数を呼ぶたびに、まずコンパイル済みコードを探してガードをチェックし
--   （`TorchDynamo Cache Lookup`）、それから `Torch-Compiled Region` の中で実行します。
--   これは呼び出しごとにかかる CPU 時間です。大きなモデルの GPU の仕事に比べれば小さいものの、
--   小さくてオーバーヘッド律速のステップでは無視できない割合になります。
-- try: Compile a larger region (the whole model or step, not each small function), so the
--   wrappers run once per step; `mode="reduce-overhead"` adds CUDA graphs on top.
-- try_ja: もっと大きな範囲をコンパイルしてください（小さな関数ごとではなく、
--   モデル全体やステップ全体）。そうすればラッパーはステップごとに 1
--   回だけ動きます。`mode="reduce-overhead"` にすると、さらに CUDA グラフも使われます。
-- after: One `Torch-Compiled Region` per step, and a wrapper self time that is small next to
--   the step.
-- after_ja: ステップごとに `Torch-Compiled Region` が 1 つになり、
--   ラッパーの自己時間はステップに比べて小さくなります。
-- false-positives: Nothing to fix when the steps are GPU-bound: this is a note on how to read
--   the compiled rows.
-- false-positives_ja: ステップが GPU 律速なら直すものはありません。
--   これはコンパイル済みコードのスライスの読み方についての注記です。
INCLUDE PERFETTO MODULE guide.windows;

WITH
  -- One filter per name, not an OR of both: each then runs inside the slice table itself.
  named AS MATERIALIZED (
    SELECT id, ts, dur, name, track_id FROM slice WHERE name GLOB 'Torch-Compiled Region*'
    UNION ALL
    SELECT id, ts, dur, name, track_id FROM slice WHERE name = 'TorchDynamo Cache Lookup'
  ),
  wrapper AS MATERIALIZED (
    SELECT s.id, s.ts, s.dur, s.name, s.track_id
    FROM named AS s
    JOIN guide_windows_real_loop AS w ON s.ts >= w.ts AND s.ts < w.ts + w.dur
  ),
  child AS (
    SELECT w.id, SUM(c.dur) AS child_ns
    FROM wrapper AS w JOIN slice AS c ON c.parent_id = w.id
    GROUP BY w.id
  )
SELECT
  w.ts,
  w.dur,
  COALESCE(t.name, 'thread ' || t.tid) AS location,
  COALESCE(t.name, 'スレッド ' || t.tid) AS location_ja,
  w.name AS what,
  w.name AS what_ja,
  w.dur - COALESCE(c.child_ns, 0) AS cost_ns,
  IIF(w.name GLOB 'Torch-Compiled Region*', 'Torch-Compiled Region', w.name) AS wrapper
FROM wrapper AS w
LEFT JOIN child AS c USING (id)
LEFT JOIN thread_track AS tt ON tt.id = w.track_id
LEFT JOIN thread AS t USING (utid)
ORDER BY cost_ns DESC, ts, location
