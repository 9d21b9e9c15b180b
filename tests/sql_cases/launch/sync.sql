-- trace: mini:steps_idle_gap_sync.json
-- what: a cudaDeviceSynchronize that waited for one running kernel: 50 us of GPU work inside it, a 15 us tail after it
INCLUDE PERFETTO MODULE guide.launch;
SELECT name, ts, dur, pending_activities, gpu_busy_ns, last_gpu_end, tail_ns
FROM guide_launch_sync
ORDER BY ts;
