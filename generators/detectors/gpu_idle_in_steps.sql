-- id: gpu-idle-in-steps
-- title: GPU idle inside the step loop, by cause
-- title_ja: ステップのループ内の GPU のアイドル（原因別）
-- severity: warning
-- param: idle_pct_min = 20  Reported when the GPU sat idle between its activities for at least this share (%) of the loop's time.
-- param_ja: idle_pct_min  GPU が処理の合間にアイドルだった時間が、ループの時間のこの割合（%）
--   以上のとき報告します。
-- param: idle_ns_min = 20000  ...and when that idle time is at least this long (ns) per step (per loop window).
-- param_ja: idle_ns_min  ……かつ、そのアイドル時間がステップ（ループのウィンドウ）あたりこの値（ns）以上のとき。
-- param: gap_ns_min = 1000  Gaps shorter than this (ns) are listed in the totals but not as evidence.
-- param_ja: gap_ns_min  これより短い隙間（ns）は合計には入りますが、証拠としては列挙しません。
-- needs: gpu
-- relies: cpu-time, kernels, execution
-- scope: loop
-- guide: part-1/01-first-trace.md#reading-the-table-where-does-the-time-go
-- breakdown: cause
-- columns: cause=Cause, loop_ns=Loop time, idle_pct=Idle share per device
-- columns_ja: cause=原因, loop_ns=ループの時間, idle_pct=デバイスあたりのアイドルの割合
-- seen: Between its activities the GPU sat idle for {sum(cost_ns)} of the loop's
--   {first(loop_ns)} ({first(idle_pct)} per device; gaps: {count}).
-- seen_ja: GPU は処理の合間に、ループ全体 {first(loop_ns)} のうち {sum(cost_ns)}
--   アイドルでした（デバイスあたり {first(idle_pct)}、隙間 {count} 個）。
-- why: Every gap is time the GPU could have worked. Its cause says where to look: "host" means
--   the launch call was still running when the GPU ran dry and the work started soon after it
--   returned (the CPU could not keep up), "sync"
--   that the CPU had stopped to wait for the GPU and only then launched more, "profiler" that
--   CUPTI's buffer request stalled the CPU (not the code's cost), "other" that the work was
--   launched in time but started late (a wait on another stream or an event).
-- why_ja: どの隙間も、GPU が働けたはずの時間です。原因から、どこを見ればよいかがわかります。「ホスト」は GPU
--   の仕事が尽きたときに起動呼び出しがまだ実行中で、呼び出しが戻るとすぐに仕事が始まったこと
--   （CPU が追いつけなかった）、「同期」は
--   CPU が GPU を待つために止まり、その後でようやく次を起動したこと、「プロファイラ」は CUPTI
--   のバッファ要求が CPU を止めたこと（コードのコストではありません）、
--   「その他」は仕事は間に合うように起動されたのに開始が遅れたこと（別のストリームやイベントの待ち）
--   を意味します。
-- try: For "host": less CPU work per kernel (torch.compile, CUDA graphs, larger batches). For
--   "sync": remove the synchronisation from the loop (see sync-in-loop). For "other": look at
--   the streams and events the next kernel waited on.
-- try_ja: 「ホスト」には、カーネルあたりの CPU の仕事を減らします（torch.compile、CUDA グラフ、
--   大きなバッチ）。「同期」には、ループから同期を取り除きます（sync-in-loop を参照）。
--   「その他」には、次のカーネルが待っていたストリームとイベントを調べます。
-- after: The GPU row shows kernels back to back, and the gaps that remain are short and rare.
-- after_ja: GPU の行にカーネルが隙間なく並び、残る隙間は短く、まれになります。
-- false-positives: Gaps at the start of a step that a data loader or an evaluation fills on
--   purpose. A gap is counted per device, between activities: idle time before the first
--   activity of the trace is not. A cold first step is left out. Without launch flows the idle
--   time is measured all the same, its cause is `no flows`; a gap during which the CPU was in
--   the allocator (`cudaFree`, `hipFree`, `cudaMalloc`: a first call's workspace, cuDNN's
--   warm-up) is `allocator`, one-time work rather than launch overhead.
-- false-positives_ja: データローダや評価が意図的に埋める、ステップ冒頭の隙間。
--   隙間はデバイスごとに処理の合間で数えるため、トレースの最初の処理より前のアイドル時間は数えませ
--   ん。コールドな最初のステップは除きます。起動のフローがないトレースでもアイドル時間は測り、その原因は
--   「フローなし」とします。CPU がアロケータ（`cudaFree`、`hipFree`、`cudaMalloc`: 最初の呼び出しのワーク
--   スペース、cuDNN のウォームアップ）の中にいた隙間は「アロケータ」で、起動のオーバーヘッドではなく一度
--   きりの仕事です。
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;

