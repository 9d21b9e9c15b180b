-- id: overhead-bound-steps
-- title: Steps the CPU could not keep the GPU busy in
-- title_ja: CPU が GPU を稼働させ続けられなかったステップ
-- severity: warning
-- param: busy_pct_max = 50  A step whose GPU busy share is below this (%) is reported.
-- param_ja: busy_pct_max  GPU 稼働率がこの値（%）未満のステップを報告します。
-- param: idle_ns_min = 20000  ...and in which the GPU sat idle for at least this long (ns): below it the step lost too little to act on.
-- param_ja: idle_ns_min  ……かつ、GPU がこの時間（ns）以上アイドルだったステップ。それより短い
--   ステップは手を打つほどのコストではありません。
-- needs: gpu, flows, steps
-- relies: cpu-time, kernels, execution
-- guide: part-4/02-decode-step.md#why-decode-on-a-gpu-is-overhead-bound-at-batch-1
-- columns: busy_pct=GPU busy share, launches=Launch calls, launch_ns=Time in launch calls
-- columns_ja: busy_pct=GPU 稼働率, launches=起動呼び出し, launch_ns=起動呼び出しの時間
-- seen: Profiled steps in which the GPU was busy less than {busy_pct_max} % of the time:
--   {count} (lowest {min(busy_pct)}; GPU idle in those steps: {sum(cost_ns)}). The CPU spent
--   {sum(launch_ns)} in launch calls ({sum(launches)}) in those steps.
-- seen_ja: プロファイルしたステップのうち、GPU 稼働率が {busy_pct_max} % 未満だったものが
--   {count} 個あります（最低 {min(busy_pct)}、それらのステップでの GPU のアイドル時間 {sum(cost_ns)}）。
--   それらのステップで CPU は起動呼び出しに {sum(launch_ns)} を費やしました（{sum(launches)} 回）。
-- why: The GPU sat idle for most of the step although the work the step launched had finished
--   before the step ended: the GPU was waiting for the CPU (Python, operator dispatch, kernel
--   launches), so the CPU set the step's length. A faster kernel would not shorten such a step.
-- why_ja: ステップが起動した仕事はステップの終わりより前に終わっていたのに、GPU
--   はステップの大半でアイドルでした。GPU は CPU（Python、演算子のディスパッチ、カーネルの起動）
--   を待っていました。つまり、ステップの長さを決めていたのは CPU です。カーネルを速くしても、
--   このようなステップは短くなりません。
-- try: Give the GPU more work per launch (a larger batch, fused operations), or cut the CPU's
--   share: torch.compile, CUDA graphs (mode="reduce-overhead"), less Python per step.
-- try_ja: 起動 1 回あたりの GPU の仕事を増やす（大きなバッチ、演算の融合）か、CPU
--   の負担を減らしてください。torch.compile や CUDA グラフ（mode="reduce-overhead"）を使う、
--   ステップあたりの Python の処理を減らす、などの方法があります。
-- after: The GPU row of each step fills up: fewer, longer kernels with short gaps between them,
--   and the step's length follows the GPU's work.
-- after_ja: 各ステップの GPU の行が埋まります。カーネルは少なく長くなって隙間は短くなり、
--   ステップの長さは GPU の仕事で決まるようになります。
-- false-positives: A step that waits on purpose (data loading, logging, evaluation). A cold first
--   step (three times the median of the others or more) is left out; with fewer than three
--   steps a cold one may still be reported (the trust gate says so). A step whose launched work was still
--   running when it ended is not reported: there the GPU is behind, not starved.
-- false-positives_ja: 意図的に待つステップ（データの読み込み、ログ、評価）や、
--   コールドな最初のステップ（ほかのステップの中央値の 3 倍以上）は除きます。ステップが 3 個未満では
--   コールドなステップが報告されることがあります（信頼性チェックがそう示します）。
--   起動した仕事がステップの終わりにまだ実行中だったステップは報告しません。そこでは GPU
--   は仕事が足りないのではなく、処理が追いついていないだけです。
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  -- The profiled steps, less a cold first step (one-time work, not overhead).
  step AS (
    SELECT window_id, step, ts, dur, location, location_ja FROM guide_windows_real_loop
    WHERE step IS NOT NULL
      AND window_id NOT IN (SELECT window_id FROM guide_windows_cold_step)
  ),
  busy AS (SELECT * FROM guide_windows_loop_busy),
  launch AS (
    SELECT st.window_id, COUNT(*) AS launches, SUM(r.dur) AS launch_ns
    FROM step AS st
    JOIN guide_kineto_runtime_call AS r ON r.ts >= st.ts AND r.ts < st.ts + st.dur
    WHERE r.id IN (SELECT launch_id FROM guide_kineto_launch_link)
    GROUP BY st.window_id
  ),
  -- When the GPU finished the work each step launched.
  drained AS (
    SELECT st.window_id, MAX(g.ts + g.dur) AS work_end
    FROM step AS st
    JOIN guide_kineto_runtime_call AS r ON r.ts >= st.ts AND r.ts < st.ts + st.dur
    JOIN guide_kineto_launch_link AS ll ON ll.launch_id = r.id
    JOIN guide_kineto_gpu_activity AS g ON g.id = ll.gpu_id
    GROUP BY st.window_id
  )
SELECT
  st.ts,
  st.dur,
  st.location,
  st.location_ja,
  'ProfilerStep#' || st.step || ': GPU busy ' || printf('%.1f', 100.0 * b.busy_ns / st.dur)
    || ' % of the step' AS what,
  'ProfilerStep#' || st.step || ': GPU 稼働率はステップの '
    || printf('%.1f', 100.0 * b.busy_ns / st.dur) || ' %' AS what_ja,
  st.dur - b.busy_ns AS cost_ns,
  100.0 * b.busy_ns / st.dur AS busy_pct,
  COALESCE(l.launches, 0) AS launches,
  COALESCE(l.launch_ns, 0) AS launch_ns
FROM step AS st
JOIN busy AS b USING (window_id)
LEFT JOIN launch AS l USING (window_id)
LEFT JOIN drained AS d USING (window_id)
WHERE b.busy_ns IS NOT NULL AND st.dur > 0
  AND COALESCE(d.work_end, st.ts) <= st.ts + st.dur
  AND 100.0 * b.busy_ns / st.dur < {{busy_pct_max}}
  AND st.dur - b.busy_ns >= {{idle_ns_min}}
  -- A step that launched nothing did no GPU work to starve.
  AND COALESCE(l.launches, 0) > 0
ORDER BY cost_ns DESC, ts, location
