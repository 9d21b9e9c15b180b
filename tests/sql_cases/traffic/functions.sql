-- trace: mini:overlap_and_drop.json
-- what: elements, bytes and reads of each input, and the tensor written, per operator (bf16 GEMM and add, fp32 copy)
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.traffic;
WITH
  op AS (SELECT id, name, ts, arg_set_id FROM guide_kineto_slice WHERE category = 'cpu_op'),
  n(i) AS (VALUES (0), (1), (2))
SELECT
  op.name,
  n.i,
  guide_traffic_input_numel(op.arg_set_id, n.i) AS numel,
  guide_traffic_input_bytes(op.arg_set_id, n.i) AS bytes,
  guide_traffic_reads_input(op.name, n.i) AS reads,
  guide_traffic_write_numel(op.name, op.arg_set_id) AS write_numel,
  guide_traffic_write_elem_bytes(op.name, op.arg_set_id) AS write_elem_bytes
FROM op
CROSS JOIN n
ORDER BY op.ts, n.i;
