-- trace: mini:one_op_two_kernels.json
-- what: the inputs each leaf operator reads, one row per input (the Scalar of aten::add has no dims)
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.traffic;
WITH op AS (
  SELECT id, name, ts, arg_set_id FROM guide_kineto_slice
  WHERE category = 'cpu_op' AND name IN ('aten::mm', 'aten::add')
)
SELECT op.name, i.i, i.numel, i.bytes
FROM op
JOIN guide_traffic_op_inputs!(op) AS i ON i.op_id = op.id
ORDER BY op.ts, i.i;
