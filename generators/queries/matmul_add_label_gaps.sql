-- Inside the matmul_add label of each step: how much time falls between its operators, and where is the longest stretch with no operator running?
-- output: table
-- columns: step=Step, label_ns=Label width, label_self_ns=Label self time, first_op_delay_ns=Label start to first op, longest_gap_ns=Longest stretch with no op, gap_after=After, gap_before=Before
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  label AS (
    -- The record_function() region directly inside each step.
    SELECT st.step, l.id, l.ts, l.dur
    FROM guide_kineto_profiler_step AS st
    JOIN guide_kineto_slice AS l ON l.parent_id = st.id AND l.category = 'user_annotation'
  ),
  child AS (
    -- The label's direct children, each with the end of the one before it.
    SELECT
      label.step,
      c.name,
      c.ts,
      c.dur,
      LAG(c.ts + c.dur) OVER (PARTITION BY label.step ORDER BY c.ts) AS prev_end,
      LAG(c.name) OVER (PARTITION BY label.step ORDER BY c.ts) AS prev_name
    FROM label
    JOIN guide_kineto_slice AS c ON c.parent_id = label.id
  ),
  gap AS (
    -- Every stretch inside the label with no child running: before the first child, between
    -- two children, and after the last one.
    SELECT
      child.step,
      child.ts - COALESCE(child.prev_end, label.ts) AS gap_ns,
      COALESCE(child.prev_name, 'label start') AS gap_after,
      child.name AS gap_before
    FROM child
    JOIN label USING (step)
    UNION ALL
    SELECT
      label.step,
      label.ts + label.dur - MAX(child.ts + child.dur),
      (SELECT c2.name FROM child AS c2 WHERE c2.step = label.step ORDER BY c2.ts DESC LIMIT 1),
      'label end'
    FROM label
    JOIN child USING (step)
    GROUP BY label.step
  ),
  ranked AS (
    SELECT gap.*, ROW_NUMBER() OVER (PARTITION BY step ORDER BY gap_ns DESC) AS rn FROM gap
  )
SELECT
  label.step,
  label.dur AS label_ns,
  label.dur - COALESCE((SELECT SUM(c.dur) FROM child AS c WHERE c.step = label.step), 0)
    AS label_self_ns,
  (SELECT MIN(c.ts) FROM child AS c WHERE c.step = label.step) - label.ts AS first_op_delay_ns,
  r.gap_ns AS longest_gap_ns,
  r.gap_after,
  r.gap_before
FROM label
LEFT JOIN ranked AS r ON r.step = label.step AND r.rn = 1
ORDER BY label.step;
