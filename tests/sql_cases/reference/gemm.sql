-- trace: reference:a100-simple-add.json.gz reference:a100-triton-compiled.json.gz reference:h100-bert-small-inference.json.gz reference:mi300x-compiled-triton.json.gz reference:v100-resnet-train.json.gz
-- what: the two GEMM views agree on which calls are GEMMs and on their FLOPs; guide_launch_gemm keeps one kernel per call where guide_gemm_op counts them all
INCLUDE PERFETTO MODULE guide.gemm;
INCLUDE PERFETTO MODULE guide.launch;
SELECT
  (SELECT COUNT(*) FROM guide_gemm_op WHERE name IN ('aten::mm', 'aten::bmm', 'aten::addmm'))
    AS gemm_op_calls,
  (SELECT COUNT(*) FROM guide_launch_gemm) AS launch_gemm_calls,
  (
    SELECT COUNT(*) FROM guide_gemm_op AS g JOIN guide_launch_gemm AS l ON l.op_id = g.id
    WHERE g.flops = l.flops
  ) AS same_flops,
  (SELECT COUNT(*) FROM guide_gemm_op WHERE kernels > 1) AS calls_with_several_kernels,
  (
    SELECT COUNT(*) FROM guide_gemm_op AS g JOIN guide_launch_gemm AS l ON l.op_id = g.id
    WHERE (g.kernels > 0) != (l.kernel_id IS NOT NULL)
  ) AS disagree_on_launching;
