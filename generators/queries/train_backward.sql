-- The backward against the forward: GEMM work, where it runs, and the links between them
-- output: values
-- question_ja: 逆伝播と順伝播の比較: GEMM の処理、その実行場所、両者を結ぶリンク
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.train;

WITH
  steps AS (SELECT COUNT(*) AS n FROM guide_train_step),
  gemm AS (
    SELECT
      SUM(IIF(phase = 'forward', flops, 0)) AS fwd_flops,
      SUM(IIF(phase = 'backward', flops, 0)) AS bwd_flops,
      SUM(phase = 'forward') AS fwd_gemms,
      SUM(phase = 'backward') AS bwd_gemms
    FROM guide_train_gemm
  ),
  -- CPU time and operators of the two phases, and the CPU time of their GEMMs.
  -- On a GPU trace also the GPU time of the work each phase launched (NULL on a CPU trace).
  phase AS (
    SELECT
      SUM(IIF(phase = 'forward', dur, 0)) AS fwd_ns,
      SUM(IIF(phase = 'backward', dur, 0)) AS bwd_ns,
      SUM(IIF(phase = 'forward', cpu_ops, 0)) AS fwd_ops,
      SUM(IIF(phase = 'backward', cpu_ops, 0)) AS bwd_ops,
      SUM(IIF(phase = 'forward', gpu_ns, 0)) AS fwd_gpu_ns,
      SUM(IIF(phase = 'backward', gpu_ns, 0)) AS bwd_gpu_ns
    FROM guide_train_phase_cost
  ),
  -- The GEMMs' CPU time, and on a GPU trace the time of the kernels they launched.
  gemm_time AS (
    SELECT
      SUM(IIF(phase = 'forward', dur, 0)) AS fwd_ns,
      SUM(IIF(phase = 'backward', dur, 0)) AS bwd_ns,
      SUM(IIF(phase = 'forward', kernel_dur, 0)) AS fwd_gpu_ns,
      SUM(IIF(phase = 'backward', kernel_dur, 0)) AS bwd_gpu_ns
    FROM guide_train_gemm
  ),
  traced AS (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS yes),
  nodes AS (
    SELECT s.track_id, s.name
    FROM guide_kineto_slice AS s
    WHERE s.name GLOB 'autograd::engine::evaluate_function: *'
  ),
  -- The steps' widths one by one: the page gives the shortest, the median and the longest,
  -- since a mean hides a step unlike the others.
  step_ranked AS (
    SELECT dur, ROW_NUMBER() OVER (ORDER BY dur) AS k, COUNT(*) OVER () AS n
    FROM guide_train_step
  ),
  -- The middle profiled step, for the "Open in Perfetto" button.
  mid AS (
    SELECT ts, dur FROM guide_train_step ORDER BY step
    LIMIT 1 OFFSET (SELECT COUNT(*) / 2 FROM guide_train_step)
  ),
  links AS (
    SELECT
      COUNT(*) AS n,
      SUM(forward_track_id = backward_track_id) AS same_thread
    FROM guide_train_fwdbwd
  )
SELECT
  gemm.fwd_gemms * 1.0 / steps.n AS forward_gemms_per_step,
  gemm.bwd_gemms * 1.0 / steps.n AS backward_gemms_per_step,
  gemm.fwd_flops / steps.n AS forward_gemm_flops_per_step,
  gemm.bwd_flops / steps.n AS backward_gemm_flops_per_step,
  ROUND(gemm.bwd_flops * 1.0 / gemm.fwd_flops, 3) AS backward_over_forward_flops,
  phase.fwd_ops * 1.0 / steps.n AS forward_ops_per_step,
  phase.bwd_ops * 1.0 / steps.n AS backward_ops_per_step,
  ROUND(phase.bwd_ops * 1.0 / NULLIF(phase.fwd_ops, 0), 2) AS backward_over_forward_ops,
  CAST(phase.fwd_ns / steps.n AS INT) AS forward_cpu_ns,
  CAST(phase.bwd_ns / steps.n AS INT) AS backward_cpu_ns,
  ROUND(phase.bwd_ns * 1.0 / NULLIF(phase.fwd_ns, 0), 2) AS backward_over_forward_time,
  CAST(gemm_time.fwd_ns / steps.n AS INT) AS forward_gemm_cpu_ns,
  CAST(gemm_time.bwd_ns / steps.n AS INT) AS backward_gemm_cpu_ns,
  ROUND(gemm_time.bwd_ns * 1.0 / NULLIF(gemm_time.fwd_ns, 0), 2) AS backward_over_forward_gemm_time,
  IIF(traced.yes, CAST(phase.fwd_gpu_ns / steps.n AS INT), NULL) AS forward_gpu_ns,
  IIF(traced.yes, CAST(phase.bwd_gpu_ns / steps.n AS INT), NULL) AS backward_gpu_ns,
  IIF(traced.yes, ROUND(phase.bwd_gpu_ns * 1.0 / NULLIF(phase.fwd_gpu_ns, 0), 2), NULL)
    AS backward_over_forward_gpu_time,
  IIF(traced.yes, CAST(gemm_time.fwd_gpu_ns / steps.n AS INT), NULL) AS forward_gemm_gpu_ns,
  IIF(traced.yes, CAST(gemm_time.bwd_gpu_ns / steps.n AS INT), NULL) AS backward_gemm_gpu_ns,
  IIF(traced.yes, ROUND(gemm_time.bwd_gpu_ns * 1.0 / NULLIF(gemm_time.fwd_gpu_ns, 0), 2), NULL)
    AS backward_over_forward_gemm_gpu_time,
  (SELECT COUNT(*) FROM nodes) * 1.0 / steps.n AS autograd_nodes_per_step,
  (SELECT COUNT(*) FROM nodes WHERE name GLOB '*AccumulateGrad') * 1.0 / steps.n
    AS accumulate_grad_per_step,
  -- Gradients added into an existing .grad: with zero_grad(set_to_none=False) every
  -- AccumulateGrad node adds its gradient to the zeroed one (an aten::add_); with
  -- set_to_none=True it stores the new gradient and adds nothing.
  (SELECT COUNT(*) FROM guide_kineto_slice AS s WHERE s.name = 'aten::add_'
    AND EXISTS (SELECT 1 FROM ancestor_slice(s.id) AS a
      WHERE a.name GLOB '*autograd::AccumulateGrad')) * 1.0 / steps.n
    AS accumulate_grad_adds_per_step,
  (SELECT COUNT(DISTINCT track_id) FROM nodes) AS backward_threads,
  (SELECT COUNT(*) FROM nodes
    WHERE track_id IN (SELECT track_id FROM guide_train_thread WHERE role = 'step')) = 0
    AS backward_on_own_thread,
  links.n * 1.0 / steps.n AS fwdbwd_links_per_step,
  links.n - links.same_thread AS fwdbwd_links_across_threads,
  (SELECT MIN(dur) FROM step_ranked) AS step_min_ns,
  (SELECT CAST(AVG(dur) AS INT) FROM step_ranked WHERE k IN ((n + 1) / 2, (n + 2) / 2))
    AS step_median_ns,
  (SELECT MAX(dur) FROM step_ranked) AS step_max_ns,
  mid.ts / 1e9 AS step_start_s,
  (mid.ts + mid.dur) / 1e9 AS step_end_s
FROM gemm, steps, links, mid, phase, gemm_time, traced;
