-- id: host-device-copies
-- title: Copies between host and device inside the step loop
-- title_ja: ステップのループ内のホスト・デバイス間コピー
-- severity: warning
-- param: copy_pct_min = 1  Reported when the copies take at least this share (%) of the loop's time...
-- param_ja: copy_pct_min  コピーがループの時間のこの割合（%）以上を占めるとき報告します……
-- param: copy_ns_min = 20000  ...(the share counting only when the copies take at least this long (ns) in all)...
-- param_ja: copy_ns_min  ……（割合は、コピーの合計がこの時間（ns）以上のときだけ数えます）……
-- param: pageable_ns_min = 50000  ...or when the copies from or to pageable memory take at least this long (ns) in all.
-- param_ja: pageable_ns_min  ……または、ページング可能メモリとの間のコピーが合計でこの時間（ns）
--   以上かかったとき報告します。
-- needs: gpu
-- relies: kernels, execution
-- scope: loop
-- guide: part-5/02-optimizer-and-data.md#copies-to-the-gpu
-- breakdown: kind
-- columns: copy_ns=Copy time, kind=Kind of copy, pageable=From or to pageable memory, copied_bytes=Bytes, loop_ns=Loop time, copy_pct=Share of the loop
-- columns_ja: copy_ns=コピー時間, kind=コピーの種類, pageable=ページング可能メモリ, copied_bytes=バイト数, loop_ns=ループの時間, copy_pct=ループに占める割合
-- seen: Host↔device copies inside the loop: {count}, {sum(copy_ns)} of copy time, of which
--   {sum(cost_ns)} with no kernel running beside it on the same GPU ({first(copy_pct)} of the
--   loop's {first(loop_ns)}); from or to pageable memory (the CPU waits for those, so they count
--   whole): {sum(pageable)}.
-- seen_ja: ループ内のホスト↔デバイス間コピーが {count} 回あり、コピー時間は {sum(copy_ns)}、そのうち同じ
--   GPU でカーネルが並んで動いていなかった時間は {sum(cost_ns)} です（ループ全体 {first(loop_ns)} の
--   {first(copy_pct)}）。ページング可能メモリとの間のコピー（CPU がその完了を待つため、全体を数えます）は
--   {sum(pageable)} 回です。
-- why: A copy from pageable (ordinary) host memory goes through a staging buffer of the
--   driver's, and PyTorch waits for it (`cudaStreamSynchronize` under `aten::copy_`), so the CPU
--   cannot run ahead while it lasts. A copy back to the host (DtoH) usually means the CPU is about
--   to wait for a value.
-- why_ja: ページング可能な（通常の）ホストメモリからのコピーはドライバのステージングバッファを経由
--   し、PyTorch はその完了を待ちます（`aten::copy_` の下の `cudaStreamSynchronize`）。そのため、
--   コピーの間 CPU は先に進めません。ホストへ戻すコピー（DtoH）は、たいてい CPU
--   がこれから値を待つことを意味します。
-- try: Allocate host tensors pinned (`pin_memory=True` in the DataLoader, `tensor.pin_memory()`)
--   and copy with `.to(device, non_blocking=True)`; keep results on the GPU until they are
--   needed; move constant data to the GPU once, before the loop.
-- try_ja: ホスト側のテンソルはピン留めメモリに確保し（DataLoader の
--   `pin_memory=True`、`tensor.pin_memory()`）、`.to(device, non_blocking=True)`
--   でコピーしてください。結果は必要になるまで GPU に置いておき、定数データはループの前に一度だけ
--   GPU に移します。
-- after: The copies' names read `Pinned -> Device`, no `cudaStreamSynchronize` follows them in
--   `aten::copy_`, and they overlap kernels on another stream or hide behind them.
-- after_ja: コピーの名前が `Pinned -> Device` になり、`aten::copy_` の中でその後に
--   `cudaStreamSynchronize` が続かなくなり、コピーは別のストリームのカーネルと重なるか、
--   その陰に隠れます。
-- false-positives: The one input batch a training or inference step must bring in; a small
--   read-back of a loss for logging every N steps.
-- false-positives_ja: 学習や推論のステップが必ず取り込む入力バッチ 1 つ分。ログのために N
--   ステップごとに損失を少し読み戻す場合。
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  loop AS (SELECT SUM(dur) AS loop_ns FROM guide_windows_real_loop),
  in_loop AS MATERIALIZED (
    SELECT g.*, g.name GLOB '*Pageable*' AS is_pageable
    FROM guide_kineto_gpu_activity AS g
    WHERE g.category = 'gpu_memcpy'
      AND (g.name GLOB '*HtoD*' OR g.name GLOB '*DtoH*')
      AND EXISTS (
        SELECT 1 FROM guide_windows_real_loop AS w WHERE g.ts >= w.ts AND g.ts < w.ts + w.dur
      )
  ),
  -- What a copy costs: a pinned (async) copy that kernels on the same GPU run beside costs only
  -- the part none covers (the overlaps summed, at most its length); a pageable one, whole, since
  -- the CPU waits for it.
  -- The overlaps are summed by one sweep per GPU rather than a search per copy: the kernel time
  -- before a point t, G(t) = sum over the kernels started before t of (t - start) less the same
  -- over those ended before t, is t times the kernels running less a running sum of their
  -- starts and ends; a copy's summed overlap is G(end) - G(start). Times count from the trace's
  -- start, so that the products stay exact integers.
  origin AS (SELECT start_ts AS ts FROM trace_bounds),
  -- Whether the copies can be reported at all (the finding's condition below, with each copy
  -- costing its whole length, which no overlap makes longer while no duration runs backwards):
  -- the kernels beside them are read only then.
  worth AS MATERIALIZED (
    SELECT
      (
        100.0 * SUM(dur) / (SELECT loop_ns FROM loop) >= {{copy_pct_min}}
        AND SUM(dur) >= {{copy_ns_min}}
      )
      OR SUM(IIF(is_pageable, dur, 0)) >= {{pageable_ns_min}}
      OR MIN(dur) < 0
      OR EXISTS (SELECT 1 FROM guide_kineto_gpu_activity WHERE category = 'kernel' AND dur < 0)
      AS yes
    FROM in_loop
  ),
  pinned AS MATERIALIZED (
    SELECT ROW_NUMBER() OVER () AS point_id, c.id, c.device, c.ts, c.dur
    FROM in_loop AS c
    WHERE NOT c.is_pageable AND c.dur >= 0 AND (SELECT yes FROM worth)
  ),
  -- Kernels that run backwards in time (a negative duration) do not fit the sweep: each is
  -- compared with each copy instead (none in any trace seen; nor such copies, below).
  odd AS MATERIALIZED (
    SELECT ts, dur, device FROM guide_kineto_gpu_activity
    WHERE category = 'kernel' AND dur < 0 AND EXISTS (SELECT 1 FROM pinned)
  ),
  kernel_point AS (
    SELECT k.device, k.ts - o.ts AS at, 1 AS running, k.ts - o.ts AS since, NULL AS point_id,
      0 AS sign
    FROM guide_kineto_gpu_activity AS k, origin AS o
    WHERE k.category = 'kernel' AND k.dur >= 0
      AND k.device IN (SELECT device FROM pinned)
    UNION ALL
    SELECT k.device, k.ts + k.dur - o.ts, -1, -(k.ts + k.dur - o.ts), NULL, 0
    FROM guide_kineto_gpu_activity AS k, origin AS o
    WHERE k.category = 'kernel' AND k.dur >= 0
      AND k.device IN (SELECT device FROM pinned)
    UNION ALL
    SELECT p.device, p.ts - o.ts, 0, 0, p.point_id, -1 FROM pinned AS p, origin AS o
    UNION ALL
    SELECT p.device, p.ts + p.dur - o.ts, 0, 0, p.point_id, 1 FROM pinned AS p, origin AS o
  ),
  kernel_time AS MATERIALIZED (
    SELECT point_id, SUM(sign * (at * running - since)) AS overlap_ns
    FROM (
      SELECT point_id, sign, at,
        SUM(running) OVER sweep AS running,
        SUM(since) OVER sweep AS since
      FROM kernel_point
      WINDOW sweep AS (PARTITION BY device ORDER BY at ROWS UNBOUNDED PRECEDING)
    )
    WHERE point_id IS NOT NULL
    GROUP BY point_id
  ),
  overlap AS MATERIALIZED (
    SELECT p.id, t.overlap_ns + COALESCE((
      SELECT SUM(MIN(k.ts + k.dur, p.ts + p.dur) - MAX(k.ts, p.ts))
      FROM odd AS k
      WHERE k.device = p.device AND k.ts < p.ts + p.dur AND k.ts + k.dur > p.ts
    ), 0) AS overlap_ns
    FROM pinned AS p
    JOIN kernel_time AS t USING (point_id)
    UNION ALL
    -- A copy that runs backwards in time: compared with each kernel of its GPU.
    SELECT c.id, (
      SELECT SUM(MIN(k.ts + k.dur, c.ts + c.dur) - MAX(k.ts, c.ts))
      FROM guide_kineto_gpu_activity AS k
      WHERE k.category = 'kernel' AND k.device = c.device
        AND k.ts < c.ts + c.dur AND k.ts + k.dur > c.ts
    )
    FROM in_loop AS c
    WHERE NOT c.is_pageable AND c.dur < 0
  ),
  copy AS MATERIALIZED (
    SELECT c.*, IIF(c.is_pageable, c.dur, c.dur - MIN(c.dur, COALESCE(o.overlap_ns, 0)))
      AS exposed_ns
    FROM in_loop AS c
    LEFT JOIN overlap AS o USING (id)
  ),
  total AS (
    SELECT SUM(exposed_ns) AS copy_ns, SUM(IIF(is_pageable, dur, 0)) AS pageable_ns
    FROM copy
  )
