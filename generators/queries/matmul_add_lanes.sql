-- How far does the GPU lane run behind the CPU lane, and where does the profiler's own work show?
-- output: values
-- question_ja: GPU のレーンは CPU のレーンからどれだけ遅れて進み、プロファイラ自身の処理はどこに現れるか
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.launch;
INCLUDE PERFETTO MODULE guide.windows;

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
  -- Each kernel launched in a step, split into launch latency (its stream was idle when the
  -- launch returned) or queueing behind the stream's earlier work (guide_launch_queue).
  queue AS (
    SELECT q.*
    FROM guide_launch_queue AS q
    JOIN step AS st ON q.launch_ts >= st.ts AND q.launch_ts < st.ts + st.dur
    WHERE q.gpu_category = 'kernel'
  ),
  buffer AS (SELECT * FROM slice WHERE name GLOB '*Buffer Request*' ORDER BY ts),
  widest AS (SELECT * FROM step ORDER BY dur DESC LIMIT 1)
SELECT
  (SELECT COUNT(*) FROM step) AS steps,
  (SELECT launch_to_start_ns FROM first_launch) AS first_launch_to_kernel_ns,
  (SELECT MIN(launch_to_start_ns) FROM launch) AS launch_to_kernel_min_ns,
  (SELECT MAX(launch_to_start_ns) FROM launch) AS launch_to_kernel_max_ns,
  -- Launches whose stream was idle when the call returned: launch latency (call start to kernel
  -- start).
  (SELECT COUNT(*) FROM queue WHERE NOT queued) AS idle_launches,
  (SELECT MIN(latency_ns) FROM queue) AS latency_min_ns,
  (SELECT MAX(latency_ns) FROM queue) AS latency_max_ns,
  -- Launches whose stream was still busy: the kernel queued behind earlier work.
  (SELECT COUNT(*) FROM queue WHERE queued) AS queued_launches,
  (SELECT MAX(queue_ns) FROM queue) AS queue_max_ns,
  (SELECT MIN(turnaround_ns) FROM queue) AS turnaround_min_ns,
  (SELECT MAX(turnaround_ns) FROM queue) AS turnaround_max_ns,
  -- The kernel with the longest launch-to-kernel delay: was it queued?
  (SELECT queued FROM queue ORDER BY gpu_ts - launch_ts DESC LIMIT 1) AS longest_delay_queued,
  -- GPU idle inside the first step: its width minus the GPU's busy time inside it (guide.windows).
  (
    SELECT b.dur - b.busy_ns FROM guide_windows_step_busy AS b, first_step AS f
    WHERE b.step = f.step
  ) AS first_step_gpu_idle_ns,
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
