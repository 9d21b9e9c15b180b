-- trace: mini:cpu_only.json
-- what: on a CPU trace a GEMM has its size and no kernels
INCLUDE PERFETTO MODULE guide.gemm;
SELECT name, batch, m, n, k, flops, dtype, element_bytes, kernels, kernel_name, kernel_dur
FROM guide_gemm_op
ORDER BY ts;
