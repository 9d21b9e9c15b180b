-- trace: reference:mi300x-sglang-graph-replay.json.gz
-- what: a gap whose next kernel was launched as the GPU ran dry but then held back for 463 ms behind a hipStreamWaitEvent is 'other', not 'host': the work started long after its launch returned (the longest gap of the trace, whole trace as the loop)
INCLUDE PERFETTO MODULE guide.windows;
SELECT device, dur, cause
FROM guide_windows_gpu_gap
ORDER BY dur DESC
LIMIT 1;
