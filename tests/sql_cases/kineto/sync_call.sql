-- trace: mini:steps_idle_gap_sync.json reference:mi250-minitoy-train.json.gz
-- what: the calls that block the CPU: a device synchronisation on CUDA, and on ROCm the blocking hipMemcpyWithStream copies PyTorch makes for a synchronous copy (never the *Async forms)
INCLUDE PERFETTO MODULE guide.kineto;
SELECT name, kind, COUNT(*) AS calls, SUM(dur) AS dur
FROM guide_kineto_sync_call
GROUP BY name, kind
ORDER BY name, kind;
