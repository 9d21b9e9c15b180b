-- How much of each step is the work itself (the GEMM on a CPU, kernels on a GPU), and how much is everything around it?
-- output: values
-- question_ja: 各ステップのうち処理そのもの（CPU では GEMM、GPU ではカーネル）はどれだけで、その周りのすべてはどれだけか
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.launch;
INCLUDE PERFETTO MODULE guide.windows;

WITH
  step AS (SELECT * FROM guide_kineto_profiler_step),
  label AS (
    SELECT
      l.dur,
      -- Time inside the label that no operator below it recorded.
      l.dur - COALESCE((SELECT SUM(c.dur) FROM slice AS c WHERE c.parent_id = l.id), 0)
        AS self_ns,
      ROW_NUMBER() OVER (ORDER BY l.dur) AS rn,
      COUNT(*) OVER () AS n
    FROM guide_kineto_step_label AS l
  ),
  gemm AS (
    SELECT g.*
    FROM guide_launch_gemm AS g
    JOIN step AS st ON g.ts >= st.ts AND g.ts < st.ts + st.dur
  ),
  kernel AS (
    SELECT c.gpu_dur
    FROM guide_launch_chain AS c
    JOIN step AS st ON c.ts >= st.ts AND c.ts < st.ts + st.dur
    WHERE c.gpu_category = 'kernel'
  ),
  -- The label as the profiler also draws it on the GPU lane: one gpu_user_annotation per call,
  -- from the first GPU activity it launched to the end of the last, idle stretches included.
  label_gpu AS (SELECT dur FROM guide_kineto_slice WHERE category = 'gpu_user_annotation')
SELECT
  (SELECT SUM(dur) FROM step) AS steps_total_ns,
  -- The label's median width: the CPU time one call of matmul_add takes.
  (SELECT dur FROM label WHERE rn = (n + 1) / 2) AS label_median_ns,
  -- The label over all steps: its total width, and its self time.
  (SELECT SUM(dur) FROM label) AS label_total_ns,
  (SELECT SUM(self_ns) FROM label) AS label_self_ns,
  100.0 * (SELECT SUM(self_ns) FROM label) / (SELECT SUM(dur) FROM label) AS label_self_pct,
  (SELECT SUM(self_ns) FROM gemm) AS gemm_self_ns,
  100.0 * (SELECT SUM(self_ns) FROM gemm) / (SELECT SUM(dur) FROM step) AS gemm_self_pct,
  (SELECT NULLIF(COUNT(*), 0) FROM kernel) AS kernels,
  -- Summed durations of the kernels launched in the steps (wherever they ran).
  (SELECT SUM(gpu_dur) FROM kernel) AS kernel_time_ns,
  -- The GPU's busy share of the steps, the guide's one definition (guide.windows): over the
  -- window from the first step's start to the last step's end.
  (SELECT window_ns FROM guide_windows_steps_busy) AS window_ns,
  (SELECT busy_ns FROM guide_windows_steps_busy) AS gpu_busy_ns,
  100.0 * (SELECT busy_ns FROM guide_windows_steps_busy)
    / (SELECT window_ns FROM guide_windows_steps_busy) AS gpu_busy_pct,
  -- What key_averages() calls the label's "Self CUDA" (its GPU-lane annotation's width) and the
  -- "Self CUDA time total" it divides by (every GPU activity's duration), and their ratio:
  -- the table's "Self CUDA %" of the label row is 100 times it.
  (SELECT NULLIF(SUM(dur), 0) FROM label_gpu) AS label_gpu_span_ns,
  (SELECT NULLIF(SUM(dur), 0) FROM guide_kineto_gpu_activity) AS gpu_time_total_ns,
  (SELECT SUM(dur) FROM label_gpu) * 1.0
    / (SELECT NULLIF(SUM(dur), 0) FROM guide_kineto_gpu_activity) AS label_gpu_span_ratio;
