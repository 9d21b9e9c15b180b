-- What runs on the CPU thread and on the GPU during the first profiled step?
-- output: table
-- columns: lane=Lane, depth=Depth, name=Name, category=Category, start_ns=Start (from step start), dur_ns=Duration, id=Slice id, launched_by=Launched by slice
-- question_ja: プロファイルした最初のステップの間に、CPU スレッドと GPU で何が動くか
-- columns_ja: lane=レーン, depth=深さ, name=名前, category=カテゴリ, start_ns=開始（ステップの開始から）, dur_ns=所要時間, id=スライス ID, launched_by=起動元のスライス
INCLUDE PERFETTO MODULE guide.kineto;

WITH first_step AS (SELECT * FROM guide_kineto_profiler_step ORDER BY step LIMIT 1)
SELECT * FROM (
  SELECT
    'CPU thread ' || s.tid AS lane,
    s.depth,
    s.name,
    s.category,
    s.ts - f.ts AS start_ns,
    s.dur AS dur_ns,
    s.id,
    NULL AS launched_by
  FROM guide_kineto_slice AS s, first_step AS f
  WHERE s.track_id = f.track_id AND s.ts >= f.ts AND s.ts + s.dur <= f.ts + f.dur
  UNION ALL
  SELECT
    'GPU ' || g.device || ' stream ' || g.stream AS lane,
    0 AS depth,
    g.name,
    g.category,
    g.ts - f.ts AS start_ns,
    g.dur AS dur_ns,
    g.id,
    ll.launch_id AS launched_by
  FROM guide_kineto_gpu_activity AS g
  JOIN guide_kineto_launch_link AS ll ON ll.gpu_id = g.id
  JOIN guide_kineto_runtime_call AS r ON r.id = ll.launch_id, first_step AS f
  WHERE r.ts >= f.ts AND r.ts < f.ts + f.dur
)
ORDER BY lane, start_ns, depth, id;
