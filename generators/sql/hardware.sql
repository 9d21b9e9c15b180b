-- The hardware a trace ran on and what that hardware can do at most: the one table of GPU peaks
-- in the guide, and the trace's own GPU.
--
-- Peaks are the vendors' datasheet figures for *dense* math. NVIDIA's datasheets print tensor-core
-- rates "with sparsity" (2:4 structured sparsity, which dense PyTorch GEMMs never use) at twice the
-- dense rate; those figures are halved here and the `compute_datasheet` column says so. A rate a
-- trace shows above its GPU's peak is a wrong number (a wrong denominator, a wrong FLOP count),
-- never a fast kernel: tests/test_physics.py holds every derived rate to these figures.
--
-- Which GPU a trace ran on: Kineto writes the GPUs it saw in the trace's top-level
-- `deviceProperties`, which Perfetto's JSON importer does not import. `generators.tp.open_trace`
-- reads that block from the trace itself and defines the session table `guide_trace_device`
-- (device, name, memory_bytes, compute_major, compute_minor, sms; no rows on a CPU-only trace)
-- before any query runs, so this module needs a trace opened that way.

INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.kernel_names;

-- Peak rates of the GPUs the guide knows, from the vendors' datasheets: one row per GPU model.
CREATE PERFETTO TABLE guide_hardware_peak(
  -- GPU as the datasheet names it.
  gpu STRING,
  -- GLOB pattern matching the device name (torch.cuda.get_device_name(), Kineto's
  -- deviceProperties name) of that GPU; no name matches two rows.
  name_glob STRING,
  -- Dense bf16 tensor-core peak (TFLOP/s, fp32 accumulate); NULL where the GPU has no bf16 math.
  bf16_tflops DOUBLE,
  -- Dense fp16 tensor-core peak (TFLOP/s, fp32 accumulate).
  fp16_tflops DOUBLE,
  -- Dense tf32 tensor-core peak (TFLOP/s): fp32 inputs on tensor cores; NULL where none.
  tf32_tflops DOUBLE,
  -- Dense fp8 tensor-core peak (TFLOP/s); NULL where the GPU has no fp8 math.
  fp8_tflops DOUBLE,
  -- fp32 peak without tensor cores (TFLOP/s: FMA units, e.g. cuBLAS's `sgemm`/`ffma` kernels).
  fp32_tflops DOUBLE,
  -- Peak memory bandwidth (bytes per second; the datasheet's TB/s x 1e12).
  peak_bytes_per_s DOUBLE,
  -- The bandwidth as the datasheet prints it.
  datasheet STRING,
  -- The bf16 (or, without bf16, fp16) tensor-core figure as the datasheet prints it, and whether
  -- it was halved from a "with sparsity" figure.
  compute_datasheet STRING,
  -- Where the numbers come from.
  source STRING
) AS
WITH peak(
  gpu, name_glob, bf16_tflops, fp16_tflops, tf32_tflops, fp8_tflops, fp32_tflops,
  peak_bytes_per_s, datasheet, compute_datasheet, source
) AS (VALUES
  ('H200 SXM', 'NVIDIA H200', 989.5, 989.5, 494.5, 1979.0, 67.0, 4.8e12, '4.8 TB/s',
    'BF16 1,979 TFLOPS with sparsity, halved',
    'https://www.nvidia.com/en-us/data-center/h200/'),
  ('H200 NVL', 'NVIDIA H200 NVL', 835.5, 835.5, 417.5, 1670.5, 60.0, 4.8e12, '4.8 TB/s',
    'BF16 1,671 TFLOPS with sparsity, halved',
    'https://www.nvidia.com/en-us/data-center/h200/'),
  ('H100 SXM', 'NVIDIA H100 80GB HBM3', 989.5, 989.5, 494.5, 1979.0, 67.0, 3.35e12, '3.35 TB/s',
    'BF16 1,979 TFLOPS with sparsity, halved',
    'https://www.nvidia.com/en-us/data-center/h100/'),
  ('H100 NVL', 'NVIDIA H100 NVL', 835.5, 835.5, 417.5, 1670.5, 60.0, 3.9e12, '3.9 TB/s',
    'BF16 1,671 TFLOPS with sparsity, halved',
    'https://www.nvidia.com/en-us/data-center/h100/'),
  ('H100 PCIe', 'NVIDIA H100 PCIe', 756.5, 756.5, 378.0, 1513.0, 51.0, 2.0e12, '2 TB/s',
    'BF16 1,513 TFLOPS with sparsity, halved',
    'https://www.nvidia.com/en-us/data-center/h100/'),
  ('A100 80GB SXM', 'NVIDIA A100-SXM4-80GB', 312.0, 312.0, 156.0, NULL, 19.5, 2.039e12,
    '2,039 GB/s', 'BF16 312 TFLOPS (624 with sparsity)',
    'https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf'),
  ('A100 80GB PCIe', 'NVIDIA A100 80GB PCIe', 312.0, 312.0, 156.0, NULL, 19.5, 1.935e12,
    '1,935 GB/s', 'BF16 312 TFLOPS (624 with sparsity)',
    'https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf'),
  ('A100 40GB SXM', 'NVIDIA A100-SXM4-40GB', 312.0, 312.0, 156.0, NULL, 19.5, 1.555e12,
    '1,555 GB/s', 'BF16 312 TFLOPS (624 with sparsity)',
    'https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf'),
  ('A100 40GB PCIe', 'NVIDIA A100-PCIE-40GB', 312.0, 312.0, 156.0, NULL, 19.5, 1.555e12,
    '1,555 GB/s', 'BF16 312 TFLOPS (624 with sparsity)',
    'https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf'),
  ('L40S', 'NVIDIA L40S', 362.05, 362.05, 183.0, 733.0, 91.6, 0.864e12, '864 GB/s',
    'BF16 733 TFLOPS with sparsity, halved (the datasheet prints dense 362.05 beside it)',
    'https://www.nvidia.com/en-us/data-center/l40s/'),
  ('L4', 'NVIDIA L4', 121.0, 121.0, 60.0, 242.5, 30.3, 0.3e12, '300 GB/s',
    'BF16 242 TFLOPS with sparsity, halved',
    'https://www.nvidia.com/en-us/data-center/l4/'),
  -- GeForce Ada runs fp16/bf16 with fp32 accumulate (what PyTorch uses) at half the rate of
  -- fp16 accumulate: the figures are the fp32-accumulate ones of the architecture whitepaper.
  ('GeForce RTX 4090', 'NVIDIA GeForce RTX 4090', 165.2, 165.2, 82.6, 330.3, 82.6, 1.008e12,
    '1,008 GB/s',
    'FP16/BF16 tensor with FP32 accumulate 165.2 TFLOPS (330.4 with sparsity)',
    'https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf'),
  -- Volta has fp16 tensor cores only: no bf16, tf32 or fp8 math.
  ('V100 SXM2', 'Tesla V100-SXM2-*', NULL, 125.0, NULL, NULL, 15.7, 0.9e12, '900 GB/s',
    'Tensor 125 TFLOPS (fp16; no sparsity on Volta)',
    'https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf'),
  ('V100 PCIe', 'Tesla V100-PCIE-*', NULL, 112.0, NULL, NULL, 14.0, 0.9e12, '900 GB/s',
    'Tensor 112 TFLOPS (fp16; no sparsity on Volta)',
    'https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf'),
  -- AMD prints dense figures first and sparse ones separately.
  ('Instinct MI300X', 'AMD Instinct MI300X*', 1307.4, 1307.4, 653.7, 2614.9, 163.4, 5.3e12,
    '5.3 TB/s', 'BF16 1,307.4 TFLOPS dense (2,614.9 with sparsity)',
    'https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/amd-instinct-mi300x-data-sheet.pdf')
)
SELECT
  gpu, name_glob, bf16_tflops, fp16_tflops, tf32_tflops, fp8_tflops, fp32_tflops,
  peak_bytes_per_s, datasheet, compute_datasheet, source
FROM peak;

-- The GPU the trace's kernels ran on, with its peaks when the guide knows the model (NULL peaks
-- for an unknown GPU). The device that ran the most kernels; the first listed without kernels.
-- No row on a CPU-only trace.
CREATE PERFETTO VIEW guide_hardware_device(
  -- Device index (pid of its GPU tracks).
  device LONG,
  -- Device name as the trace records it, e.g. 'NVIDIA H200'.
  name STRING,
  -- GPU model of guide_hardware_peak, or NULL when unknown.
  gpu STRING,
  -- Dense bf16 tensor-core peak (TFLOP/s).
  bf16_tflops DOUBLE,
  -- Dense fp16 tensor-core peak (TFLOP/s).
  fp16_tflops DOUBLE,
  -- Dense tf32 tensor-core peak (TFLOP/s).
  tf32_tflops DOUBLE,
  -- Dense fp8 tensor-core peak (TFLOP/s).
  fp8_tflops DOUBLE,
  -- fp32 peak without tensor cores (TFLOP/s).
  fp32_tflops DOUBLE,
  -- Peak memory bandwidth (bytes per second).
  peak_bytes_per_s DOUBLE
) AS
WITH
  busiest AS (
    SELECT device FROM guide_kineto_gpu_activity
    WHERE category = 'kernel'
    GROUP BY device
    ORDER BY COUNT(*) DESC, device
    LIMIT 1
  ),
  chosen AS (
    SELECT d.device, d.name
    FROM guide_trace_device AS d
    ORDER BY d.device = (SELECT device FROM busiest) DESC, d.device
    LIMIT 1
  )
SELECT
  c.device, c.name, p.gpu, p.bf16_tflops, p.fp16_tflops, p.tf32_tflops, p.fp8_tflops,
  p.fp32_tflops, p.peak_bytes_per_s
FROM chosen AS c
LEFT JOIN guide_hardware_peak AS p ON c.name GLOB p.name_glob;

-- Which peak a matrix multiply is held to: 'bf16', 'fp16', 'fp8', 'tf32' or 'fp32', from its
-- input type and the kernel that ran it. fp32 inputs run on tensor cores as tf32 when the kernel
-- name says so (`tf32`, or an MMA instruction shape), and on the FMA units when it names them
-- (`sgemm`, `ffma`); NULL when neither is stated, or for any other type.
CREATE PERFETTO FUNCTION guide_hardware_gemm_math(
  -- Input type label as guide_dtypes_label gives it ('bf16', 'fp32', 'fp8 e4m3fn'...), or
  -- NULL to read it from the kernel name.
  dtype STRING,
  -- Name of the kernel that ran the multiply (NULL on a CPU trace).
  kernel_name STRING
)
-- The math whose peak applies, or NULL.
RETURNS STRING AS
SELECT CASE
  WHEN d GLOB 'fp8*' THEN 'fp8'
  WHEN d IN ('bf16', 'fp16', 'tf32') THEN d
  WHEN d = 'fp32' AND (
      guide_kernel_names_dtype($kernel_name) = 'tf32'
      OR guide_kernel_names_mma($kernel_name) IS NOT NULL
    ) THEN 'tf32'
  WHEN d = 'fp32' AND ($kernel_name GLOB '*sgemm*' OR $kernel_name GLOB '*ffma*') THEN 'fp32'
  ELSE NULL
END
FROM (SELECT COALESCE($dtype, guide_kernel_names_dtype($kernel_name)) AS d);

-- The trace's GPU's dense peak for one kind of math (TFLOP/s); NULL on a CPU trace, an unknown
-- GPU, or math the GPU lacks.
CREATE PERFETTO FUNCTION guide_hardware_peak_tflops(
  -- 'bf16', 'fp16', 'tf32', 'fp8' or 'fp32' (as guide_hardware_gemm_math returns).
  math STRING
)
-- Peak in TFLOP/s, or NULL.
RETURNS DOUBLE AS
SELECT CASE $math
  WHEN 'bf16' THEN bf16_tflops
  WHEN 'fp16' THEN fp16_tflops
  WHEN 'tf32' THEN tf32_tflops
  WHEN 'fp8' THEN fp8_tflops
  WHEN 'fp32' THEN fp32_tflops
END
FROM guide_hardware_device;

-- The trace's GPU's peak memory bandwidth (bytes per second); NULL on a CPU trace or an unknown
-- GPU.
CREATE PERFETTO FUNCTION guide_hardware_peak_bytes_per_s()
-- Bytes per second, or NULL.
RETURNS DOUBLE AS
SELECT peak_bytes_per_s FROM guide_hardware_device;

-- The roofline: the highest rate (TFLOP/s) the trace's GPU can reach on work that does
-- `flop_per_byte` floating-point operations per byte it moves, held to one kind of math's peak:
-- the lesser of that peak and the memory bandwidth x the intensity. Below the ridge point
-- (peak / bandwidth) the roof is the bandwidth's; above it, the math's. NULL on a CPU trace, an
-- unknown GPU, math the GPU lacks, or no intensity.
CREATE PERFETTO FUNCTION guide_hardware_roof_tflops(
  -- 'bf16', 'fp16', 'tf32', 'fp8' or 'fp32' (as guide_hardware_gemm_math returns).
  math STRING,
  -- Arithmetic intensity: floating-point operations per byte moved.
  flop_per_byte DOUBLE
)
-- The attainable rate in TFLOP/s, or NULL.
RETURNS DOUBLE AS
SELECT MIN(
  guide_hardware_peak_tflops($math),
  guide_hardware_peak_bytes_per_s() * $flop_per_byte / 1e12
);
