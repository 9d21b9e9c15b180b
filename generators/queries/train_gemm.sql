-- The GEMMs of one training step: forward against backward, element type, time
-- output: table
-- columns: phase=Phase, dtype=Element type, gemms=GEMMs per step, gflop=GFLOP per step, cpu_ns=CPU time per step, kernel_ns=Kernel time per step, achieved_tflops=Achieved, tflops_peak_pct=% of peak, kernel_name=Longest kernel, math=Math (from the kernel's name)
-- question_ja: 学習ステップ 1 回の GEMM: 順伝播と逆伝播の比較、要素型、時間
-- columns_ja: phase=フェーズ, dtype=要素型, gemms=ステップあたりの GEMM 数, gflop=ステップあたりの GFLOP, cpu_ns=ステップあたりの CPU 時間, kernel_ns=ステップあたりのカーネル時間, achieved_tflops=達成性能, tflops_peak_pct=ピーク性能に対する %, kernel_name=最長のカーネル, math=演算方式（カーネル名から）
-- shown: phase, dtype, gemms, gflop, cpu_ns, kernel_ns, achieved_tflops, tflops_peak_pct, kernel_name, math
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.train;
INCLUDE PERFETTO MODULE guide.hardware;
INCLUDE PERFETTO MODULE guide.dtypes;

WITH steps AS (SELECT COUNT(*) AS n FROM guide_train_step)
SELECT
  g.phase,
  guide_dtypes_label(g.dtype) AS dtype,
  COUNT(*) * 1.0 / steps.n AS gemms,
  ROUND(SUM(g.flops) / 1e9 / steps.n, 4) AS gflop,
  CAST(SUM(g.dur) / steps.n AS INT) AS cpu_ns,
  IIF(EXISTS (SELECT 1 FROM guide_kineto_gpu_activity), CAST(SUM(g.kernel_dur) / steps.n AS INT),
    NULL) AS kernel_ns,
  -- The GEMMs' work over their kernels' time (GPU time only; NULL on a CPU trace).
  SUM(g.flops) / (NULLIF(SUM(g.kernel_dur), 0) * 1e3) AS achieved_tflops,
  -- That work against what the same kernel time could do at each GEMM's own dense peak (its
  -- input type and the math its kernel names): NULL on a CPU, an unknown GPU or unknown math.
  100.0 * SUM(g.flops) / NULLIF(SUM(g.kernel_dur * 1e3 * guide_hardware_peak_tflops(
    guide_hardware_gemm_math(guide_dtypes_label(g.dtype), g.kernel_name)
  )), 0) AS tflops_peak_pct,
  (SELECT g2.kernel_name FROM guide_train_gemm AS g2 WHERE g2.phase = g.phase
    AND g2.dtype = g.dtype ORDER BY g2.kernel_dur DESC LIMIT 1) AS kernel_name,
  (SELECT
      CASE guide_hardware_gemm_math(guide_dtypes_label(g2.dtype), g2.kernel_name)
        WHEN 'fp32' THEN 'fp32 on CUDA cores (FMA)'
        WHEN 'tf32' THEN 'tf32 on tensor cores'
        WHEN 'bf16' THEN 'bf16 on tensor cores'
        WHEN 'fp16' THEN 'fp16 on tensor cores'
      END
    FROM guide_train_gemm AS g2
    WHERE g2.phase = g.phase AND g2.dtype = g.dtype AND g2.kernel_name IS NOT NULL
    ORDER BY g2.kernel_dur DESC LIMIT 1) AS math
FROM guide_train_gemm AS g, steps
GROUP BY g.phase, g.dtype
ORDER BY guide_train_phase_order(g.phase), g.dtype;
