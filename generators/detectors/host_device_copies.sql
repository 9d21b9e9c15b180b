-- id: host-device-copies
-- title: Copies between host and device inside the step loop
-- severity: warning
-- param: copy_pct_min = 1  Reported when the copies take at least this share (%) of the loop's time...
-- param: pageable_ns_min = 50000  ...or when the copies from or to pageable memory take at least this long (ns) in all.
-- needs: gpu
-- guide: part-5/02-optimizer-and-data.md#copies-to-the-gpu
-- breakdown: kind
-- seen: Host↔device copies inside the loop: {count}, {sum(cost_ns)} of copy time
--   ({first(copy_pct)} of the loop's {first(loop_ns)}); from or to pageable memory:
--   {sum(pageable)}.
-- why: A copy from pageable (ordinary) host memory goes through a staging buffer of the
--   driver's, and PyTorch waits for it (`cudaStreamSynchronize` under `aten::copy_`), so the CPU
--   cannot run ahead while it lasts. A copy back to the host (DtoH) usually means the CPU is about
--   to wait for a value.
-- try: Allocate host tensors pinned (`pin_memory=True` in the DataLoader, `tensor.pin_memory()`)
--   and copy with `.to(device, non_blocking=True)`; keep results on the GPU until they are
--   needed; move constant data to the GPU once, before the loop.
-- after: The copies' names read `Pinned -> Device`, no `cudaStreamSynchronize` follows them in
--   `aten::copy_`, and they overlap kernels on another stream or hide behind them.
-- false-positives: The one input batch a training or inference step must bring in; a small
--   read-back of a loss for logging every N steps.
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  loop AS (SELECT SUM(dur) AS loop_ns FROM guide_windows_loop),
  copy AS (
    SELECT g.*
    FROM guide_kineto_gpu_activity AS g
    WHERE g.category = 'gpu_memcpy'
      AND (g.name GLOB '*HtoD*' OR g.name GLOB '*DtoH*')
      AND EXISTS (
        SELECT 1 FROM guide_windows_loop AS w WHERE g.ts >= w.ts AND g.ts < w.ts + w.dur
      )
  ),
  total AS (
    SELECT SUM(dur) AS copy_ns, SUM(IIF(name GLOB '*Pageable*', dur, 0)) AS pageable_ns
    FROM copy
  )
SELECT
  copy.ts,
  copy.dur,
  'GPU ' || copy.device || ', stream ' || copy.stream AS location,
  copy.name || IIF(
    EXTRACT_ARG(copy.arg_set_id, 'args.bytes') IS NULL, '',
    ', ' || EXTRACT_ARG(copy.arg_set_id, 'args.bytes') || ' bytes'
  ) AS what,
  copy.dur AS cost_ns,
  IIF(copy.name GLOB '*HtoD*', 'host to device', 'device to host')
    || IIF(copy.name GLOB '*Pageable*', ', pageable', ', pinned') AS kind,
  copy.name GLOB '*Pageable*' AS pageable,
  EXTRACT_ARG(copy.arg_set_id, 'args.bytes') AS copied_bytes,
  loop.loop_ns,
  100.0 * total.copy_ns / loop.loop_ns AS copy_pct
FROM copy, loop, total
WHERE loop.loop_ns > 0
  AND (
    100.0 * total.copy_ns / loop.loop_ns >= {{copy_pct_min}}
    OR total.pageable_ns >= {{pageable_ns_min}}
  )
ORDER BY copy.dur DESC
