-- trace: mini:overlap_and_drop.json
-- what: the GPU named in deviceProperties, matched to its datasheet peaks
INCLUDE PERFETTO MODULE guide.hardware;
SELECT device, name, gpu, bf16_tflops, fp16_tflops, tf32_tflops, fp8_tflops, fp32_tflops,
  peak_bytes_per_s
FROM guide_hardware_device;
