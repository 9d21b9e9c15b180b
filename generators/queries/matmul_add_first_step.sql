-- Where does the first active step's extra width go: the delay before aten::matmul, or inside aten::mm?
-- output: values
-- question_ja: 最初のアクティブなステップの余分な幅はどこから来るか（aten::matmul の前の遅れか、aten::mm の内側か）
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  label AS (SELECT step, id AS label_id, track_id, ts, dur FROM guide_kineto_step_label),
  per_step AS (
    SELECT
      label.step,
      label.dur AS label_ns,
      -- From the label's start to its first operator (aten::matmul).
      (SELECT MIN(c.ts) FROM slice AS c WHERE c.parent_id = label.label_id) - label.ts
        AS first_op_delay_ns,
      -- The GEMM operator's own time (its duration minus its launch call's).
      (
        SELECT SUM(m.dur - COALESCE((SELECT SUM(k.dur) FROM slice AS k WHERE k.parent_id = m.id), 0))
        FROM guide_kineto_slice AS m
        WHERE m.track_id = label.track_id AND m.name = 'aten::mm'
          AND m.ts >= label.ts AND m.ts < label.ts + label.dur
      ) AS gemm_self_ns,
      ROW_NUMBER() OVER (ORDER BY label.step) AS rn
    FROM label
  ),
  first AS (SELECT * FROM per_step WHERE rn = 1),
  -- The widest later step: what the first step is compared with.
  later AS (SELECT * FROM per_step WHERE rn > 1 ORDER BY label_ns DESC LIMIT 1)
SELECT
  (SELECT first_op_delay_ns FROM first) AS first_op_delay_ns,
  (SELECT MAX(first_op_delay_ns) FROM per_step WHERE rn > 1) AS later_op_delay_max_ns,
  (SELECT first.label_ns - later.label_ns FROM first, later) AS extra_width_ns,
  (SELECT first.first_op_delay_ns - later.first_op_delay_ns FROM first, later) AS extra_delay_ns,
  (SELECT first.gemm_self_ns - later.gemm_self_ns FROM first, later) AS extra_gemm_self_ns,
  (SELECT 100.0 * (first.gemm_self_ns - later.gemm_self_ns) / (first.label_ns - later.label_ns)
    FROM first, later) AS extra_gemm_self_pct,
  (SELECT 100.0 * (first.first_op_delay_ns - later.first_op_delay_ns)
      / (first.label_ns - later.label_ns)
    FROM first, later) AS extra_delay_pct;
