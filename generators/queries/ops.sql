-- Which operators and annotations cost the most CPU time over the profiled steps?
-- output: table
-- columns: name=Name, category=Category, calls=Calls, total_ns=Total time, self_ns=Self time
-- question_ja: プロファイルしたステップ全体で、CPU 時間を最も使う演算子とアノテーションはどれか
-- columns_ja: name=名前, category=カテゴリ, calls=呼び出し回数, total_ns=合計時間, self_ns=自己時間
INCLUDE PERFETTO MODULE guide.kineto;

-- Self time = the slice's duration minus the time of the slices nested directly inside it,
-- which is how the profiler's key_averages() table counts "Self CPU".
SELECT
  s.name,
  s.category,
  COUNT(*) AS calls,
  SUM(s.dur) AS total_ns,
  SUM(s.dur - COALESCE((SELECT SUM(c.dur) FROM slice AS c WHERE c.parent_id = s.id), 0))
    AS self_ns
FROM guide_kineto_slice AS s
WHERE s.category IN ('cpu_op', 'user_annotation')
GROUP BY s.name, s.category
ORDER BY self_ns DESC, s.name;
