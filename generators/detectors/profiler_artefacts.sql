-- id: profiler-artefacts
-- title: The profiler's own marks in the trace
-- title_ja: トレースに残るプロファイラ自身の痕跡
-- severity: info
-- guide: part-1/02-cpu-and-gpu-lanes.md#the-profilers-own-start-up
-- breakdown: kind
-- columns: kind=Kind of mark
-- columns_ja: kind=痕跡の種類
-- seen: Marks in this trace that come from the profiler rather than from the code's steady
--   state: {count} ({sum(cost_ns)} of profiler time, not counting the closing synchronisation,
--   which waits for the code's own GPU work).
-- seen_ja: このトレースには、コードの定常状態ではなくプロファイラに由来する痕跡が {count}
--   個あります（プロファイラの時間 {sum(cost_ns)}。最後の同期はコード自身の GPU
--   の仕事を待つものなので数えていません）。
-- why: `Activity Buffer Request` is CUPTI asking the profiler for a buffer to record into: it
--   stalls the CUDA call it happens in, so the kernels behind it start late. The
--   `cudaDeviceSynchronize` after the last step is the profiler waiting, before it stops, for
--   GPU work the code launched and that is still queued: its length is that work's, not a cost
--   of its own. A cold first active step pays for first calls (allocations, library handles,
--   autotuning) and for the profiler switching to recording, which later steps do not.
-- why_ja: `Activity Buffer Request` は、CUPTI が記録用のバッファをプロファイラに要求しているもので
--   す。これはその中で起きた CUDA 呼び出しを止めるため、その後ろのカーネルの開始が遅れます。
--   最後のステップの後の `cudaDeviceSynchronize` は、プロファイラが停止する前に、
--   コードが起動してまだキューに残っている GPU の仕事を待っているものです。
--   その長さはその仕事の長さであり、同期自体のコストではありません。
--   最初のアクティブなステップがコールドだと、初回の呼び出し（メモリ確保、ライブラリのハンドル、
--   オートチューニング）と、プロファイラが記録を始めるためのコストがそこに上乗せされます。
--   後のステップにはかかりません。
-- try: Nothing to optimise here. Use `wait` and `warmup` steps in the profiler's schedule, read
--   steady-state numbers from the later active steps, and do not count a stalled launch or the
--   gap after it as the code's cost.
-- try_ja: ここで最適化するものはありません。プロファイラのスケジュールで `wait` と `warmup`
--   のステップを使い、定常状態の数値は後のアクティブなステップから読んでください。
--   止まった起動やその後の隙間をコードのコストとして数えないでください。
-- after: —
-- after_ja: —
-- false-positives: A first step that is slow for a reason that recurs (a new input shape every
--   few steps) is not an artefact.
-- false-positives_ja: 繰り返し起きる理由（数ステップごとに新しい入力形状が来るなど）
--   で遅い最初のステップは、プロファイラの痕跡ではありません。
INCLUDE PERFETTO MODULE guide.windows;

WITH
  last_step AS (SELECT MAX(ts + dur) AS end_ts FROM guide_windows_loop WHERE step IS NOT NULL),
  marks AS (
    SELECT s.ts, s.dur, COALESCE(t.name, 'thread ' || COALESCE(t.tid, '?')) AS location,
      COALESCE(t.name, 'スレッド ' || COALESCE(t.tid, '?')) AS location_ja,
      s.name AS what, s.name AS what_ja, 'CUPTI buffer request' AS kind,
      'CUPTI のバッファ要求' AS kind_ja
    FROM slice AS s
    LEFT JOIN thread_track AS tt ON tt.id = s.track_id
    LEFT JOIN thread AS t USING (utid)
    WHERE s.name = 'Activity Buffer Request'
    UNION ALL
    SELECT s.ts, s.dur, COALESCE(t.name, 'thread ' || COALESCE(t.tid, '?')),
      COALESCE(t.name, 'スレッド ' || COALESCE(t.tid, '?')),
      s.name || ' after the last step: waits for GPU work still queued',
      '最後のステップの後の ' || s.name || ': キューに残る GPU の仕事を待つ',
      'closing synchronisation', '最後の同期'
    FROM slice AS s
    LEFT JOIN thread_track AS tt ON tt.id = s.track_id
    LEFT JOIN thread AS t USING (utid)
    WHERE s.name GLOB '*DeviceSynchronize' AND s.depth = 0
      AND s.ts >= (SELECT end_ts FROM last_step)
    UNION ALL
    -- The one definition of a cold first step (guide.windows), the trust gate's too.
    SELECT w.ts, w.dur, w.location, w.location_ja,
      'ProfilerStep#' || c.step || ': ' || printf('%.1f', 1.0 * c.dur / c.warm_median_ns)
        || '× the median of the later steps',
      'ProfilerStep#' || c.step || ': 後のステップの中央値の '
        || printf('%.1f', 1.0 * c.dur / c.warm_median_ns) || ' 倍',
      'cold first step', 'コールドな最初のステップ'
    FROM guide_windows_cold_step AS c
    JOIN guide_windows_loop AS w USING (window_id)
  )
-- The closing synchronisation's time is the code's GPU work still running, not a profiler cost.
SELECT ts, dur, location, location_ja, what, what_ja,
  IIF(kind = 'closing synchronisation', 0, dur) AS cost_ns, kind, kind_ja
FROM marks
ORDER BY cost_ns DESC, ts, location
