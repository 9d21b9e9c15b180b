-- How do CPU and GPU time per forward grow with sequence length, per implementation?
-- output: table
-- columns: impl=Implementation, seq=Sequence length, forwards=Forwards, cpu_ns_per_fwd=CPU time per forward, gpu_ns_per_fwd=GPU time per forward, kernels_per_fwd=Kernels per forward, flops=FLOPs per forward, gpu_tflops=Achieved (GPU), cpu_tflops=Achieved (CPU time)
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
  MIN(flops) / NULLIF(AVG(gpu_ns), 0) / 1e3 AS gpu_tflops,
  MIN(flops) / AVG(cpu_ns) / 1e3 AS cpu_tflops
FROM guide_attention_forward_summary
WHERE impl IS NOT NULL
GROUP BY impl, seq
ORDER BY impl, seq;
