-- The optimizer step and zero_grad: operators, launches and time per training step
-- output: values
-- question_ja: オプティマイザのステップと zero_grad: 学習ステップあたりの演算子、起動、時間
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.train;

WITH
  steps AS (SELECT COUNT(*) AS n FROM guide_train_step),
  opt AS (SELECT * FROM guide_train_phase_cost WHERE phase = 'optimizer'),
  zero AS (SELECT * FROM guide_train_phase_cost WHERE phase = 'zero_grad'),
  opt_gpu AS (
    SELECT g.* FROM guide_train_phase_gpu AS g JOIN opt ON opt.id = g.phase_id
  ),
  zero_op AS (
    SELECT o.* FROM guide_train_phase_op AS o JOIN zero ON zero.id = o.phase_id
  ),
  zero_gpu AS (
    SELECT g.* FROM guide_train_phase_gpu AS g JOIN zero ON zero.id = g.phase_id
  ),
  -- Every kernel launch call of a phase, with its CPU duration: a launch that has to wait for
  -- a free slot in the GPU's queue takes longer than one that does not.
  launches AS (
    SELECT p.phase, r.dur
    FROM guide_train_phase_gpu AS g
    JOIN guide_train_phase AS p ON p.id = g.phase_id
    JOIN guide_kineto_slice AS r ON r.id = g.launch_id
    WHERE g.launch_name GLOB 'cudaLaunchKernel*'
  ),
  launch_avg AS (
    SELECT
      (SELECT AVG(dur) FROM launches WHERE phase = 'optimizer') AS opt,
      (SELECT AVG(dur) FROM launches WHERE phase = 'forward') AS fwd,
      (SELECT AVG(dur) FROM launches WHERE phase = 'backward') AS bwd,
      (SELECT COUNT(*) FROM launches WHERE phase = 'optimizer') AS opt_n
  ),
  -- The steps one by one: a mean over steps hides a step unlike the others (the first
  -- profiled one, here), so the page shows the shortest, the median and the longest.
  first_step AS (SELECT MIN(step) AS step FROM guide_train_step),
  step_ranked AS (
    SELECT dur, ROW_NUMBER() OVER (ORDER BY dur) AS k, COUNT(*) OVER () AS n
    FROM guide_train_step
  ),
  opt_ranked AS (
    SELECT dur, ROW_NUMBER() OVER (ORDER BY dur) AS k, COUNT(*) OVER () AS n FROM opt
  ),
  -- Each optimizer kernel against its launch call, per step: how long the call took, and how
  -- long after it returned the kernel started (the kernels queued ahead of it on the stream).
  opt_launch AS MATERIALIZED (
    SELECT
      opt.step,
      opt.ts AS phase_ts,
      r.dur AS call_ns,
      g.launch_name,
      g.ts AS kernel_ts,
      g.ts - (r.ts + r.dur) AS wait_ns,
      ROW_NUMBER() OVER (PARTITION BY opt.step ORDER BY g.ts - (r.ts + r.dur)) AS k,
      COUNT(*) OVER (PARTITION BY opt.step) AS n
    FROM opt
    JOIN guide_train_phase_gpu AS g ON g.phase_id = opt.id AND g.category = 'kernel'
    JOIN guide_kineto_slice AS r ON r.id = g.launch_id
  ),
  opt_step AS (
    SELECT
      step,
      step = (SELECT step FROM first_step) AS first,
      AVG(IIF(launch_name GLOB 'cudaLaunchKernel*', call_ns, NULL)) AS call_avg_ns,
      AVG(IIF(k IN ((n + 1) / 2, (n + 2) / 2), wait_ns, NULL)) AS wait_median_ns,
      MIN(kernel_ts) - MIN(phase_ts) AS first_kernel_ns
    FROM opt_launch
    GROUP BY step
  )
