-- trace: mini:one_op_two_kernels.json
-- what: every slice with its category, nesting and thread or stream (CPU thread 100, GPU 0 stream 7)
INCLUDE PERFETTO MODULE guide.kineto;
SELECT ts, dur, name, category, depth, pid, tid, thread_name,
  (SELECT p.name FROM guide_kineto_slice AS p WHERE p.id = s.parent_id) AS parent
FROM guide_kineto_slice AS s
ORDER BY pid DESC, ts, depth;
