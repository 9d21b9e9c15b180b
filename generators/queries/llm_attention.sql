-- Which attention implementation and kernel run in prefill and in decode?
-- output: table
-- columns: phase=Phase, query_len=Query positions, kv_len=Key positions (largest), backend_op=Backend operator, family=Implementation, kernel_name=Kernel, decoded=Kernel name decoded, calls=Calls per forward, kernel_ns=Kernel time per call
INCLUDE PERFETTO MODULE guide.llm;
INCLUDE PERFETTO MODULE guide.kernel_names;

WITH
  call AS (
    SELECT f.phase, f.id AS forward_id, a.id AS sdpa_id, a.query_len, a.kv_len
    FROM guide_llm_forward AS f
    JOIN guide_llm_attention_read AS a
      ON a.track_id = f.track_id AND a.ts >= f.ts AND a.ts < f.ts + f.dur
  )
SELECT
  call.phase,
  MAX(call.query_len) AS query_len,
  MAX(call.kv_len) AS kv_len,
  k.backend_op,
  guide_llm_attention_family(COALESCE(k.kernel_name, k.backend_op)) AS family,
  k.kernel_name,
  guide_kernel_names_summary(k.kernel_name) AS decoded,
  COUNT(*) * 1.0 / COUNT(DISTINCT call.forward_id) AS calls,
  CAST(AVG(k.kernel_dur) AS INT) AS kernel_ns
FROM call
JOIN guide_llm_attention_kernel AS k USING (sdpa_id)
GROUP BY call.phase, k.backend_op, k.kernel_name
ORDER BY MIN(call.forward_id), k.kernel_name;
