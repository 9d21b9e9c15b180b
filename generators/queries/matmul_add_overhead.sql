-- How much of each step is the work itself (the GEMM on a CPU, kernels on a GPU), and how much is everything around it?
-- output: values
INCLUDE PERFETTO MODULE guide.launch;

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
    FROM step AS st
    JOIN guide_kineto_slice AS l ON l.parent_id = st.id AND l.category = 'user_annotation'
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
  )
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
  (SELECT SUM(gpu_dur) FROM kernel) AS kernel_busy_ns,
  100.0 * (SELECT SUM(gpu_dur) FROM kernel) / (SELECT SUM(dur) FROM step) AS gpu_busy_pct;