SELECT
  (SELECT substr(name, length('Optimizer.step#') + 1) FROM guide_train_phase
    WHERE phase = 'optimizer' LIMIT 1) AS optimizer,
  (SELECT COUNT(*) FROM guide_kineto_slice WHERE name GLOB '*autograd::AccumulateGrad'
    AND name GLOB 'autograd::engine::evaluate_function: *') * 1.0 / steps.n AS gradients_per_step,
  (SELECT CAST(SUM(dur) / steps.n AS INT) FROM opt) AS optimizer_cpu_ns,
  (SELECT SUM(cpu_ops) * 1.0 / steps.n FROM opt) AS optimizer_cpu_ops,
  (SELECT SUM(top_ops) * 1.0 / steps.n FROM opt) AS optimizer_top_ops,
  (SELECT SUM(kernels) * 1.0 / steps.n FROM opt) AS optimizer_kernels,
  IIF(
    traced.yes,
    (SELECT COUNT(*) * 1.0 / steps.n FROM opt_gpu WHERE name GLOB '*multi_tensor_apply*'),
    NULL
  ) AS optimizer_multi_tensor_kernels,
  (SELECT CAST(SUM(gpu_ns) / steps.n AS INT) FROM opt) AS optimizer_gpu_ns,
  (SELECT CAST(SUM(dur) / steps.n AS INT) FROM zero) AS zero_grad_cpu_ns,
  (SELECT SUM(cpu_ops) * 1.0 / steps.n FROM zero) AS zero_grad_cpu_ops,
  (SELECT COUNT(*) * 1.0 / steps.n FROM zero_op WHERE name = 'aten::zero_' AND level = 1)
    AS zero_grad_zero_calls,
  (SELECT COUNT(*) * 1.0 / steps.n FROM zero_op WHERE name GLOB 'aten::_foreach_zero_*')
    AS zero_grad_foreach_calls,
  IIF(traced.yes, (SELECT COUNT(*) * 1.0 / steps.n FROM zero_gpu WHERE category = 'kernel'), NULL)
    AS zero_grad_kernels,
  IIF(
    traced.yes,
    (SELECT COUNT(*) * 1.0 / steps.n FROM zero_gpu WHERE category = 'gpu_memset'),
    NULL
  ) AS zero_grad_memsets,
  (SELECT CAST(SUM(gpu_ns) / steps.n AS INT) FROM zero) AS zero_grad_gpu_ns,
  -- The step, and the loss read that follows the optimizer: CPU time saved in the optimizer
  -- can reappear as waiting there when the GPU sets the pace. NULL (shown "–") in a loop whose
  -- profiled steps never read the loss back: a phase that never ran has no time, not 0 ns.
  (SELECT CAST(SUM(dur) / steps.n AS INT) FROM guide_train_step) AS step_cpu_ns,
  (SELECT CAST(SUM(dur) / steps.n AS INT) FROM guide_train_phase
    WHERE phase = 'log_loss') AS log_loss_cpu_ns,
  -- Average CPU time of one kernel launch call (cudaLaunchKernel) per phase.
  (SELECT CAST(opt AS INT) FROM launch_avg) AS optimizer_launch_avg_ns,
  (SELECT CAST(fwd AS INT) FROM launch_avg) AS forward_launch_avg_ns,
  (SELECT CAST(bwd AS INT) FROM launch_avg) AS backward_launch_avg_ns,
  -- The optimizer's launches' time beyond what as many launches take in the forward, per
  -- step: an estimate of the optimizer's CPU time spent waiting for the GPU's queue.
  (SELECT CAST(opt_n * (opt - fwd) / steps.n AS INT) FROM launch_avg)
    AS optimizer_launch_excess_ns,
  -- Per step: the step's width and the optimizer's CPU time, shortest, median and longest.
  (SELECT MIN(dur) FROM step_ranked) AS step_min_ns,
  (SELECT CAST(AVG(dur) AS INT) FROM step_ranked WHERE k IN ((n + 1) / 2, (n + 2) / 2))
    AS step_median_ns,
  (SELECT MAX(dur) FROM step_ranked) AS step_max_ns,
  (SELECT MIN(dur) FROM opt_ranked) AS optimizer_min_ns,
  (SELECT CAST(AVG(dur) AS INT) FROM opt_ranked WHERE k IN ((n + 1) / 2, (n + 2) / 2))
    AS optimizer_median_ns,
  (SELECT MAX(dur) FROM opt_ranked) AS optimizer_max_ns,
  (SELECT dur FROM opt WHERE step = (SELECT step FROM first_step)) AS optimizer_first_ns,
  -- The optimizer's launch calls in the first profiled step and in the steps after it: each
  -- step's mean call (cudaLaunchKernel), the median time from a call's return to its kernel's
  -- start, and the time from the optimizer's label to its first kernel (NULL without kernels).
  (SELECT CAST(call_avg_ns AS INT) FROM opt_step WHERE first) AS optimizer_launch_first_avg_ns,
  (SELECT CAST(MIN(call_avg_ns) AS INT) FROM opt_step WHERE NOT first)
    AS optimizer_launch_later_min_avg_ns,
  (SELECT CAST(MAX(call_avg_ns) AS INT) FROM opt_step WHERE NOT first)
    AS optimizer_launch_later_max_avg_ns,
  (SELECT CAST(wait_median_ns AS INT) FROM opt_step WHERE first) AS optimizer_queue_first_ns,
  (SELECT CAST(MIN(wait_median_ns) AS INT) FROM opt_step WHERE NOT first)
    AS optimizer_queue_later_min_ns,
  (SELECT CAST(MAX(wait_median_ns) AS INT) FROM opt_step WHERE NOT first)
    AS optimizer_queue_later_max_ns,
  (SELECT first_kernel_ns FROM opt_step WHERE first) AS optimizer_first_kernel_first_ns,
  (SELECT MIN(first_kernel_ns) FROM opt_step WHERE NOT first)
    AS optimizer_first_kernel_later_min_ns,
  (SELECT MAX(first_kernel_ns) FROM opt_step WHERE NOT first)
    AS optimizer_first_kernel_later_max_ns,
  -- The first profiled optimizer step, for the "Open in Perfetto" button.
  (SELECT ts / 1e9 FROM opt ORDER BY ts LIMIT 1) AS optimizer_start_s,
  (SELECT (ts + dur) / 1e9 FROM opt ORDER BY ts LIMIT 1) AS optimizer_end_s
FROM steps, (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS yes) AS traced;
