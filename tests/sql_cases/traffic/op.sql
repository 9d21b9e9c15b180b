-- trace: mini:one_op_two_kernels.json
-- what: bytes each leaf operator must read and write; aten::mm also writes the 4096 bytes of the memset it launched
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.traffic;
WITH op AS (
  SELECT id, name, ts, arg_set_id FROM guide_kineto_slice
  WHERE category = 'cpu_op' AND name IN ('aten::mm', 'aten::add')
)
SELECT op.name, t.read_bytes, t.write_numel, t.result_bytes, t.memset_bytes, t.write_bytes
FROM op
JOIN guide_traffic_op!(op) AS t ON t.op_id = op.id
ORDER BY op.ts;
