-- trace: mini:one_op_two_kernels.json
-- what: runtime calls (an occupancy query, a memset and three launches) with the operator that made each
INCLUDE PERFETTO MODULE guide.kineto;
SELECT r.ts, r.dur, r.name, r.category, p.name AS parent
FROM guide_kineto_runtime_call AS r
LEFT JOIN guide_kineto_slice AS p ON p.id = r.parent_id
ORDER BY r.ts;
