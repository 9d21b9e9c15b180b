-- Peak memory bandwidth of the GPUs this page can compare against (vendor datasheets)
-- output: table
-- columns: gpu=GPU, name_glob=torch.cuda.get_device_name() matches, datasheet=Datasheet figure (decimal: 1 TB/s = 10¹² bytes/s), peak_bytes_per_s=The same peak in binary units (1 TiB/s = 2⁴⁰ bytes/s), source=Source
INCLUDE PERFETTO MODULE guide.hardware;

SELECT gpu, name_glob, datasheet, peak_bytes_per_s, source
FROM guide_hardware_peak
ORDER BY peak_bytes_per_s DESC, gpu;
