-- trace: mini:comm_overlap.json
-- what: guide_comm_exposed in two windows: communication kernels with the same start, one inside another, one partly under an earlier one, compute kernels that touch or nest, and a second GPU whose compute does not cover the first's communication
INCLUDE PERFETTO MODULE guide.comm;
SELECT e.window_id, c.stream, c.ts, e.kind, e.comm_ns, e.exposed_ns
FROM guide_comm_exposed!((
  SELECT 1 AS window_id, 1000000 AS ts, 150000 AS dur
  UNION ALL
  SELECT 2, 1150000, 250000
)) AS e
JOIN guide_comm_kernel AS c USING (id)
ORDER BY e.window_id, c.device, c.ts, c.stream;
