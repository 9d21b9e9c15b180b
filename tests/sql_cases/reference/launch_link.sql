-- trace: reference:a100-simple-add.json.gz reference:a100-triton-compiled.json.gz reference:h100-bert-small-inference.json.gz reference:mi300x-compiled-triton.json.gz reference:v100-resnet-train.json.gz
-- what: the launch links (flows, checked by correlation id) agree with the pairs a CUPTI correlation id joins on its own
INCLUDE PERFETTO MODULE guide.kineto;
WITH
  launch AS MATERIALIZED (
    SELECT r.id, EXTRACT_ARG(s.arg_set_id, 'args.correlation') AS corr
    FROM guide_kineto_runtime_call AS r JOIN slice AS s USING (id)
  ),
  gpu AS MATERIALIZED (
    SELECT g.id, EXTRACT_ARG(s.arg_set_id, 'args.correlation') AS corr
    FROM guide_kineto_gpu_activity AS g JOIN slice AS s USING (id)
  ),
  by_id AS MATERIALIZED (
    SELECT l.id AS launch_id, g.id AS gpu_id FROM launch AS l JOIN gpu AS g USING (corr)
  ),
  flows AS MATERIALIZED (
    SELECT f.slice_out AS launch_id, f.slice_in AS gpu_id
    FROM flow AS f
    WHERE f.slice_out IN (SELECT id FROM launch) AND f.slice_in IN (SELECT id FROM gpu)
  )
SELECT
  (SELECT COUNT(*) FROM gpu) AS gpu_activities,
  (SELECT COUNT(*) FROM launch) AS runtime_calls,
  (SELECT COUNT(*) FROM flows) AS launch_flows,
  (SELECT COUNT(*) FROM guide_kineto_launch_link) AS links,
  (SELECT COUNT(*) FROM by_id) AS pairs_by_correlation,
  (
    SELECT COUNT(*) FROM guide_kineto_launch_link AS ll
    JOIN by_id AS b ON b.launch_id = ll.launch_id AND b.gpu_id = ll.gpu_id
  ) AS links_that_are_pairs,
  (SELECT COUNT(*) FROM flows) - (SELECT COUNT(*) FROM guide_kineto_launch_link) AS flows_rejected;