SELECT
  copy.ts,
  copy.dur,
  'GPU ' || copy.device || ', stream ' || copy.stream AS location,
  'GPU ' || copy.device || '、ストリーム ' || copy.stream AS location_ja,
  copy.name || IIF(
    EXTRACT_ARG(copy.arg_set_id, 'args.bytes') IS NULL, '',
    ', ' || EXTRACT_ARG(copy.arg_set_id, 'args.bytes') || ' bytes'
  ) AS what,
  copy.name || IIF(
    EXTRACT_ARG(copy.arg_set_id, 'args.bytes') IS NULL, '',
    '、' || EXTRACT_ARG(copy.arg_set_id, 'args.bytes') || ' バイト'
  ) AS what_ja,
  copy.exposed_ns AS cost_ns,
  copy.dur AS copy_ns,
  IIF(copy.name GLOB '*HtoD*', 'host to device', 'device to host')
    || IIF(copy.is_pageable, ', pageable', ', pinned') AS kind,
  IIF(copy.name GLOB '*HtoD*', 'ホストからデバイス', 'デバイスからホスト')
    || IIF(copy.is_pageable, '、ページング可能', '、ピン留め') AS kind_ja,
  copy.is_pageable AS pageable,
  EXTRACT_ARG(copy.arg_set_id, 'args.bytes') AS copied_bytes,
  loop.loop_ns,
  100.0 * total.copy_ns / loop.loop_ns AS copy_pct
FROM copy, loop, total
WHERE loop.loop_ns > 0
  AND (
    (100.0 * total.copy_ns / loop.loop_ns >= {{copy_pct_min}} AND total.copy_ns >= {{copy_ns_min}})
    OR total.pageable_ns >= {{pageable_ns_min}}
  )
ORDER BY copy.exposed_ns DESC, copy.dur DESC, copy.ts, location
