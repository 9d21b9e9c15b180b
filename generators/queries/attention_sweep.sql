-- How do CPU and GPU time per forward grow with sequence length, per implementation?
-- output: table
-- columns: impl=Implementation, seq=Sequence length, forwards=Forwards, cpu_ns_per_fwd=CPU time per forward, gpu_ns_per_fwd=GPU time per forward, kernels_per_fwd=Kernels per forward, flops=FLOPs (full), causal_flops=FLOPs (causal), gpu_tflops=Achieved (GPU; full count), causal_gpu_tflops=Achieved (GPU; causal count), score_matrix_bytes=One score matrix, traffic_bytes=Traffic per forward, traffic_bytes_per_s=Achieved bandwidth
-- question_ja: 順伝播 1 回あたりの CPU 時間と GPU 時間は、実装ごとに系列長とともにどう伸びるか
-- columns_ja: impl=実装, seq=系列長, forwards=順伝播の回数, cpu_ns_per_fwd=順伝播 1 回あたりの CPU 時間, gpu_ns_per_fwd=順伝播 1 回あたりの GPU 時間, kernels_per_fwd=順伝播 1 回あたりのカーネル数, flops=FLOPs（全数）, causal_flops=FLOPs（因果）, gpu_tflops=達成性能（GPU、全数カウント）, causal_gpu_tflops=達成性能（GPU、因果カウント）, score_matrix_bytes=スコア行列 1 つ, traffic_bytes=順伝播 1 回あたりの転送量, traffic_bytes_per_s=達成帯域幅
-- shown: impl, seq, cpu_ns_per_fwd, gpu_ns_per_fwd, kernels_per_fwd, flops, causal_flops, gpu_tflops, causal_gpu_tflops, score_matrix_bytes, traffic_bytes_per_s
INCLUDE PERFETTO MODULE guide.attention;

-- Only sweep captures have labelled forwards `attn_fwd/<impl>/...`; others return no rows. The
-- GPU columns are NULL on a CPU capture (the trace has no GPU activity).
SELECT
  impl,
  seq,
  COUNT(*) AS forwards,
  AVG(cpu_ns) AS cpu_ns_per_fwd,
  AVG(gpu_ns) AS gpu_ns_per_fwd,
  AVG(kernels) AS kernels_per_fwd,
  MIN(flops) AS flops,
  MIN(causal_flops) AS causal_flops,
  -- Rates divide by GPU time only; on a CPU capture they are NULL, not FLOPs over CPU time.
  MIN(flops) / NULLIF(AVG(gpu_ns), 0) / 1e3 AS gpu_tflops,
  MIN(causal_flops) / NULLIF(AVG(gpu_ns), 0) / 1e3 AS causal_gpu_tflops,
  -- One [batch, heads, seq, seq] score matrix in q's dtype (an fp32 backend's is twice that).
  MIN(batch * heads * seq * seq * elem_bytes) AS score_matrix_bytes,
  -- Bytes read and written per forward, counted from shapes (guide_attention_traffic_in), and
  -- those bytes over the GPU time.
  AVG(traffic_bytes) AS traffic_bytes,
  1e9 * AVG(traffic_bytes) / NULLIF(AVG(gpu_ns), 0) AS traffic_bytes_per_s
FROM guide_attention_forward_summary
WHERE impl IS NOT NULL
GROUP BY impl, seq
ORDER BY impl, seq;
