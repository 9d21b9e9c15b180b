-- The optimizer step's memory traffic: bytes per parameter, bandwidth over its kernels' time, share of the GPU's peak bandwidth
-- output: values
-- needs: cuda
-- question_ja: オプティマイザのステップのメモリトラフィック: パラメータあたりのバイト数、カーネル時間に対する帯域幅、GPU のピーク帯域幅に対する割合
INCLUDE PERFETTO MODULE guide.train;
INCLUDE PERFETTO MODULE guide.traffic;
INCLUDE PERFETTO MODULE guide.hardware;

WITH
  steps AS (SELECT COUNT(*) AS n FROM guide_train_step),
  param AS (SELECT SUM(numel) AS numel, MAX(elem_bytes) AS elem_bytes FROM guide_train_param),
  opt AS (SELECT * FROM guide_train_phase_cost WHERE phase = 'optimizer'),
  -- Each optimizer kernel with the operator whose launch call started it, and its blocks.
  k AS MATERIALIZED (
    SELECT
      op.id AS op_id,
      op.name AS op_name,
      op.arg_set_id,
      COALESCE(extract_arg(ks.arg_set_id, 'args.grid[0]'), 1)
        * COALESCE(extract_arg(ks.arg_set_id, 'args.grid[1]'), 1)
        * COALESCE(extract_arg(ks.arg_set_id, 'args.grid[2]'), 1) AS blocks
    FROM opt
    JOIN guide_train_phase_gpu AS g ON g.phase_id = opt.id AND g.category = 'kernel'
    JOIN slice AS r ON r.id = g.launch_id
    JOIN slice AS op ON op.id = r.parent_id
    JOIN slice AS ks ON ks.id = g.gpu_id
  ),
  ops AS MATERIALIZED (
    SELECT op_id AS id, op_name AS name, arg_set_id, SUM(blocks) AS blocks
    FROM k GROUP BY op_id
  ),
  -- Single-tensor operators record their shapes: the traffic module counts their bytes.
  shaped AS (
    SELECT SUM(t.read_bytes + t.write_bytes) AS bytes, COUNT(*) AS calls
    FROM guide_traffic_op!((
      SELECT id, name, arg_set_id FROM ops WHERE name NOT GLOB 'aten::_f*'
    )) AS t
  ),
  -- Multi-tensor operators record no shapes: each runs over every parameter, so its bytes are
  -- its operands per element x the parameters' elements x their element size. A call whose
  -- kernels have fewer blocks than the parameters need (multi_tensor_apply gives each block at
  -- most 65,536 elements) runs over smaller tensors, the step counters: a few bytes, left out.
  listed AS (
    SELECT
      SUM(IIF(ops.blocks * 65536 >= param.numel,
        guide_traffic_list_operands(ops.name) * param.numel * param.elem_bytes, 0)) AS bytes,
      SUM(ops.blocks * 65536 >= param.numel) AS calls,
      SUM(ops.blocks * 65536 < param.numel) AS small_calls
    FROM ops, param
    WHERE ops.name GLOB 'aten::_f*'
  ),
  total AS (
    SELECT COALESCE(shaped.bytes, 0) + COALESCE(listed.bytes, 0) AS bytes FROM shaped, listed
  ),
  -- The optimizer's GPU time: the union of the work it launched (guide_train_phase_cost.gpu_ns).
  gpu AS (SELECT SUM(gpu_ns) AS gpu_ns FROM opt)
SELECT
  param.numel AS parameters,
  param.elem_bytes AS parameter_elem_bytes,
  CAST(total.bytes / steps.n AS INT) AS optimizer_traffic_bytes,
  ROUND(total.bytes * 1.0 / steps.n / param.numel, 2) AS bytes_per_parameter,
  (SELECT COALESCE(shaped.calls, 0) + COALESCE(listed.calls, 0) FROM shaped, listed) * 1.0
    / steps.n AS counted_calls,
  listed.small_calls * 1.0 / steps.n AS small_list_calls,
  CAST(gpu.gpu_ns / steps.n AS INT) AS optimizer_gpu_ns,
  -- Bytes over the optimizer's GPU time.
  total.bytes * 1e9 / NULLIF(gpu.gpu_ns, 0) AS optimizer_achieved_bytes_per_s,
  100.0 * total.bytes * 1e9 / NULLIF(gpu.gpu_ns, 0) / guide_hardware_peak_bytes_per_s()
    AS optimizer_bytes_peak_pct
FROM steps, param, total, listed, gpu;
