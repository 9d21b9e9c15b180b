-- trace: mini:cpu_only.json
-- what: on a CPU trace a GEMM has its FLOPs and no kernel
INCLUDE PERFETTO MODULE guide.launch;
SELECT op_name, ts, dur, self_ns, flops, kernel_id, kernel_name, kernel_dur
FROM guide_launch_gemm
ORDER BY ts;