WITH
  loop AS MATERIALIZED (
    SELECT * FROM guide_windows_real_loop
    WHERE window_id NOT IN (SELECT window_id FROM guide_windows_cold_step)
  ),
  loop_total AS (SELECT SUM(dur) AS loop_ns FROM loop),
  -- The allocator's calls on the CPU: a gap they overlap is the allocator's, not the launches'.
  allocator AS MATERIALIZED (
    SELECT ts, ts + dur AS end_ts FROM guide_kineto_runtime_call
    WHERE name GLOB '*Free*' OR name GLOB '*Malloc*'
  ),
  flows AS (SELECT EXISTS (SELECT 1 FROM guide_kineto_launch_link) AS linked),
  gap AS MATERIALIZED (
    SELECT g.ts, g.dur, g.device, w.location AS window_location, w.step,
      CASE
        WHEN g.cause = 'profiler' THEN g.cause
        WHEN EXISTS (
          SELECT 1 FROM allocator AS a WHERE a.ts < g.ts + g.dur AND a.end_ts > g.ts
        ) THEN 'allocator'
        WHEN NOT (SELECT linked FROM flows) AND g.cause IN ('host', 'other') THEN 'no flows'
        ELSE g.cause
      END AS cause
    FROM guide_windows_gpu_gap AS g
    JOIN loop AS w USING (window_id)
  ),
  -- Each cause as the Japanese report names it.
  named_gap AS MATERIALIZED (
    SELECT *,
      CASE cause
        WHEN 'host' THEN 'ホスト'
        WHEN 'sync' THEN '同期'
        WHEN 'profiler' THEN 'プロファイラ'
        WHEN 'allocator' THEN 'アロケータ'
        WHEN 'no flows' THEN 'フローなし'
        WHEN 'other' THEN 'その他'
        ELSE cause
      END AS cause_ja
    FROM gap
  ),
  -- Idle time per device: on several GPUs the loop's time counts once per device.
  devices AS (SELECT MAX(COUNT(DISTINCT device), 1) AS n FROM gap),
  total AS (SELECT SUM(dur) / (SELECT n FROM devices) AS idle_ns FROM gap)
SELECT
  gap.ts,
  gap.dur,
  'GPU ' || gap.device AS location,
  'GPU ' || gap.device AS location_ja,
  IIF(gap.step IS NULL, '', 'ProfilerStep#' || gap.step || ': ') || 'idle, cause: '
    || gap.cause AS what,
  IIF(gap.step IS NULL, '', 'ProfilerStep#' || gap.step || ': ') || 'アイドル、原因: '
    || gap.cause_ja AS what_ja,
  gap.dur AS cost_ns,
  gap.cause,
  gap.cause_ja,
  loop_total.loop_ns,
  100.0 * total.idle_ns / loop_total.loop_ns AS idle_pct,
  gap.dur >= {{gap_ns_min}} AS evidence
FROM named_gap AS gap, loop_total, total
WHERE loop_total.loop_ns > 0 AND 100.0 * total.idle_ns / loop_total.loop_ns >= {{idle_pct_min}}
  AND total.idle_ns >= {{idle_ns_min}} * (SELECT COUNT(*) FROM loop)
ORDER BY gap.dur DESC, ts, location
