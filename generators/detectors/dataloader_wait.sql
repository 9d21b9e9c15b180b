-- id: dataloader-wait
-- title: Steps that wait for the next batch
-- severity: warning
-- param: data_pct_min = 10  Reported when fetching batches takes at least this share (%) of the step loop.
-- needs: steps
-- guide: part-5/02-optimizer-and-data.md#the-data
-- seen: Fetching the next batch took {sum(cost_ns)} of the loop's {first(loop_ns)}
--   ({first(data_pct)}; calls: {count}).
-- why: `enumerate(DataLoader)#…__next__` is the training loop waiting for its next batch. With
--   `num_workers=0` the batch is loaded and collated on the training thread: the CPU launches no
--   work meanwhile, so once the GPU has drained what was queued it waits too.
-- try: `DataLoader(..., num_workers=N, pin_memory=True, persistent_workers=True)` and a
--   `prefetch_factor` that keeps batches ready; move decoding and augmentation off the
--   training thread.
-- after: `__next__` shrinks to taking a ready batch from a queue (`_MultiProcessingDataLoaderIter`),
--   a small share of each step.
-- false-positives: The first step's fetch, which starts the workers; a dataset that is fast
--   enough that the share is small in absolute terms.
INCLUDE PERFETTO MODULE guide.windows;

WITH
  loop AS (SELECT SUM(dur) AS loop_ns FROM guide_windows_loop WHERE step IS NOT NULL),
  fetch AS MATERIALIZED (
    SELECT s.id, s.ts, s.dur, s.name, s.track_id
    FROM slice AS s
    JOIN guide_windows_loop AS w ON s.ts >= w.ts AND s.ts < w.ts + w.dur AND w.step IS NOT NULL
    WHERE s.name GLOB 'enumerate(DataLoader)*'
  ),
  total AS (SELECT SUM(dur) AS fetch_ns FROM fetch)
SELECT
  f.ts,
  f.dur,
  COALESCE(t.name, 'thread ' || t.tid) AS location,
  f.name AS what,
  f.dur AS cost_ns,
  loop.loop_ns,
  100.0 * total.fetch_ns / loop.loop_ns AS data_pct
FROM fetch AS f
LEFT JOIN thread_track AS tt ON tt.id = f.track_id
LEFT JOIN thread AS t USING (utid), loop, total
WHERE loop.loop_ns > 0 AND 100.0 * total.fetch_ns / loop.loop_ns >= {{data_pct_min}}
ORDER BY f.dur DESC
