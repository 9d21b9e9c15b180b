-- One training step, phase by phase: CPU time, share of the step, operators, GPU work launched
-- output: table
-- columns: phase=Phase, calls_per_step=Calls per step, cpu_ns=CPU time per step, step_pct=Share of the step (CPU), cpu_ops=Operators per step, kernels=Kernels per step, copies=Copies per step, gpu_ns=GPU time per step, gpu_pct=Share of the phases' GPU time
-- question_ja: 学習ステップ 1 回をフェーズごとに: CPU 時間、ステップに占める割合、演算子、起動した GPU の処理
-- columns_ja: phase=フェーズ, calls_per_step=ステップあたりの呼び出し回数, cpu_ns=ステップあたりの CPU 時間, step_pct=ステップに占める割合（CPU）, cpu_ops=ステップあたりの演算子数, kernels=ステップあたりのカーネル数, copies=ステップあたりのコピー数, gpu_ns=ステップあたりの GPU 時間, gpu_pct=フェーズの GPU 時間に占める割合
-- shown: phase, cpu_ns, step_pct, cpu_ops, kernels, gpu_ns, gpu_pct
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.train;

WITH
  steps AS (SELECT COUNT(*) AS n, SUM(dur) AS step_ns FROM guide_train_step),
  -- Only the outermost phases: a label nested in another would count twice. (A derived phase,
  -- found_by other than 'label', is never nested: it is found only where no label marks it.)
  outermost AS (
    SELECT * FROM guide_train_phase_cost
    WHERE id NOT IN (
      SELECT inner_p.id FROM guide_train_phase AS inner_p
      JOIN guide_train_phase AS outer_p
        ON outer_p.track_id = inner_p.track_id AND outer_p.depth < inner_p.depth
        AND inner_p.ts >= outer_p.ts AND inner_p.ts < outer_p.ts + outer_p.dur
      WHERE inner_p.found_by = 'label' AND outer_p.found_by = 'label'
    )
  ),
  phased AS (
    SELECT
      phase,
      COUNT(*) AS calls,
      SUM(dur) AS cpu_ns,
      SUM(cpu_ops) AS cpu_ops,
      SUM(kernels) AS kernels,
      SUM(copies) AS copies,
      SUM(gpu_ns) AS gpu_ns
    FROM outermost
    GROUP BY phase
  ),
  -- The phases every training trace can show (PyTorch's own annotations, the autograd engine's
  -- slices, the work before the backward): one that this trace does not show gets a row of its
  -- own, with no calls and no times, rather than none (its time is not in the rest of the step
  -- either: there is none to count).
  missing AS (
    SELECT
      want.phase,
      0 AS calls,
      NULL AS cpu_ns,
      NULL AS cpu_ops,
      NULL AS kernels,
      NULL AS copies,
      NULL AS gpu_ns
    FROM (
      SELECT 'data' AS phase UNION ALL SELECT 'forward' UNION ALL SELECT 'backward'
      UNION ALL SELECT 'optimizer' UNION ALL SELECT 'zero_grad'
    ) AS want
    WHERE want.phase NOT IN (SELECT phase FROM phased)
  ),
  -- Each step's time covered by a phase: a union, so that phases that overlap (a derived one
  -- and a label of the loop's own) count once.
  covered AS (
    SELECT SUM(busy_ns) AS ns FROM guide_windows_union!(
      (SELECT step AS group_id, ts, dur FROM outermost)
    )
  ),
  rest AS (
    -- The step's time outside every phase: the loop's own Python, the profiler's step marker.
    SELECT
      'rest of the step' AS phase,
      NULL AS calls,
      (SELECT step_ns FROM steps) - (SELECT COALESCE(ns, 0) FROM covered) AS cpu_ns,
      NULL AS cpu_ops,
      NULL AS kernels,
      NULL AS copies,
      NULL AS gpu_ns
  ),
  -- A last row, only where the derived split cannot be trusted (guide_train_step_warning):
  -- which steps, and why. The numbers above stay as found; this row says not to believe them.
  warned AS (
    SELECT
      'WARNING: forward/backward split unreliable in ' || COUNT(DISTINCT step) || ' of '
        || (SELECT n FROM steps) || ' steps (' || GROUP_CONCAT(DISTINCT warning) || ')' AS phase,
      NULL AS calls,
      NULL AS cpu_ns,
      NULL AS cpu_ops,
      NULL AS kernels,
      NULL AS copies,
      NULL AS gpu_ns
    FROM guide_train_step_warning
    HAVING COUNT(*) > 0
  ),
  all_rows AS (
    SELECT * FROM phased UNION ALL SELECT * FROM missing UNION ALL SELECT * FROM rest
    UNION ALL SELECT * FROM warned
  )
SELECT
  a.phase,
  a.calls * 1.0 / steps.n AS calls_per_step,
  CAST(a.cpu_ns / steps.n AS INT) AS cpu_ns,
  ROUND(100.0 * a.cpu_ns / steps.step_ns, 1) AS step_pct,
  a.cpu_ops * 1.0 / steps.n AS cpu_ops,
  a.kernels * 1.0 / steps.n AS kernels,
  a.copies * 1.0 / steps.n AS copies,
  CAST(a.gpu_ns / steps.n AS INT) AS gpu_ns,
  ROUND(100.0 * a.gpu_ns / (SELECT SUM(gpu_ns) FROM phased), 1) AS gpu_pct
FROM all_rows AS a, steps
ORDER BY guide_train_phase_order(a.phase), a.phase GLOB 'WARNING:*';
