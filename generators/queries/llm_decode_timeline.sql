-- What runs on the CPU thread and on the GPU during one decode step?
-- output: table
-- columns: lane=Lane, depth=Depth, name=Name, category=Category, start_ns=Start (from the decode step's start), dur_ns=Duration, id=Slice id, launched_by=Launched by slice
-- question_ja: デコードステップ 1 回の間に、CPU スレッドと GPU で何が動くか
-- columns_ja: lane=レーン, depth=深さ, name=名前, category=カテゴリ, start_ns=開始（デコードステップの開始から）, dur_ns=所要時間, id=スライス ID, launched_by=起動元のスライス
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.llm;

-- The decode step in the middle of the first profiled generate call (as llm_decode's focus),
-- from its forward's start to the next forward's start.
WITH
  first_step AS (SELECT MIN(step) AS step FROM guide_llm_forward),
  dec AS (
    SELECT f.* FROM guide_llm_forward AS f, first_step
    WHERE f.step = first_step.step AND f.phase = 'decode'
  ),
  focus AS MATERIALIZED (
    SELECT d.id AS window_id, d.ts, d.token_dur AS dur, d.track_id, s.depth
    FROM dec AS d
    JOIN guide_kineto_slice AS s USING (id)
    ORDER BY d.idx LIMIT 1 OFFSET (SELECT COUNT(*) / 2 FROM dec)
  )
SELECT * FROM (
  SELECT
    'CPU thread ' || s.tid AS lane,
    -- Operators down to two levels below the decode label; launch calls, however deep, on the
    -- row below them.
    MIN(s.depth - f.depth, 3) AS depth,
    s.name,
    s.category,
    s.ts - f.ts AS start_ns,
    s.dur AS dur_ns,
    s.id,
    NULL AS launched_by
  FROM guide_kineto_slice AS s, focus AS f
  WHERE s.track_id = f.track_id AND s.ts >= f.ts AND s.ts + s.dur <= f.ts + f.dur
    AND s.depth >= f.depth
    AND (
      s.depth <= f.depth + 2
      OR s.category IN ('cuda_runtime', 'cuda_driver')
    )
  UNION ALL
  SELECT
    'GPU ' || k.device || ' stream ' || k.stream AS lane,
    0 AS depth,
    k.kernel_name AS name,
    'kernel' AS category,
    k.kernel_ts - f.ts AS start_ns,
    k.kernel_dur AS dur_ns,
    k.kernel_id AS id,
    k.launch_id AS launched_by
  FROM guide_llm_window_kernel!(focus) AS k, focus AS f
  WHERE k.kernel_id IS NOT NULL
)
ORDER BY lane, start_ns, depth, id;
