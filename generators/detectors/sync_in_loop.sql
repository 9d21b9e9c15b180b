-- id: sync-in-loop
-- title: Synchronisations inside the step loop
-- title_ja: ステップのループ内の同期
-- severity: warning
-- param: blocked_ns_min = 100000  Reported when the synchronisations and blocking copies held the CPU for at least this long (ns) per step (per loop window: the whole trace without steps).
-- param_ja: blocked_ns_min  同期とブロッキングコピーが CPU を止めた時間が、ステップ（ループのウィンドウ。ステップのない
--   トレースではトレース全体）あたりこの値（ns）以上のとき報告します。
-- needs: gpu
-- relies: cpu-time, execution
-- scope: loop
-- guide: part-5/02-optimizer-and-data.md#reading-the-loss-back
-- breakdown: caller
-- columns: blocked_ns=CPU blocked, waited_gpu_ns=GPU work waited for, caller=Caller
-- columns_ja: blocked_ns=CPU が止まった時間, waited_gpu_ns=待っていた GPU の仕事, caller=呼び出し箇所
-- seen: Synchronisations inside the loop: {count}, with the CPU blocked for {sum(blocked_ns)} in
--   all; the GPU work they waited for took {sum(waited_gpu_ns)}. What they cost: {sum(cost_ns)},
--   the GPU's idle time from the end of the work each waited for to its next work, at most the
--   time it blocked.
-- seen_ja: ループ内の同期が {count} 回あり、CPU が止まっていた時間は合計 {sum(blocked_ns)} です。
--   待っていた GPU の仕事にかかった時間は {sum(waited_gpu_ns)} です。同期のコストは {sum(cost_ns)}
--   で、各同期が待った仕事の終わりから GPU の次の仕事までのアイドル時間（その同期が CPU を止めた
--   時間が上限）です。
-- why: A synchronisation blocks the CPU until the GPU has caught up, so the queue of launched
--   work runs empty: after it returns, the GPU idles while the CPU launches again. Reading a
--   value back (`.item()`, `print(loss)`, a Python `if` on a tensor, `.cpu()`, `.tolist()`)
--   synchronises too.
-- why_ja: 同期は GPU が追いつくまで CPU を止めるため、起動済みの仕事のキューが空になります。
--   同期から戻った後、CPU が次の仕事を起動し直すまでの間 GPU はアイドルです。
--   値の読み戻し（`.item()`、`print(loss)`、テンソルに対する Python の
--   `if`、`.cpu()`、`.tolist()`）も同期を伴います。
-- try: Keep values on the GPU and read them back every N steps, not every step; use
--   `non_blocking=True` copies into pinned memory; let conditions stay on the GPU
--   (`torch.where`) instead of branching in Python.
-- try_ja: 値は GPU 上に置いておき、毎ステップではなく N ステップごとに読み戻してください。
--   ピン留めメモリへの `non_blocking=True` のコピーを使い、条件は Python で分岐せず GPU
--   上に留めます（`torch.where`）。
-- after: No synchronisation calls inside the steps except where a value is truly needed, and
--   the GPU row has no gap after each of them.
-- after_ja: 値が本当に必要な場所を除いてステップ内に同期呼び出しがなくなり、GPU
--   の行にはその後の隙間がなくなります。
-- false-positives: A synchronisation that a benchmark's timing or the last step needs. The
--   profiler's own closing `cudaDeviceSynchronize` lies after the last step and is not counted
--   (see profiler-artefacts), except in a trace without steps.
-- false-positives_ja: ベンチマークの計測や最後のステップに必要な同期。プロファイラ自身の最後の
--   `cudaDeviceSynchronize` は最後のステップの後にあるため数えません（profiler-artefacts を参照）。
--   ただし、ステップのないトレースでは数えます。
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  sync AS MATERIALIZED (
    SELECT r.id, r.name, r.ts, r.dur, w.step, w.ts + w.dur AS window_end, s.thread_name, s.tid
    FROM guide_kineto_sync_call AS r
    JOIN guide_kineto_slice AS s USING (id)
    CROSS JOIN guide_windows_real_loop AS w ON r.ts >= w.ts AND r.ts < w.ts + w.dur
    WHERE EXISTS (SELECT 1 FROM guide_kineto_gpu_activity)
  ),
  -- Whether the synchronisations block long enough to be reported (the finding's condition
  -- below): read further only then.
  reported AS MATERIALIZED (
    SELECT SUM(dur) >= {{blocked_ns_min}} * (SELECT COUNT(*) FROM guide_windows_real_loop) AS yes
    FROM sync
  ),
  waited AS (
    SELECT * FROM guide_windows_gpu_busy_swept!((
      SELECT id AS window_id, ts, dur FROM sync WHERE (SELECT yes FROM reported)
    ))
  ),
  -- What a synchronisation cost the GPU: from the end of the GPU work it waited for (the last
  -- that ran while it blocked; its own start if none did) to the GPU's next start after it
  -- returned, within its step: the rest of the idle gap it returned into (guide_windows_gpu_gap,
  -- the longest on several GPUs), nothing when it returned to a busy GPU, and to the step's end
  -- when no GPU work follows it there. Idle time while it blocked with work already queued (a
  -- wait on an event, another stream) is not its doing, and neither are the gaps between the
  -- queued kernels it waited for.
  -- Each is found by a sweep over the time line rather than a search per synchronisation: where
  -- a synchronisation returned (once per row of sync).
  ret AS MATERIALIZED (
    SELECT ROW_NUMBER() OVER () AS point_id, id, ts, ts + dur AS at, window_end FROM sync
    WHERE (SELECT yes FROM reported)
  ),
  -- The gap each returned into: within one loop window, a GPU's gaps are disjoint, so the latest
  -- gap of each window and GPU that started by the return (gaps first at the same time) is the
  -- only one there that can hold it, and its start and end are the largest so far.
  gap_sweep AS (
    SELECT window_id, device, ts AS at, ts AS gap_ts, ts + dur AS gap_end, NULL AS point_id
    FROM guide_windows_gpu_gap
    WHERE EXISTS (SELECT 1 FROM ret)
    UNION ALL
    SELECT w.window_id, d.device, r.at, NULL, NULL, r.point_id
    FROM ret AS r
    CROSS JOIN (SELECT DISTINCT device FROM guide_windows_gpu_gap) AS d
    CROSS JOIN guide_windows_loop AS w ON r.at >= w.ts AND r.at < w.ts + w.dur
  ),
  gap_at AS MATERIALIZED (
    SELECT point_id, at, MAX(gap_ts) OVER sweep AS gap_ts, MAX(gap_end) OVER sweep AS gap_end
    FROM gap_sweep
    WINDOW sweep AS (
      PARTITION BY window_id, device ORDER BY at, point_id IS NOT NULL ROWS UNBOUNDED PRECEDING
    )
  ),
  returned_into AS MATERIALIZED (
    SELECT g.point_id, MAX(g.gap_end - MAX(g.gap_ts, r.ts)) AS idle_ns
    FROM gap_at AS g
    JOIN ret AS r USING (point_id)
    WHERE g.point_id IS NOT NULL AND g.gap_end > g.at
    GROUP BY g.point_id
  ),
  -- The latest end among the GPU activities that started by each return (at or before it: work
  -- running when it returned ends after it), and among those that started before it.
  act_sweep AS (
    SELECT ts AS at, ts + dur AS end_ts, NULL AS point_id FROM guide_kineto_gpu_activity
    WHERE EXISTS (SELECT 1 FROM ret)
    UNION ALL
    SELECT at, NULL, point_id FROM ret
  ),
  act_at AS MATERIALIZED (
    SELECT point_id, end_by, end_before
    FROM (
      SELECT point_id,
        MAX(end_ts) OVER (ORDER BY at, point_id IS NOT NULL ROWS UNBOUNDED PRECEDING) AS end_by,
        MAX(end_ts) OVER (ORDER BY at, point_id IS NULL ROWS UNBOUNDED PRECEDING) AS end_before
      FROM act_sweep
    )
    WHERE point_id IS NOT NULL
  ),
  span AS MATERIALIZED (
    SELECT
      r.id,
      COALESCE(
        i.idle_ns,
        IIF(
          a.end_by > r.at,
          0,
          -- No GPU work after it in its step: idle from the last work's end to the step's end.
          MAX(0, r.window_end - MAX(r.ts, COALESCE(a.end_before, r.ts)))
        )
      ) AS idle_ns
    FROM ret AS r
    JOIN act_at AS a USING (point_id)
    LEFT JOIN returned_into AS i USING (point_id)
  ),
  -- The operator that asked for the synchronisation: the nearest enclosing cpu_op.
  caller AS (
    SELECT sync.id, (
      SELECT a.name FROM ancestor_slice(sync.id) AS a
      WHERE a.category = 'cpu_op' ORDER BY a.depth DESC LIMIT 1
    ) AS op
    FROM sync
    WHERE (SELECT yes FROM reported)
  )
