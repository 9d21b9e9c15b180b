-- id: launch-bound
-- title: Kernels shorter than the launches that issued them
-- title_ja: 起動呼び出しより短いカーネル
-- severity: warning
-- param: short_pct_min = 50  Reported when at least this share (%) of the loop's kernels ran for less time than their launch call took.
-- param_ja: short_pct_min  ループ内のカーネルのうち、起動呼び出しより実行時間が短いものの割合（%）
--   がこの値以上のとき報告します。
-- param: launch_ns_min = 10000  ...and when those launches took at least this long (ns) per step (per loop window): below it the pattern costs too little to act on.
-- param: cold_launch_ns = 1000000  A launch call at least this long (ns) is one-time work (lazy module loading, a first call's set-up), not the cost of launching: left out.
-- param_ja: launch_ns_min  ……かつ、それらの起動呼び出しがステップ（ループのウィンドウ）あたりこの時間（ns）以上のとき。
--   これ未満では手を打つほどのコストではありません。
-- param_ja: cold_launch_ns  この時間（ns）以上かかった起動呼び出しは一度きりの仕事（モジュールの遅延読み込み、
--   最初の呼び出しの準備）であり、起動のコストではないため除外します。
-- needs: gpu, flows
-- relies: cpu-time, kernels, execution
-- scope: loop
-- guide: part-1/02-cpu-and-gpu-lanes.md#one-step-both-lanes
-- breakdown: kernel
-- columns: kernel_ns=Kernel time, kernel=Kernel, kernels=Kernels in the loop, short_pct=Share shorter than their launch
-- columns_ja: kernel_ns=カーネルの時間, kernel=カーネル, kernels=ループ内のカーネル, short_pct=起動より短いカーネルの割合
-- seen: Kernels that ran for less time than the CPU took to launch them: {count} of the
--   loop's {first(kernels)} ({first(short_pct)}); their launch calls took {sum(cost_ns)}, the
--   kernels {sum(kernel_ns)}.
-- seen_ja: CPU が起動にかけた時間より実行時間が短かったカーネルは、ループ内の {first(kernels)}
--   個のうち {count} 個です（{first(short_pct)}）。それらの起動呼び出しは {sum(cost_ns)}、
--   カーネル自体は {sum(kernel_ns)} でした。
-- why: A kernel that finishes before the next launch call returns leaves the GPU waiting for
--   the CPU: the loop runs at the speed of launching, whatever the GPU can do. Many small
--   kernels in a loop are the typical pattern of small batches, decode steps and unfused
--   elementwise code.
-- why_ja: 次の起動呼び出しが戻る前に終わるカーネルは、GPU に CPU を待たせます。GPU
--   の性能にかかわらず、ループは起動の速さで進みます。ループ内に小さなカーネルが多数並ぶのは、
--   小さなバッチ、デコードステップ、融合されていない要素ごとの演算に典型的なパターンです。
-- try: Capture the loop in a CUDA graph (one launch replays all kernels:
--   `torch.compile(mode="reduce-overhead")` or `torch.cuda.graph`), fuse kernels with
--   `torch.compile`, or give each kernel more work (a larger batch).
-- try_ja: ループを CUDA グラフにキャプチャする（1 回の起動で全カーネルを再生しま
--   す。`torch.compile(mode="reduce-overhead")` または `torch.cuda.graph`）、`torch.compile`
--   でカーネルを融合する、または各カーネルの仕事を増やしてください（大きなバッチ）。
-- after: Under a CUDA graph the CPU row shows one `cudaGraphLaunch` per step instead of one
--   launch per kernel; after fusion, fewer and longer kernels.
-- after_ja: CUDA グラフを使うと、CPU の行にはカーネルごとの起動ではなく、ステップごとに 1 つの
--   `cudaGraphLaunch` が現れます。融合の後は、カーネルが少なく長くなります。
-- false-positives: Short kernels that overlap other work (the GPU stays busy anyway): read the
--   busy share (overhead-bound-steps) before acting. Launches stalled by the profiler's own
--   `Activity Buffer Request`, launches of a millisecond or more (one-time work), a cold first
--   step and kernels replayed from a CUDA graph are left out of the short ones; the loop's
--   kernels count every kernel that started in it, graph-replayed ones included.
-- false-positives_ja: ほかの仕事と重なる短いカーネル（どのみち GPU は稼働しています）。対処する前に
--   GPU 稼働率（overhead-bound-steps）を見てください。プロファイラ自身の `Activity Buffer Request`
--   で止まった起動、1 ms 以上かかった起動（一度きりの仕事）、コールドな最初のステップ、CUDA グラフから
--   再生されたカーネルは短いカーネルから除外しています。ループ内のカーネル数には、グラフから再生された
--   ものも含め、ループ内で始まったすべてのカーネルを数えます。
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;

WITH
  -- The loop's windows, less a cold first step (one-time work).
  loop AS MATERIALIZED (
    SELECT * FROM guide_windows_real_loop
    WHERE window_id NOT IN (SELECT window_id FROM guide_windows_cold_step)
  ),
  -- CUPTI's buffer requests stall the launch they happen in: not the code's cost.
  stall AS MATERIALIZED (SELECT ts, ts + dur AS end_ts FROM slice WHERE name = 'Activity Buffer Request'),
  launched AS MATERIALIZED (
    SELECT g.id, g.ts AS gpu_ts, g.dur AS kernel_ns, g.name,
      r.ts, r.dur AS launch_ns, r.name AS launch_name, r.track_id
    FROM guide_kineto_launch_link AS ll
    JOIN slice AS g ON g.id = ll.gpu_id
    JOIN slice AS r ON r.id = ll.launch_id
    -- Windows last (CROSS JOIN keeps that order): the planner would otherwise scan the slices
    -- of each window and look each one up among the links.
    CROSS JOIN loop AS w ON r.ts >= w.ts AND r.ts < w.ts + w.dur
    WHERE g.category = 'kernel'
      -- A graph launch replays many kernels; each is not compared with the whole launch.
      AND r.name NOT GLOB '*GraphLaunch*'
      AND r.dur < {{cold_launch_ns}}
      AND NOT EXISTS (SELECT 1 FROM stall WHERE stall.ts < r.ts + r.dur AND stall.end_ts > r.ts)
  ),
  -- Every kernel the GPU started inside the loop, linked to a launch or not (a graph launch's
  -- replayed kernels often are not): the share's denominator.
  loop_kernels AS (
    SELECT COUNT(*) AS kernels
    FROM guide_kineto_gpu_activity AS g
    CROSS JOIN loop AS w ON g.ts >= w.ts AND g.ts < w.ts + w.dur
    WHERE g.category = 'kernel'
  ),
  total AS (
    SELECT MAX((SELECT kernels FROM loop_kernels), COUNT(*)) AS kernels,
      SUM(kernel_ns < launch_ns) AS short,
      SUM(IIF(kernel_ns < launch_ns, launch_ns, 0)) AS short_launch_ns
    FROM launched
  )
SELECT
  l.ts,
  l.launch_ns AS dur,
  COALESCE(t.name, 'thread ' || t.tid) AS location,
  COALESCE(t.name, 'スレッド ' || t.tid) AS location_ja,
  l.launch_name || ' ' || printf('%.1f', l.launch_ns / 1e3) || ' µs → ' || l.name || ' '
    || printf('%.1f', l.kernel_ns / 1e3) || ' µs' AS what,
  l.launch_name || ' ' || printf('%.1f', l.launch_ns / 1e3) || ' µs → ' || l.name || ' '
    || printf('%.1f', l.kernel_ns / 1e3) || ' µs' AS what_ja,
  l.launch_ns AS cost_ns,
  l.kernel_ns,
  l.name AS kernel,
  total.kernels,
  100.0 * total.short / total.kernels AS short_pct
FROM launched AS l
LEFT JOIN thread_track AS tt ON tt.id = l.track_id
LEFT JOIN thread AS t USING (utid), total
WHERE l.kernel_ns < l.launch_ns AND total.kernels > 0
  AND 100.0 * total.short / total.kernels >= {{short_pct_min}}
  AND total.short_launch_ns >= {{launch_ns_min}} * (SELECT COUNT(*) FROM loop)
ORDER BY l.launch_ns DESC, ts, location
