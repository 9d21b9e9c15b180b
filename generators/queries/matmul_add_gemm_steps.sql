-- How long does the matrix multiply take in each step (its kernel on a GPU, its CPU self time on a CPU)?
-- output: table
-- columns: step=Step, op_name=Operator, cpu_self_ns=CPU self time, kernel_name=Kernel, kernel_ns=Kernel time, achieved_tflops=Achieved, tflops_peak_pct=% of peak
-- question_ja: 各ステップで行列積にどれだけかかるか（GPU ではそのカーネル、CPU ではその CPU 自己時間）
-- columns_ja: step=ステップ, op_name=演算子, cpu_self_ns=CPU 自己時間, kernel_name=カーネル, kernel_ns=カーネル時間, achieved_tflops=達成性能, tflops_peak_pct=ピーク性能に対する %
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.dtypes;
INCLUDE PERFETTO MODULE guide.hardware;
INCLUDE PERFETTO MODULE guide.launch;
INCLUDE PERFETTO MODULE guide.shapes;

SELECT
  st.step,
  g.op_name,
  g.self_ns AS cpu_self_ns,
  g.kernel_name,
  g.kernel_dur AS kernel_ns,
  -- FLOPs / ns / 1e3 = TFLOP/s, over the kernel's GPU time only: NULL where there is no kernel
  -- (a CPU trace, or a kernel the importer dropped), never a rate over CPU time.
  g.flops / CAST(g.kernel_dur AS DOUBLE) / 1e3 AS achieved_tflops,
  -- The kernel's rate over the GPU's dense peak for the input type and the kernel's math; NULL on
  -- a CPU, which has no peak table here.
  100.0 * g.flops / CAST(g.kernel_dur AS DOUBLE) / 1e3
    / guide_hardware_peak_tflops(guide_hardware_gemm_math(
      (SELECT guide_dtypes_label(i.dtype) FROM guide_shapes_input AS i
        WHERE i.slice_id = g.op_id AND i.input_index = 0),
      g.kernel_name
    )) AS tflops_peak_pct
FROM guide_launch_gemm AS g
JOIN guide_kineto_profiler_step AS st ON g.ts >= st.ts AND g.ts < st.ts + st.dur
ORDER BY st.step, g.ts;
