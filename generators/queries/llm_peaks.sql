-- Peak memory bandwidth of the GPUs this page can compare against (vendor datasheets)
-- output: table
-- columns: gpu=GPU, name_glob=torch.cuda.get_device_name() matches, datasheet=Datasheet figure (decimal: 1 TB/s = 10¹² bytes/s), peak_bytes_per_s=The same peak in binary units (1 TiB/s = 2⁴⁰ bytes/s), source=Source
-- question_ja: このページが比較に使える GPU のピークメモリ帯域幅（ベンダーのデータシートから）
-- columns_ja: gpu=GPU, name_glob=torch.cuda.get_device_name() の照合パターン, datasheet=データシートの値（10 進単位: 1 TB/s = 10¹² bytes/s）, peak_bytes_per_s=同じピークを 2 進単位で（1 TiB/s = 2⁴⁰ bytes/s）, source=出典
INCLUDE PERFETTO MODULE guide.hardware;

SELECT gpu, name_glob, datasheet, peak_bytes_per_s, source
FROM guide_hardware_peak
ORDER BY peak_bytes_per_s DESC, gpu;
