-- What does one attention forward cost: CPU operators, GPU work, time, FLOPs and bytes?
-- output: values
-- question_ja: アテンションの順伝播 1 回にかかるもの（CPU の演算子、GPU の処理、時間、FLOPs、バイト数）
INCLUDE PERFETTO MODULE guide.attention;

-- Averages over the `attn_fwd` regions (one per profiled step); a sweep capture has none, and
-- then every column but `forwards` is NULL.
WITH
  fwd AS (SELECT * FROM guide_attention_forward_summary WHERE name = 'attn_fwd'),
  first_fwd AS (SELECT * FROM fwd ORDER BY ts LIMIT 1),
  op AS (
    SELECT fs.*
    FROM guide_attention_forward_slice AS fs
    JOIN fwd ON fwd.id = fs.fwd_id
    WHERE fs.category = 'cpu_op'
  ),
  mask_op AS (
    SELECT * FROM op
    WHERE name IN ('aten::masked_fill', 'aten::masked_fill_')
      AND fwd_id = (SELECT id FROM first_fwd)
    ORDER BY ts
    LIMIT 1
  ),
  n AS (SELECT COUNT(*) AS forwards FROM fwd)
SELECT
  n.forwards,
  (SELECT batch FROM first_fwd) AS batch,
  (SELECT heads FROM first_fwd) AS heads,
  (SELECT seq FROM first_fwd) AS seq,
  (SELECT head_dim FROM first_fwd) AS head_dim,
  (SELECT AVG(cpu_ns) FROM fwd) AS cpu_ns_per_fwd,
  (SELECT MIN(cpu_ns) FROM fwd) AS cpu_min_fwd_ns,
  (SELECT AVG(cpu_ops) FROM fwd) AS cpu_ops_per_fwd,
  (SELECT AVG(sdpa_self_ns) FROM fwd) AS sdpa_self_ns_per_fwd,
  (SELECT AVG(kernels) FROM fwd) AS kernels_per_fwd,
  (SELECT AVG(copies) FROM fwd) AS copies_per_fwd,
  (SELECT AVG(memsets) FROM fwd) AS memsets_per_fwd,
  (SELECT AVG(copy_gpu_ns) FROM fwd) AS copy_gpu_ns_per_fwd,
  (SELECT 100.0 * SUM(copy_gpu_ns) / NULLIF(SUM(gpu_ns), 0) FROM fwd) AS copy_gpu_pct,
  (SELECT AVG(gpu_ns) FROM fwd) AS gpu_ns_per_fwd,
  (SELECT launch_apis FROM first_fwd) AS launch_apis,
  (SELECT AVG(score_passes) FROM fwd) AS score_passes,
  (SELECT AVG(score_traffic_bytes) FROM fwd) AS score_traffic_bytes,
  -- One [batch, heads, seq, seq] score matrix in the inputs' dtype.
  (SELECT batch * heads * seq * seq * elem_bytes FROM first_fwd) AS score_matrix_bytes,
  -- What a fused kernel must move at least: read q, k, v and write the output.
  (SELECT 4 * batch * heads * seq * head_dim * elem_bytes FROM first_fwd) AS qkvo_bytes,
  -- How many times larger one score matrix is than q, k, v and o together: seq / (4 * head_dim).
  (SELECT 1.0 * seq / (4 * head_dim) FROM first_fwd) AS score_per_qkvo,
  -- Bytes the working operators read and write per forward, all tensors (score ones included).
  (SELECT AVG(traffic_bytes) FROM fwd) AS traffic_bytes,
  (SELECT flops FROM first_fwd) AS flops,
  (SELECT causal_flops FROM first_fwd) AS causal_flops,
  -- Achieved rates divide by GPU time only: CPU time is not the time the arithmetic took.
  (SELECT flops / NULLIF(AVG(gpu_ns), 0) / 1e3 FROM fwd) AS gpu_tflops,
  (SELECT causal_flops / NULLIF(AVG(gpu_ns), 0) / 1e3 FROM fwd) AS causal_gpu_tflops,
  1.0 * (SELECT COUNT(*) FROM op WHERE name IN (
    'aten::ones', 'aten::tril', 'aten::triu', 'aten::scalar_tensor', 'aten::fill_', 'aten::where'
  ) AND NOT EXISTS (
    SELECT 1 FROM slice AS a
    JOIN ancestor_slice(op.id) AS anc ON anc.id = a.id
    WHERE a.name = 'aten::_safe_softmax'
  )) / n.forwards AS mask_ops_per_fwd,
  1.0 * (SELECT COUNT(*) FROM op WHERE name IN ('aten::to', 'aten::_to_copy')
    AND parent_id IN (SELECT id FROM op WHERE name = 'aten::_scaled_dot_product_attention_math'))
    / n.forwards AS casts_per_fwd,
  1.0 * (SELECT COUNT(*) FROM op WHERE name = 'aten::_safe_softmax') / n.forwards
    AS safe_softmax_per_fwd,
  1.0 * (SELECT COUNT(*) FROM op WHERE name = 'aten::clone') / n.forwards AS clones_per_fwd,
  -- Self time of the backend operator that launches a fused attention kernel
  -- (aten::_flash_attention_forward, aten::_efficient_attention_forward,
  -- aten::_cudnn_attention_forward): work done in the library itself, outside any operator or
  -- runtime call it makes.
  1.0 * (SELECT COALESCE(SUM(self_ns), 0) FROM op WHERE name GLOB 'aten::_*_attention_forward')
    / n.forwards AS backend_self_ns_per_fwd,
  1.0 * (SELECT COUNT(*) FROM op WHERE name = 'aten::copy_') / n.forwards AS copy_ops_per_fwd,
  -- CPU time of the aten::clone calls (allocation and copy) per forward, and their share of it.
  1.0 * (SELECT COALESCE(SUM(dur), 0) FROM op WHERE name = 'aten::clone') / n.forwards
    AS clone_ns_per_fwd,
  100.0 * (SELECT COALESCE(SUM(dur), 0) FROM op WHERE name = 'aten::clone')
    / (SELECT SUM(cpu_ns) FROM fwd) AS clone_pct,
  (SELECT ts FROM first_fwd) / 1e9 AS first_fwd_start_s,
  (SELECT ts + cpu_ns FROM first_fwd) / 1e9 AS first_fwd_end_s,
  (SELECT ts FROM mask_op) / 1e9 AS mask_start_s,
  (SELECT ts + dur FROM mask_op) / 1e9 AS mask_end_s
FROM n;
