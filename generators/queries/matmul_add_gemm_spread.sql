-- Over the active steps, how far apart are the fastest, the median and the slowest matrix multiply?
-- output: values
-- question_ja: アクティブなステップ全体で、最速・中央値・最遅の行列積はどれだけ離れているか
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.launch;

WITH
  g AS (
    SELECT
      g.*,
      st.step,
      COALESCE(g.kernel_dur, g.self_ns) AS t,
      ROW_NUMBER() OVER (ORDER BY COALESCE(g.kernel_dur, g.self_ns), g.ts) AS rn,
      COUNT(*) OVER () AS n
    FROM guide_launch_gemm AS g
    JOIN guide_kineto_profiler_step AS st ON g.ts >= st.ts AND g.ts < st.ts + st.dur
  ),
  slowest AS (SELECT * FROM g ORDER BY t DESC, ts LIMIT 1)
SELECT
  (SELECT COUNT(*) FROM g) AS gemms,
  -- 'kernel' when the times are GPU kernel durations, 'cpu self' on a CPU-only trace.
  (SELECT CASE WHEN COUNT(kernel_dur) > 0 THEN 'kernel' ELSE 'cpu self' END FROM g) AS measured,
  (SELECT MIN(t) FROM g) AS min_ns,
  (SELECT t FROM g WHERE rn = (n + 1) / 2) AS median_ns,
  (SELECT MAX(t) FROM g) AS max_ns,
  (SELECT AVG(t) FROM g) AS mean_ns,
  (SELECT MAX(t) * 1.0 / MIN(t) FROM g) AS max_over_min,
  (SELECT step FROM slowest) AS slowest_step,
  (SELECT COALESCE(kernel_dur, self_ns) FROM slowest) AS slowest_ns,
  (SELECT COALESCE(k.ts, s.ts) FROM slowest AS s LEFT JOIN slice AS k ON k.id = s.kernel_id)
    / 1e9 - 0.0002 AS slowest_start_s,
  (
    SELECT COALESCE(k.ts + k.dur, s.ts + s.dur)
    FROM slowest AS s LEFT JOIN slice AS k ON k.id = s.kernel_id
  ) / 1e9 + 0.0002 AS slowest_end_s;
