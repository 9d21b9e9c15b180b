-- How far does the GPU lane run behind the CPU lane, and where does the profiler's own work show?
-- output: values
INCLUDE PERFETTO MODULE guide.launch;

WITH
  step AS (
    SELECT *, ROW_NUMBER() OVER (ORDER BY dur) AS rn, COUNT(*) OVER () AS n
    FROM guide_kineto_profiler_step
  ),
  first_step AS (SELECT * FROM step ORDER BY step LIMIT 1),
  med AS (SELECT dur FROM step WHERE rn = (n + 1) / 2),
  launch AS (
    SELECT c.*, st.step
    FROM guide_launch_chain AS c
    JOIN step AS st ON c.ts >= st.ts AND c.ts < st.ts + st.dur
    WHERE c.gpu_category = 'kernel'
  ),
  first_launch AS (SELECT * FROM launch ORDER BY ts LIMIT 1),
  buffer AS (SELECT * FROM slice WHERE name GLOB '*Buffer Request*' ORDER BY ts),
  widest AS (SELECT * FROM step ORDER BY dur DESC LIMIT 1)
SELECT
  (SELECT COUNT(*) FROM step) AS steps,
  (SELECT launch_to_start_ns FROM first_launch) AS first_launch_to_kernel_ns,
  (SELECT MIN(launch_to_start_ns) FROM launch) AS launch_to_kernel_min_ns,
  (SELECT MAX(launch_to_start_ns) FROM launch) AS launch_to_kernel_max_ns,
  -- GPU idle inside the first step: its width minus the kernel time launched from it.
  (SELECT f.dur - SUM(l.gpu_dur) FROM launch AS l, first_step AS f WHERE l.step = f.step)
    AS first_step_gpu_idle_ns,
  -- How long the last kernel of the first step kept running after the step's CPU side ended.
  (
    SELECT MAX(l.gpu_ts + l.gpu_dur) - (f.ts + f.dur)
    FROM launch AS l, first_step AS f WHERE l.step = f.step
  ) AS first_step_gpu_overrun_ns,
  (SELECT COUNT(*) FROM buffer) AS buffer_requests,
  (SELECT dur FROM buffer LIMIT 1) AS buffer_request_ns,
  (SELECT dur FROM med) AS step_median_ns,
  (SELECT step FROM widest) AS widest_step,
  (SELECT dur FROM widest) AS widest_step_ns,
  (SELECT widest.dur * 1.0 / med.dur FROM widest, med) AS widest_over_median,
  -- Steps more than twice as wide as the median step.
  (SELECT COUNT(*) FROM step WHERE dur > 2 * (SELECT dur FROM med)) AS wide_steps,
  (SELECT step FROM first_step) AS first_step,
  -- Focus: the first buffer request if there is one, else the widest step.
  COALESCE((SELECT ts FROM buffer LIMIT 1), (SELECT ts FROM widest)) / 1e9 AS moment_start_s,
  COALESCE((SELECT ts + dur FROM buffer LIMIT 1), (SELECT ts + dur FROM widest)) / 1e9
    AS moment_end_s,
  (SELECT ts FROM widest) / 1e9 AS widest_start_s,
  (SELECT ts + dur FROM widest) / 1e9 AS widest_end_s;
