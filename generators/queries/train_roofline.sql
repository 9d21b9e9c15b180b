-- Where a training step's GPU work sits on the GPU's roofline: floating-point work and bytes per kind of work, the rate achieved, and the roof at that intensity
-- output: table
-- needs: cuda
-- columns: phase=Phase, kind=Work, math=Held to, kernels=Kernels per step, kernel_ns=Kernel time per step, counted_pct=Time counted, gflop=GFLOP per step, traffic_bytes=Bytes per step, flop_per_byte=FLOP per byte, achieved_tflops=Achieved, achieved_bytes_per_s=Bandwidth, bytes_peak_pct=% of peak bandwidth, peak_roof_tflops=Roof at that intensity, roof_pct=% of the roof, peak_tflops=Peak of that math, peak_bytes_per_s=Peak bandwidth
-- question_ja: 学習ステップの GPU 処理がルーフライン上のどこにあるか: 処理の種類ごとの演算量とバイト数、達成した性能、その演算強度でのルーフ
-- columns_ja: phase=フェーズ, kind=処理, math=対応するピーク, kernels=ステップあたりのカーネル数, kernel_ns=ステップあたりのカーネル時間, counted_pct=数えた時間, gflop=ステップあたりの GFLOP, traffic_bytes=ステップあたりのバイト数, flop_per_byte=バイトあたりの FLOP, achieved_tflops=達成性能, achieved_bytes_per_s=帯域幅, bytes_peak_pct=ピーク帯域幅に対する %, peak_roof_tflops=その演算強度でのルーフ, roof_pct=ルーフに対する %, peak_tflops=その演算のピーク性能, peak_bytes_per_s=ピーク帯域幅
-- shown: phase, kind, math, kernel_ns, counted_pct, flop_per_byte, achieved_tflops, achieved_bytes_per_s, bytes_peak_pct, roof_pct
INCLUDE PERFETTO MODULE guide.train;
INCLUDE PERFETTO MODULE guide.gemm;
INCLUDE PERFETTO MODULE guide.traffic;
INCLUDE PERFETTO MODULE guide.dtypes;
INCLUDE PERFETTO MODULE guide.hardware;

