-- How long does the matrix multiply take in each step (its kernel on a GPU, its CPU self time on a CPU)?
-- output: table
-- columns: step=Step, op_name=Operator, cpu_self_ns=CPU self time, kernel_name=Kernel, kernel_ns=Kernel time, achieved_tflops=Achieved
INCLUDE PERFETTO MODULE guide.launch;

SELECT
  st.step,
  g.op_name,
  g.self_ns AS cpu_self_ns,
  g.kernel_name,
  g.kernel_dur AS kernel_ns,
  -- FLOPs / ns / 1e3 = TFLOP/s; on a CPU the operator's self time is the compute time.
  g.flops / CAST(COALESCE(g.kernel_dur, g.self_ns) AS DOUBLE) / 1e3 AS achieved_tflops
FROM guide_launch_gemm AS g
JOIN guide_kineto_profiler_step AS st ON g.ts >= st.ts AND g.ts < st.ts + st.dur
ORDER BY st.step, g.ts;
