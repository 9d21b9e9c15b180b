-- trace: reference:gpu-unlisted-no-flows.json.gz
-- what: an async copy into pageable memory blocks until the copy is done: the rank's 8 cudaMemcpyAsync calls whose copy is `Memcpy DtoH (Device -> Pageable)` (linked by correlation id, the trace has no flows), 1,077 µs in all, counted from the JSON
INCLUDE PERFETTO MODULE guide.kineto;
SELECT name, kind, COUNT(*) AS calls, SUM(dur) AS dur
FROM guide_kineto_sync_call
WHERE name GLOB '*Async*'
GROUP BY name, kind
ORDER BY name, kind;
