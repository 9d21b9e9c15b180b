-- trace: reference:a100-simple-add.json.gz
-- what: five cudaDeviceSynchronize calls, each with the GPU work it waited for (busy time at most the call's width) and its tail
INCLUDE PERFETTO MODULE guide.launch;
SELECT name, ts, dur, pending_activities, gpu_busy_ns, last_gpu_end, tail_ns,
  gpu_busy_ns <= dur AS busy_within_call
FROM guide_launch_sync
ORDER BY ts;
