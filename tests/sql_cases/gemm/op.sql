-- trace: mini:one_op_two_kernels.json
-- what: one fp32 GEMM, M=64 N=16 K=32, that launched two kernels (the longest named), their durations summed
INCLUDE PERFETTO MODULE guide.gemm;
SELECT ts, dur, name, batch, m, n, k, flops, dtype, element_bytes, kernels,
  substr(kernel_name, 1, 40) AS kernel_name, kernel_dur
FROM guide_gemm_op
ORDER BY ts;