WITH
  steps AS (SELECT COUNT(*) AS n FROM guide_train_step),
  -- Every kernel of the step's phases, with the operator whose launch call started it.
  launched AS MATERIALIZED (
    SELECT p.phase, g.dur, op.id AS op_id, op.name AS op_name, op.arg_set_id
    FROM guide_train_phase AS p
    JOIN guide_train_phase_gpu AS g ON g.phase_id = p.id AND g.category = 'kernel'
    JOIN slice AS r ON r.id = g.launch_id
    JOIN slice AS op ON op.id = r.parent_id
  ),
  ops AS MATERIALIZED (
    SELECT op_id AS id, op_name AS name, arg_set_id, phase, COUNT(*) AS kernels,
      SUM(dur) AS kernel_dur
    FROM launched
    GROUP BY op_id
  ),
  -- Matrix multiplies: 2 x batch x M x N x K (guide_gemm_op); bytes: both operands read and the
  -- product written once, each at the first operand's element size.
  gemm AS (
    SELECT o.id, 'GEMM' AS kind,
      guide_hardware_gemm_math(guide_dtypes_label(g.dtype), g.kernel_name) AS math,
      g.flops,
      g.batch * (g.m * g.k + g.k * g.n + g.m * g.n) * g.element_bytes AS bytes
    FROM ops AS o
    JOIN guide_gemm_op AS g ON g.id = o.id
  ),
  -- Fused attention (cuDNN's or FlashAttention's operator): query [B, H, Sq, D], key and value
  -- [B, Hkv, Sk, D]. The forward's two matrix products cost 4 x B x H x Sq x Sk x D, over the
  -- entries a causal mask keeps (the diagonal included) when the call says is_causal; the
  -- backward's four cost twice that (a kernel that recomputes the scores does a quarter more,
  -- not counted). Bytes: the forward reads query, key and value and writes an output as large as
  -- the query plus one fp32 log-sum-exp per query row; the backward reads the output's gradient,
  -- query, key, value, output and log-sum-exp and writes the gradients of query, key and value.
  attn_shape AS (
    SELECT o.id, o.name, o.arg_set_id,
      o.name GLOB '*_backward' AS backward,
      -- The backward's first input is the output's gradient: the query is its second.
      IIF(o.name GLOB '*_backward', 1, 0) AS q,
      extract_arg(o.arg_set_id, 'args.Concrete Inputs[' || CASE o.name
          WHEN 'aten::_cudnn_attention_forward' THEN 10
          WHEN 'aten::_cudnn_attention_backward' THEN 14
          WHEN 'aten::_flash_attention_forward' THEN 8
          WHEN 'aten::_flash_attention_backward' THEN 11
        END || ']') = 'True' AS causal
    FROM ops AS o
    WHERE o.name IN (
      'aten::_cudnn_attention_forward', 'aten::_cudnn_attention_backward',
      'aten::_flash_attention_forward', 'aten::_flash_attention_backward'
    )
  ),
  attn_dims AS (
    SELECT a.*,
      extract_arg(a.arg_set_id, 'args.Input Dims[' || a.q || '][0]') AS b,
      extract_arg(a.arg_set_id, 'args.Input Dims[' || a.q || '][1]') AS h,
      extract_arg(a.arg_set_id, 'args.Input Dims[' || a.q || '][2]') AS sq,
      extract_arg(a.arg_set_id, 'args.Input Dims[' || a.q || '][3]') AS d,
      extract_arg(a.arg_set_id, 'args.Input Dims[' || (a.q + 1) || '][2]') AS sk,
      guide_dtypes_label(extract_arg(a.arg_set_id, 'args.Input type[' || a.q || ']')) AS dtype
    FROM attn_shape AS a
  ),
  attn AS (
    SELECT id, 'attention' AS kind,
      IIF(dtype IN ('bf16', 'fp16'), dtype, NULL) AS math,
      IIF(backward, 2, 1) * IIF(causal AND sq = sk,
        2 * b * h * sq * (sk + 1) * d,
        4 * b * h * sq * sk * d) AS flops,
      IIF(backward,
        guide_traffic_input_bytes(arg_set_id, 0) + guide_traffic_input_bytes(arg_set_id, 1)
          + 2 * (guide_traffic_input_bytes(arg_set_id, 2)
            + guide_traffic_input_bytes(arg_set_id, 3))
          + guide_traffic_input_bytes(arg_set_id, 4) + guide_traffic_input_bytes(arg_set_id, 5)
          + guide_traffic_input_bytes(arg_set_id, 1),
        2 * guide_traffic_input_bytes(arg_set_id, 0) + guide_traffic_input_bytes(arg_set_id, 1)
          + guide_traffic_input_bytes(arg_set_id, 2) + b * h * sq * 4) AS bytes
    FROM attn_dims
  ),
  -- The optimizer's operators: their bytes as guide_train_optimizer_op counts them. Fused AdamW
  -- does about 15 floating-point operations per parameter, counted from its update: weight
  -- decay (2), the first moment (3), the second moment (4), the denominator's square root,
  -- division and epsilon (3), the step (3). Other optimizer operators: no count.
  optim AS (
    SELECT id, 'optimizer' AS kind, 'fp32' AS math,
      IIF(name IN ('aten::_fused_adamw_', 'aten::_fused_adam_') AND NOT small,
        (SELECT SUM(numel) FROM guide_train_param) * 15, NULL) AS flops,
      bytes
    FROM guide_train_optimizer_op
  ),
  -- Everything else: copies and fills move bytes and compute nothing; the rest (elementwise
  -- arithmetic, reductions, norms' pieces) is counted at one floating-point operation per
  -- element of its largest tensor, so its place along the roof's slope is a convention, while
  -- its height below the slope (its bandwidth against the peak) is measured.
  rest_ops AS MATERIALIZED (
    SELECT o.id, o.name, o.arg_set_id
    FROM ops AS o
    WHERE o.phase <> 'optimizer'
      AND o.id NOT IN (SELECT id FROM gemm UNION ALL SELECT id FROM attn)
  ),
  rest AS (
    SELECT r.id,
      IIF(r.name IN ('aten::copy_', 'aten::fill_', 'aten::zero_'), 'copies and fills',
        'elementwise and reductions') AS kind,
      -- Copies compute nothing: no roof of a math holds them, only the bandwidth.
      IIF(r.name IN ('aten::copy_', 'aten::fill_', 'aten::zero_'), NULL, 'fp32') AS math,
      IIF(r.name IN ('aten::copy_', 'aten::fill_', 'aten::zero_'), 0, MAX(
        COALESCE(t.write_numel, 0),
        COALESCE(guide_traffic_input_numel(r.arg_set_id, 0), 0),
        COALESCE(guide_traffic_input_numel(r.arg_set_id, 1), 0),
        COALESCE(guide_traffic_input_numel(r.arg_set_id, 2), 0)
      )) AS flops,
      NULLIF(t.read_bytes + t.write_bytes, 0) AS bytes
    FROM rest_ops AS r
    JOIN guide_traffic_op!(rest_ops) AS t ON t.op_id = r.id
  ),
  counted AS (
    SELECT * FROM gemm UNION ALL SELECT * FROM attn UNION ALL SELECT * FROM optim
    UNION ALL SELECT * FROM rest
  ),
  per_kind AS (
    SELECT o.phase, c.kind, c.math,
      SUM(o.kernels) AS kernels,
      SUM(o.kernel_dur) AS kernel_dur,
      SUM(IIF(c.bytes > 0 AND c.flops IS NOT NULL, o.kernel_dur, 0)) AS counted_dur,
      SUM(IIF(c.bytes > 0 AND c.flops IS NOT NULL, c.flops, 0)) AS flops,
      SUM(IIF(c.bytes > 0 AND c.flops IS NOT NULL, c.bytes, 0)) AS bytes
    FROM counted AS c
    JOIN ops AS o ON o.id = c.id
    GROUP BY o.phase, c.kind, c.math
  )
SELECT
  k.phase,
  k.kind,
  k.math,
  k.kernels * 1.0 / steps.n AS kernels,
  CAST(k.kernel_dur / steps.n AS INT) AS kernel_ns,
  -- The share of the kind's kernel time whose work and bytes are counted: the rates are over
  -- that time only.
  100.0 * k.counted_dur / NULLIF(k.kernel_dur, 0) AS counted_pct,
  ROUND(k.flops / 1e9 / steps.n, 4) AS gflop,
  CAST(k.bytes / steps.n AS INT) AS traffic_bytes,
  k.flops * 1.0 / NULLIF(k.bytes, 0) AS flop_per_byte,
  k.flops / (NULLIF(k.counted_dur, 0) * 1e3) AS achieved_tflops,
  k.bytes * 1e9 / NULLIF(k.counted_dur, 0) AS achieved_bytes_per_s,
  100.0 * k.bytes * 1e9 / NULLIF(k.counted_dur, 0) / guide_hardware_peak_bytes_per_s()
    AS bytes_peak_pct,
  guide_hardware_roof_tflops(k.math, k.flops * 1.0 / NULLIF(k.bytes, 0)) AS peak_roof_tflops,
  100.0 * k.flops / (NULLIF(k.counted_dur, 0) * 1e3)
    / guide_hardware_roof_tflops(k.math, k.flops * 1.0 / NULLIF(k.bytes, 0)) AS roof_pct,
  -- The datasheet's figures the roof is drawn from (guide.hardware).
  guide_hardware_peak_tflops(k.math) AS peak_tflops,
  guide_hardware_peak_bytes_per_s() AS peak_bytes_per_s
FROM per_kind AS k, steps
ORDER BY guide_train_phase_order(k.phase), k.kernel_dur DESC;