SELECT
  sync.ts,
  sync.dur,
  COALESCE(sync.thread_name, 'thread ' || sync.tid) AS location,
  COALESCE(sync.thread_name, 'スレッド ' || sync.tid) AS location_ja,
  IIF(sync.step IS NULL, '', 'ProfilerStep#' || sync.step || ': ') || sync.name
    || IIF(caller.op IS NULL, '', ' in ' || caller.op) AS what,
  IIF(sync.step IS NULL, '', 'ProfilerStep#' || sync.step || ': ')
    || IIF(caller.op IS NULL, '', caller.op || ' の中の ') || sync.name AS what_ja,
  MIN(sync.dur, span.idle_ns) AS cost_ns,
  sync.dur AS blocked_ns,
  COALESCE(waited.busy_ns, 0) AS waited_gpu_ns,
  sync.name || IIF(caller.op IS NULL, '', ' in ' || caller.op) AS caller,
  IIF(caller.op IS NULL, '', caller.op || ' の中の ') || sync.name AS caller_ja
FROM sync
JOIN caller USING (id)
LEFT JOIN waited ON waited.window_id = sync.id
JOIN span USING (id)
-- Below the floor the CPU lost too little to act on, whatever the count.
WHERE (SELECT SUM(dur) FROM sync) >= {{blocked_ns_min}} * (SELECT COUNT(*) FROM guide_windows_real_loop)
ORDER BY cost_ns DESC, sync.dur DESC, sync.ts, location
