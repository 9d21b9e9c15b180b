-- id: dataloader-wait
-- title: Steps that wait for the next batch
-- title_ja: 次のバッチを待つステップ
-- severity: warning
-- param: data_pct_min = 10  Reported when fetching batches takes at least this share (%) of the step loop.
-- param_ja: data_pct_min  バッチの取得がステップのループの時間のこの割合（%）
--   以上を占めるとき報告します。
-- param: fetch_ns_min = 10000  ...and at least this long (ns) in all.
-- param_ja: fetch_ns_min  ……かつ、合計がこの時間（ns）以上のとき。
-- needs: steps
-- relies: cpu-time, steps
-- guide: part-5/02-optimizer-and-data.md#the-data
-- columns: loop_ns=Loop time, data_pct=Share of the loop
-- columns_ja: loop_ns=ループの時間, data_pct=ループに占める割合
-- seen: Fetching the next batch took {sum(cost_ns)} of the loop's {first(loop_ns)}
--   ({first(data_pct)}; calls: {count}).
-- seen_ja: 次のバッチの取得に、ループ全体 {first(loop_ns)} のうち {sum(cost_ns)}
--   かかりました（{first(data_pct)}、呼び出し {count} 回）。
-- why: `enumerate(DataLoader)#…__next__` is the training loop waiting for its next batch. With
--   `num_workers=0` the batch is loaded and collated on the training thread: the CPU launches no
--   work meanwhile, so once the GPU has drained what was queued it waits too.
-- why_ja: `enumerate(DataLoader)#…__next__` は、学習ループが次のバッチを待っている時間で
--   す。`num_workers=0` ではバッチの読み込みとまとめ上げ（collation）が学習スレッドで行われます。その間 CPU
--   は何も起動しないため、キューに積まれていた仕事を GPU が使い切ると、GPU も待つことになります。
-- try: `DataLoader(..., num_workers=N, pin_memory=True, persistent_workers=True)` and a
--   `prefetch_factor` that keeps batches ready; move decoding and augmentation off the
--   training thread.
-- try_ja: `DataLoader(..., num_workers=N, pin_memory=True, persistent_workers=True)` と、
--   バッチを常に用意しておける `prefetch_factor` を使ってください。
--   画像などのデコードやデータ拡張は学習スレッドの外に移します。
-- after: `__next__` shrinks to taking a ready batch from a queue (`_MultiProcessingDataLoaderIter`),
--   a small share of each step.
-- after_ja: `__next__` は用意済みのバッチをキューから受け取るだけ
--   （`_MultiProcessingDataLoaderIter`）になり、各ステップのわずかな割合に縮みます。
-- false-positives: The first step's fetch, which starts the workers; a dataset that is fast
--   enough that the share is small in absolute terms.
-- false-positives_ja: ワーカーを立ち上げる最初のステップでの取得。データセットが十分に速く、
--   その割合が実際の時間としては小さい場合。
INCLUDE PERFETTO MODULE guide.windows;

WITH
  loop AS (SELECT SUM(dur) AS loop_ns FROM guide_windows_real_loop WHERE step IS NOT NULL),
  fetch AS MATERIALIZED (
    SELECT s.id, s.ts, s.dur, s.name, s.track_id
    FROM slice AS s
    JOIN guide_windows_real_loop AS w ON s.ts >= w.ts AND s.ts < w.ts + w.dur AND w.step IS NOT NULL
    WHERE s.name GLOB 'enumerate(DataLoader)*'
  ),
  total AS (SELECT SUM(dur) AS fetch_ns FROM fetch)
SELECT
  f.ts,
  f.dur,
  COALESCE(t.name, 'thread ' || t.tid) AS location,
  COALESCE(t.name, 'スレッド ' || t.tid) AS location_ja,
  f.name AS what,
  f.name AS what_ja,
  f.dur AS cost_ns,
  loop.loop_ns,
  100.0 * total.fetch_ns / loop.loop_ns AS data_pct
FROM fetch AS f
LEFT JOIN thread_track AS tt ON tt.id = f.track_id
LEFT JOIN thread AS t USING (utid), loop, total
WHERE loop.loop_ns > 0 AND 100.0 * total.fetch_ns / loop.loop_ns >= {{data_pct_min}}
  AND total.fetch_ns >= {{fetch_ns_min}}
ORDER BY f.dur DESC, ts, location
