-- trace: mini:one_op_two_kernels.json
-- what: aten::mm with its FLOPs from the recorded shapes (2 x 64 x 32 x 16), self time, and the last of its two kernels
INCLUDE PERFETTO MODULE guide.launch;
SELECT op_name, ts, dur, self_ns, flops, substr(kernel_name, 1, 40) AS kernel_name, kernel_dur
FROM guide_launch_gemm
ORDER BY ts;
