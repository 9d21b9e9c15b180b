-- trace: mini:one_op_two_kernels.json
-- what: the one-line decoding of each kernel in a trace
INCLUDE PERFETTO MODULE guide.kernel_names;
INCLUDE PERFETTO MODULE guide.kineto;
SELECT ts, category, guide_kernel_names_summary(name) AS summary
FROM guide_kineto_gpu_activity
ORDER BY ts;
