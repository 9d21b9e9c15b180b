-- trace: mini:one_op_two_kernels.json
-- what: launch latency for launches that found the stream idle; queueing and turnaround for the split-K reduce, launched while the GEMM still ran
INCLUDE PERFETTO MODULE guide.launch;
SELECT launch_name, launch_ts, launch_end_ts, gpu_category, gpu_ts, stream_free_ts, queued,
  latency_ns, queue_ns, turnaround_ns
FROM guide_launch_queue
ORDER BY launch_ts;
