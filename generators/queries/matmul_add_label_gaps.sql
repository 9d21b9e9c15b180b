-- Inside the record_function label of each step: how much of it is self time, and where is the longest stretch with no operator running?
-- output: table
-- columns: step=Step, label_ns=Label width, label_self_ns=Label self time, gemm_self_ns=aten::mm self time, first_op_delay_ns=Label start to first op, longest_gap_ns=Longest stretch with no op, gap_after=Stretch from, gap_before=Stretch to
-- question_ja: 各ステップの record_function ラベルの内側で、自己時間はどれだけあり、演算子が動いていない最長の区間はどこか
-- columns_ja: step=ステップ, label_ns=ラベルの幅, label_self_ns=ラベルの自己時間, gemm_self_ns=aten::mm の自己時間, first_op_delay_ns=ラベル開始から最初の演算子まで, longest_gap_ns=演算子のない最長の区間, gap_after=区間の始点, gap_before=区間の終点
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  label AS (SELECT step, id AS label_id, track_id, ts, dur FROM guide_kineto_step_label),
  child AS (
    -- The label's direct children, each with the end of the one before it.
    SELECT
      label.label_id,
      c.name,
      c.ts,
      c.dur,
      LAG(c.ts + c.dur) OVER (PARTITION BY label.label_id ORDER BY c.ts) AS prev_end,
      LAG(c.name) OVER (PARTITION BY label.label_id ORDER BY c.ts) AS prev_name
    FROM label
    JOIN guide_kineto_slice AS c ON c.parent_id = label.label_id
  ),
  gap AS (
    -- Every stretch inside the label with no child running: before the first child, between
    -- two children, and after the last one.
    SELECT
      child.label_id,
      child.ts - COALESCE(child.prev_end, label.ts) AS gap_ns,
      COALESCE(child.prev_name, 'label start') AS gap_after,
      child.name AS gap_before
    FROM child
    JOIN label USING (label_id)
    UNION ALL
    SELECT
      label.label_id,
      label.ts + label.dur - MAX(child.ts + child.dur),
      (
        SELECT c2.name FROM child AS c2 WHERE c2.label_id = label.label_id
        ORDER BY c2.ts DESC LIMIT 1
      ),
      'label end'
    FROM label
    JOIN child USING (label_id)
    GROUP BY label.label_id
  ),
  ranked AS (
    SELECT gap.*, ROW_NUMBER() OVER (PARTITION BY label_id ORDER BY gap_ns DESC) AS rn FROM gap
  )
SELECT
  label.step,
  label.dur AS label_ns,
  label.dur - COALESCE((SELECT SUM(c.dur) FROM child AS c WHERE c.label_id = label.label_id), 0)
    AS label_self_ns,
  -- The GEMM operator's own time in the label (its duration minus its launch call's).
  (
    SELECT SUM(m.dur - COALESCE((SELECT SUM(k.dur) FROM slice AS k WHERE k.parent_id = m.id), 0))
    FROM guide_kineto_slice AS m
    WHERE m.track_id = label.track_id AND m.name = 'aten::mm'
      AND m.ts >= label.ts AND m.ts < label.ts + label.dur
  ) AS gemm_self_ns,
  (SELECT MIN(c.ts) FROM child AS c WHERE c.label_id = label.label_id) - label.ts
    AS first_op_delay_ns,
  r.gap_ns AS longest_gap_ns,
  r.gap_after,
  r.gap_before
FROM label
LEFT JOIN ranked AS r ON r.label_id = label.label_id AND r.rn = 1
ORDER BY label.step, label.ts;
