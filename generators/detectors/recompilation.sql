-- id: recompilation
-- title: Recompiled torch.compile frames
-- severity: warning
-- guide: part-1/05-torch-compile.md#new-rows-in-the-cpu-lane
-- breakdown: frame
-- seen: Calls into a frame that torch.compile had compiled again: {count} ({sum(cost_ns)}
--   inside those regions).
-- why: `Torch-Compiled Region: F/C` names frame F and its compilation C: C above 0 means the
--   frame's guards failed (a new shape, dtype, or Python value) and Dynamo compiled it again.
--   Each recompilation costs seconds of compile time, and past the cache limit Dynamo falls
--   back to eager.
-- try: Run with `TORCH_LOGS=recompiles` to see which guard failed; mark changing sizes dynamic
--   (`torch._dynamo.mark_dynamic`, `dynamic=True`), pad inputs to a few fixed shapes, and keep
--   Python scalars that change out of the compiled function's arguments.
-- after: Only `/0` regions: one compilation per frame, reused on every step.
-- false-positives: A deliberate second shape (a last, smaller batch) compiled once and then
--   reused.
INCLUDE PERFETTO MODULE guide.windows;

WITH region AS MATERIALIZED (
  SELECT
    s.id, s.ts, s.dur, s.name, s.track_id,
    regexp_extract(s.name, ': ([0-9]+)/[0-9]+') AS frame,
    CAST(regexp_extract(s.name, '/([0-9]+)$') AS INT) AS compile_id
  FROM slice AS s
  WHERE s.name GLOB 'Torch-Compiled Region: *'
)
SELECT
  r.ts,
  r.dur,
  COALESCE(t.name, 'thread ' || t.tid) AS location,
  r.name AS what,
  r.dur AS cost_ns,
  'frame ' || r.frame AS frame,
  r.compile_id
FROM region AS r
LEFT JOIN thread_track AS tt ON tt.id = r.track_id
LEFT JOIN thread AS t USING (utid)
WHERE r.compile_id > 0
ORDER BY r.ts
