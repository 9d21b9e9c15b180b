-- id: cuda-graphs
-- title: Kernels replayed from CUDA graphs
-- title_ja: CUDA グラフから再生されたカーネル
-- severity: info
-- needs: gpu, flows
-- relies: kernels
-- guide: part-4/03-batch-and-cuda-graphs.md#what-a-static-cache-and-cuda-graphs-change
-- columns: kernels=Kernels replayed, gpu_ns=GPU time
-- columns_ja: kernels=再生したカーネル, gpu_ns=GPU 時間
-- seen: CUDA graph launches: {count}, replaying {sum(kernels)} kernels ({sum(gpu_ns)} of GPU
--   time).
-- seen_ja: CUDA グラフの起動が {count} 回あり、{sum(kernels)} 個のカーネルを再生しました（GPU 時間
--   {sum(gpu_ns)}）。
-- why: A CUDA graph replays a recorded sequence of kernels from one `cudaGraphLaunch`: those
--   kernels have no launch call of their own, so per-kernel launch latency, "kernels shorter
--   than their launch" and the CPU time per kernel do not apply to them; the graph launch's cost
--   is shared by all of them. The operators that recorded the graph do not run again, so the
--   CPU rows above the kernels are missing.
-- why_ja: CUDA グラフは、記録したカーネルの列を 1 回の `cudaGraphLaunch` から再生します。
--   それらのカーネルには自分の起動呼び出しがないため、カーネルごとの起動レイテンシも、
--   「起動より短いカーネル」も、カーネルあたりの CPU 時間もあてはまりません。
--   グラフの起動のコストはすべてのカーネルで分け合います。グラフを記録した演算子は再び実行されない
--   ため、カーネルの上にあるはずの CPU の行がありません。
-- try: Nothing to fix: read these kernels by their names and GPU times, and the graph launch's
--   CPU time as the cost of the whole sequence.
-- try_ja: 直すものはありません。これらのカーネルは名前と GPU 時間で読み、グラフの起動の CPU
--   時間はカーネルの列全体のコストとして読んでください。
-- after: —
-- after_ja: —
-- false-positives: None known; a graph captured once and never replayed shows no kernels here.
-- false-positives_ja: 知られているものはありません。一度キャプチャしただけで再生されていないグラフ
--   は、ここにカーネルを示しません。
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  -- The graph launches, then their links (indexed by launch_id), then the GPU activities they
  -- replayed, read in one pass: looked up one by one by id, the activities cost a search each,
  -- and the planner would otherwise read every link and look up its call.
  launch AS MATERIALIZED (
    SELECT id, ts, dur, name FROM guide_kineto_runtime_call WHERE name GLOB '*GraphLaunch*'
  ),
  replayed AS MATERIALIZED (
    SELECT r.id AS launch_id, ll.gpu_id
    FROM launch AS r
    CROSS JOIN guide_kineto_launch_link AS ll ON ll.launch_id = r.id
  ),
  activity AS MATERIALIZED (
    SELECT p.launch_id, g.id, g.dur, g.device
    FROM guide_kineto_gpu_activity AS g
    JOIN replayed AS p ON p.gpu_id = g.id
  ),
  graph AS MATERIALIZED (
    SELECT r.id, r.ts, r.dur, r.name, COUNT(a.id) AS kernels, SUM(a.dur) AS gpu_ns,
      MIN(a.device) AS device
    FROM launch AS r
    JOIN activity AS a ON a.launch_id = r.id
    GROUP BY r.id
  )
SELECT
  ts,
  dur,
  'GPU ' || device AS location,
  'GPU ' || device AS location_ja,
  name || ': ' || kernels || ' kernels' AS what,
  name || ': カーネル ' || kernels || ' 個' AS what_ja,
  dur AS cost_ns,
  kernels,
  gpu_ns
FROM graph
ORDER BY ts
