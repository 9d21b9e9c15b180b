-- What the optimizer step and zero_grad call, per training step
-- output: table
-- columns: phase=Phase, name=Operator (called by the phase's own code), calls_per_step=Calls per step, cpu_ns=CPU time per step, kernels=Kernels per step, kernel_name=Longest kernel it launched
-- question_ja: オプティマイザのステップと zero_grad が学習ステップあたりに呼ぶもの
-- columns_ja: phase=フェーズ, name=演算子（フェーズ自身のコードが呼ぶもの）, calls_per_step=ステップあたりの呼び出し回数, cpu_ns=ステップあたりの CPU 時間, kernels=ステップあたりのカーネル数, kernel_name=起動した最長のカーネル
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.train;

WITH
  steps AS (SELECT COUNT(*) AS n FROM guide_train_step),
  top AS MATERIALIZED (
    SELECT p.phase, o.id, o.name, o.dur, o.ts
    FROM guide_train_phase_op AS o
    JOIN guide_train_phase AS p ON p.id = o.phase_id
    WHERE p.phase IN ('optimizer', 'zero_grad') AND o.level = 1
  ),
  -- The kernels each top-level operator launched, from anywhere below it: the operator is the
  -- launch call's ancestor (a walk up from each launch, not a search of every operator).
  launched AS MATERIALIZED (
    SELECT
      (SELECT a.id FROM ancestor_slice(g.launch_id) AS a WHERE a.id IN (SELECT id FROM top))
        AS id,
      g.name,
      g.dur
    FROM guide_train_phase_gpu AS g
    JOIN guide_train_phase AS p ON p.id = g.phase_id
    WHERE p.phase IN ('optimizer', 'zero_grad') AND g.category = 'kernel'
  ),
  per_op AS (
    SELECT top.phase, top.name, COUNT(l.id) AS kernels, MAX(l.dur) AS longest_ns
    FROM top
    LEFT JOIN launched AS l ON l.id = top.id
    GROUP BY top.phase, top.name
  ),
  longest AS (
    SELECT top.phase, top.name, l.name AS kernel_name,
      ROW_NUMBER() OVER (PARTITION BY top.phase, top.name ORDER BY l.dur DESC, l.name) AS rank
    FROM top
    JOIN launched AS l ON l.id = top.id
  )
SELECT
  top.phase,
  top.name,
  COUNT(*) * 1.0 / steps.n AS calls_per_step,
  CAST(SUM(top.dur) / steps.n AS INT) AS cpu_ns,
  IIF(traced.yes, per_op.kernels * 1.0 / steps.n, NULL) AS kernels,
  longest.kernel_name
FROM top
CROSS JOIN steps
CROSS JOIN (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS yes) AS traced
JOIN per_op USING (phase, name)
LEFT JOIN longest ON longest.phase = top.phase AND longest.name = top.name AND longest.rank = 1
GROUP BY top.phase, top.name
ORDER BY guide_train_phase_order(top.phase), calls_per_step DESC, top.name;
