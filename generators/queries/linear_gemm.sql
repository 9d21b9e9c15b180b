-- Which GEMM kernel runs each matrix multiply, what does its name say, and how fast is it?
-- output: table
-- columns: op=Operator, m=M, n=N, k=K, shape=M × N × K, dtype=Type, kernel=Kernel, decoded=What the name says, flops=FLOPs, kernel_ns=Kernel time, achieved_tflops=Achieved, tflops_peak_pct=% of peak
-- question_ja: 各行列積をどの GEMM カーネルが実行し、その名前は何を示し、どれだけ速いか
-- columns_ja: op=演算子, m=M, n=N, k=K, shape=M × N × K, dtype=データ型, kernel=カーネル, decoded=名前が示す内容, flops=FLOPs, kernel_ns=カーネル時間, achieved_tflops=達成性能, tflops_peak_pct=ピーク性能に対する %
-- shown: op, shape, dtype, kernel, decoded, flops, kernel_ns, achieved_tflops, tflops_peak_pct
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.gemm;
INCLUDE PERFETTO MODULE guide.hardware;
INCLUDE PERFETTO MODULE guide.kernel_names;
INCLUDE PERFETTO MODULE guide.dtypes;

-- The first profiled step's GEMMs, in call order.
WITH first_step AS (SELECT * FROM guide_kineto_profiler_step ORDER BY step LIMIT 1)
SELECT
  g.name AS op,
  g.m,
  g.n,
  g.k,
  g.m || ' × ' || g.n || ' × ' || g.k AS shape,
  guide_dtypes_label(g.dtype) AS dtype,
  g.kernel_name AS kernel,
  guide_kernel_names_summary(g.kernel_name) AS decoded,
  g.flops,
  NULLIF(g.kernel_dur, 0) AS kernel_ns,
  CASE WHEN g.kernel_dur > 0 THEN g.flops / (g.kernel_dur * 1e3) END AS achieved_tflops,
  -- Achieved over the GPU's dense peak for the input type and the kernel's math (NULL on a CPU).
  CASE WHEN g.kernel_dur > 0 THEN 100.0 * g.flops / (g.kernel_dur * 1e3)
    / guide_hardware_peak_tflops(
      guide_hardware_gemm_math(guide_dtypes_label(g.dtype), g.kernel_name)
    ) END AS tflops_peak_pct
FROM guide_gemm_op AS g, first_step AS f
WHERE g.ts >= f.ts AND g.ts < f.ts + f.dur
ORDER BY g.ts;
