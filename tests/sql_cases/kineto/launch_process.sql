-- trace: mini:merged_ranks.json mini:one_op_two_kernels.json
-- what: each process that made runtime calls, with how many (rank 0 also synchronises)
INCLUDE PERFETTO MODULE guide.kineto;
SELECT p.pid, l.calls
FROM guide_kineto_launch_process AS l
JOIN process AS p USING (upid)
ORDER BY p.pid;
