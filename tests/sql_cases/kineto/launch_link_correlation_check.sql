-- trace: mini:overlap_and_drop.json
-- what: the flow of the dropped split-K reduce kernel lands on its GEMM; the correlation check keeps only the three true links
INCLUDE PERFETTO MODULE guide.kineto;
SELECT
  r.ts AS launch_ts,
  EXTRACT_ARG(rs.arg_set_id, 'args.correlation') AS launch_correlation,
  substr(g.name, 1, 40) AS flow_target,
  EXTRACT_ARG(gs.arg_set_id, 'args.correlation') AS target_correlation,
  EXISTS (
    SELECT 1 FROM guide_kineto_launch_link AS l WHERE l.launch_id = f.slice_out AND l.gpu_id = f.slice_in
  ) AS linked
FROM flow AS f
JOIN guide_kineto_runtime_call AS r ON r.id = f.slice_out
JOIN slice AS rs ON rs.id = r.id
JOIN guide_kineto_gpu_activity AS g ON g.id = f.slice_in
JOIN slice AS gs ON gs.id = g.id
ORDER BY r.ts;
