-- trace: mini:overlap_and_drop.json
-- what: kernels and copies on two streams; the split-K reduce kernel that partly overlaps its GEMM on stream 7 is dropped by the importer and so is not here
INCLUDE PERFETTO MODULE guide.kineto;
SELECT ts, dur, category, device, stream, substr(name, 1, 40) AS name
FROM guide_kineto_gpu_activity
ORDER BY ts;
