-- The optimizer step's memory traffic: bytes per parameter, bandwidth over its kernels' time, share of the GPU's peak bandwidth
-- output: values
-- needs: cuda
-- question_ja: オプティマイザのステップのメモリトラフィック: パラメータあたりのバイト数、カーネル時間に対する帯域幅、GPU のピーク帯域幅に対する割合
INCLUDE PERFETTO MODULE guide.train;
INCLUDE PERFETTO MODULE guide.hardware;

WITH
  steps AS (SELECT COUNT(*) AS n FROM guide_train_step),
  param AS (SELECT SUM(numel) AS numel, MAX(elem_bytes) AS elem_bytes FROM guide_train_param),
  opt AS (SELECT * FROM guide_train_phase_cost WHERE phase = 'optimizer'),
  -- Each optimizer operator's bytes (guide_train_optimizer_op: shapes for single-tensor
  -- operators, operands x parameters for multi-tensor ones over every parameter).
  counted AS (
    SELECT
      COALESCE(SUM(bytes), 0) AS bytes,
      SUM(NOT listed) + SUM(listed AND NOT small) AS calls,
      IIF(SUM(listed) > 0, SUM(listed AND small), NULL) AS small_calls
    FROM guide_train_optimizer_op
  ),
  -- The optimizer's GPU time: the union of the work it launched (guide_train_phase_cost.gpu_ns).
  gpu AS (SELECT SUM(gpu_ns) AS gpu_ns FROM opt)
SELECT
  param.numel AS parameters,
  param.elem_bytes AS parameter_elem_bytes,
  CAST(counted.bytes / steps.n AS INT) AS optimizer_traffic_bytes,
  ROUND(counted.bytes * 1.0 / steps.n / param.numel, 2) AS bytes_per_parameter,
  counted.calls * 1.0 / steps.n AS counted_calls,
  counted.small_calls * 1.0 / steps.n AS small_list_calls,
  CAST(gpu.gpu_ns / steps.n AS INT) AS optimizer_gpu_ns,
  -- Bytes over the optimizer's GPU time.
  counted.bytes * 1e9 / NULLIF(gpu.gpu_ns, 0) AS optimizer_achieved_bytes_per_s,
  100.0 * counted.bytes * 1e9 / NULLIF(gpu.gpu_ns, 0) / guide_hardware_peak_bytes_per_s()
    AS optimizer_bytes_peak_pct
FROM steps, param, counted, gpu;
