-- Which attention implementation and kernel run in prefill and in decode?
-- output: table
-- columns: phase=Phase, query_len=Query positions, kv_len=Key positions (largest), backend_op=Backend operator, family=Implementation, kernel_name=Kernel, decoded=Kernel name decoded, calls=Calls per forward, kernel_ns=Kernel time per call
-- question_ja: プリフィルとデコードでは、どのアテンション実装とカーネルが動くか
-- columns_ja: phase=フェーズ, query_len=クエリの位置数, kv_len=キーの位置数（最大）, backend_op=バックエンド演算子, family=実装, kernel_name=カーネル, decoded=カーネル名のデコード結果, calls=順伝播 1 回あたりの呼び出し回数, kernel_ns=1 回あたりのカーネル時間
INCLUDE PERFETTO MODULE guide.llm;
INCLUDE PERFETTO MODULE guide.kernel_names;

WITH
  -- Attention calls by the forward they start in.
  call AS MATERIALIZED (
    SELECT f.phase, c.window_id AS forward_id, a.id AS sdpa_id, a.query_len, a.kv_len
    FROM guide_llm_window_slice!(
      (SELECT id AS window_id, ts, dur, track_id FROM guide_llm_forward)
    ) AS c
    JOIN guide_llm_forward AS f ON f.id = c.window_id
    JOIN guide_llm_attention_read AS a ON a.id = c.id
    WHERE c.name = 'aten::scaled_dot_product_attention'
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
