-- What a Kineto trace becomes: the slices of each Kineto category, and the threads they are on
-- output: table
-- columns: category=Category (slice.category), slices=Slices, threads=Thread tracks, thread_names=Thread names
-- question_ja: Kineto トレースが何になるか: Kineto のカテゴリごとのスライスと、それが載るスレッド
-- columns_ja: category=カテゴリ（slice.category）, slices=スライス数, threads=スレッドのトラック数, thread_names=スレッド名
SELECT
  s.category,
  COUNT(*) AS slices,
  COUNT(DISTINCT s.track_id) AS threads,
  GROUP_CONCAT(DISTINCT t.name) AS thread_names
FROM slice AS s
JOIN thread_track AS tt ON tt.id = s.track_id
JOIN thread AS t USING (utid)
GROUP BY s.category
ORDER BY slices DESC, s.category;
