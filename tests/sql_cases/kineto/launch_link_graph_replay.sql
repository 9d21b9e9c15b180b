-- trace: reference:mi300x-sglang-graph-replay.json.gz
-- what: ROCm writes a graph replay's flows as ends only, so no flow links the 544 replayed kernels; each carries the hipGraphLaunch's correlation id and is linked to it, and every kernel and copy of the trace (555 + 3) has its launch
INCLUDE PERFETTO MODULE guide.kineto;
SELECT r.name AS launch, COUNT(*) AS links
FROM guide_kineto_launch_link AS l
JOIN slice AS r ON r.id = l.launch_id
GROUP BY r.name
ORDER BY r.name;
