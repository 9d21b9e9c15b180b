-- id: fp32-gemm
-- title: fp32 matrix multiplies that skip the tensor cores
-- severity: warning
-- param: gemm_pct_min = 5  Reported when these GEMMs take at least this share (%) of all kernel time.
-- needs: gpu, device
-- guide: part-2/03-kernel-names.md#library-gemms
-- breakdown: kernel
-- seen: GEMM kernels in fp32 on the FMA units (no tensor cores): {count}, {sum(cost_ns)} of
--   GPU time ({first(gemm_pct)} of all kernel time), on a GPU with tensor cores
--   ({first(gpu_name)}).
-- why: Tensor cores multiply matrices many times faster than the FMA units. On Ampere and later
--   GPUs PyTorch keeps fp32 matrix multiplies off them by default (TF32 is off for matmul, on for
--   cuDNN convolutions); a Volta or Turing GPU has no TF32 at all, only fp16 tensor cores. Kernel
--   names say which units ran: `sgemm`, `simt` and `ffma` mean FMA units.
-- try: On Ampere and later, allow TF32 (`torch.backends.cuda.matmul.allow_tf32 = True` or
--   `torch.set_float32_matmul_precision("high")`), or run the model under `torch.autocast` with
--   bf16; on Volta or Turing, autocast to fp16.
-- after: The GEMM kernels' names carry `tf32`, `bf16` or `f16` (fp16 on Volta/Turing) and an
--   MMA shape (e.g. `16816`), and their durations drop.
-- false-positives: A GEMM that must stay in full fp32 for accuracy; tiny GEMMs where the units
--   do not matter. The kernel name is the only evidence: a name that does not state its type is
--   not counted, and a custom kernel named like a GEMM with `float` in it is. GEMMs inside SDPA's
--   math backend are left to attention-materialised. Not checked on AMD GPUs (their GEMM names
--   say nothing about matrix cores in this form) or on a trace that does not list its GPU.
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.kernel_names;

WITH
  gpu AS (
    SELECT name, compute_major FROM guide_trace_device
    WHERE compute_major >= 7 AND name NOT GLOB '*AMD*'
    ORDER BY device LIMIT 1
  ),
  kernel AS MATERIALIZED (SELECT * FROM guide_kineto_gpu_activity WHERE category = 'kernel'),
  -- Each distinct name read once: a trace repeats a few names thousands of times.
  kernel_name AS MATERIALIZED (SELECT DISTINCT name FROM kernel),
  fp32_name AS MATERIALIZED (
    SELECT name FROM kernel_name
    WHERE guide_kernel_names_work(name) = 'GEMM'
      AND guide_kernel_names_dtype(name) = 'fp32'
      AND guide_kernel_names_mma(name) IS NULL
  ),
  -- SDPA's math backend computes in fp32 whatever the model's type: its GEMMs are that
  -- backend's finding (attention-materialised), not the model's precision.
  fp32 AS MATERIALIZED (
    SELECT k.* FROM kernel AS k
    WHERE k.name IN (SELECT name FROM fp32_name)
      AND NOT EXISTS (
        SELECT 1 FROM guide_kineto_launch_link AS ll
        JOIN ancestor_slice(ll.launch_id) AS a
        WHERE ll.gpu_id = k.id AND a.name = 'aten::_scaled_dot_product_attention_math'
      )
  ),
  total AS (
    SELECT (SELECT SUM(dur) FROM fp32) AS fp32_ns, (SELECT SUM(dur) FROM kernel) AS kernel_ns
  )
SELECT
  fp32.ts,
  fp32.dur,
  'GPU ' || fp32.device || ', stream ' || fp32.stream AS location,
  fp32.name AS what,
  fp32.dur AS cost_ns,
  fp32.name AS kernel,
  100.0 * total.fp32_ns / total.kernel_ns AS gemm_pct,
  gpu.name AS gpu_name
FROM fp32, total, gpu
WHERE total.kernel_ns > 0 AND 100.0 * total.fp32_ns / total.kernel_ns >= {{gemm_pct_min}}
ORDER BY fp32.dur DESC
