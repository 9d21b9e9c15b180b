-- trace: mini:overlap_and_drop.json
-- what: a bf16 GEMM whose split-K reduce kernel the importer dropped: one kernel counted, not two, and not the GEMM twice
INCLUDE PERFETTO MODULE guide.gemm;
SELECT name, batch, m, n, k, flops, dtype, element_bytes, kernels, substr(kernel_name, 1, 40) AS kernel_name,
  kernel_dur
FROM guide_gemm_op
ORDER BY ts;
