-- Peak memory bandwidth of the GPUs this page can compare against (vendor datasheets)
-- output: table
-- columns: gpu=GPU, name_glob=torch.cuda.get_device_name() matches, datasheet=Datasheet, peak_per_s_bytes=Peak memory bandwidth (per second), source=Source
INCLUDE PERFETTO MODULE guide.llm;

SELECT gpu, name_glob, datasheet, peak_bytes_per_s AS peak_per_s_bytes, source
FROM guide_llm_gpu_peak
ORDER BY peak_bytes_per_s DESC, gpu;
