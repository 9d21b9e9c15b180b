-- id: zero-grad-zeroing
-- title: zero_grad that writes zeros instead of dropping the gradients
-- severity: warning
-- guide: part-5/02-optimizer-and-data.md#zero_grad
-- seen: `zero_grad` calls that wrote zeros into the gradients: {count}, with
--   {sum(zeroing_ops)} zeroing operators and {sum(cost_ns)} of CPU time.
-- why: `zero_grad(set_to_none=False)` fills every gradient with zeros: a memset or fill kernel
--   per parameter (or a `_foreach_zero_`), and memory traffic for the whole gradient size. With
--   `set_to_none=True` (the default since PyTorch 2.0) the gradients are dropped and the next
--   backward writes them fresh.
-- try: `optimizer.zero_grad()` (or `set_to_none=True`), unless code reads `.grad` between steps
--   and needs zeros there.
-- after: `Optimizer.zero_grad#…` holds no `aten::zero_`, `aten::fill_` or `aten::_foreach_zero_`,
--   and the GPU row has no memsets at that moment.
-- false-positives: Code that writes into `.grad` itself (in place) and needs zeros there.
--   Gradient accumulation alone does not: backward writes a fresh gradient into a None `.grad`.
WITH
  zg AS MATERIALIZED (
    SELECT s.id, s.ts, s.dur, s.name, s.track_id
    FROM slice AS s
    WHERE s.name GLOB 'Optimizer.zero_grad#*' AND s.category IS NOT 'gpu_user_annotation'
  ),
  inside AS (
    SELECT z.id, COUNT(*) AS zeroing_ops
    FROM zg AS z
    JOIN descendant_slice(z.id) AS d
    WHERE d.category = 'cpu_op'
      AND d.name IN ('aten::zero_', 'aten::fill_', 'aten::_foreach_zero_')
    GROUP BY z.id
  )
SELECT
  z.ts,
  z.dur,
  COALESCE(t.name, 'thread ' || t.tid) AS location,
  z.name || ': ' || i.zeroing_ops || ' zeroing operators' AS what,
  z.dur AS cost_ns,
  i.zeroing_ops
FROM zg AS z
JOIN inside AS i USING (id)
LEFT JOIN thread_track AS tt ON tt.id = z.track_id
LEFT JOIN thread AS t USING (utid)
ORDER BY z.dur DESC
