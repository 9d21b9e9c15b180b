-- Model-FLOPs utilisation of the training step: the model's work per step against the step's time at the GPU's dense bf16 peak
-- output: values
-- needs: cuda
-- question_ja: 学習ステップのモデル FLOPs 使用率 (MFU): ステップあたりのモデルの演算量を、ステップの時間と GPU の密な bf16 ピーク性能に対して
INCLUDE PERFETTO MODULE guide.traffic;
INCLUDE PERFETTO MODULE guide.train;
INCLUDE PERFETTO MODULE guide.hardware;

WITH
  steps AS (SELECT COUNT(*) AS n, SUM(dur) AS step_ns FROM guide_train_step),
  gemm AS (SELECT SUM(flops) AS flops FROM guide_train_gemm),
  param AS (SELECT SUM(numel) AS numel FROM guide_train_param),
  -- Tokens per step: the elements of the token ids the embedding reads (its second input), in
  -- the first profiled forward.
  tokens AS (
    SELECT guide_traffic_input_numel(s.arg_set_id, 1) AS n
    FROM guide_train_phase AS p
    JOIN guide_train_phase_op AS o ON o.phase_id = p.id
    JOIN slice AS s ON s.id = o.id
    WHERE p.phase = 'forward' AND o.name = 'aten::embedding'
    ORDER BY p.step
    LIMIT 1
  ),
  peak AS (SELECT guide_hardware_peak_tflops('bf16') AS tflops)
SELECT
  -- The GEMMs' FLOPs per step, from the shapes the trace recorded (guide_train_gemm: forward
  -- and backward, every matrix product the step ran, attention's included where it is a GEMM).
  ROUND(gemm.flops / 1e9 / steps.n, 4) AS gemm_gflop_per_step,
  param.numel AS parameters,
  tokens.n AS tokens_per_step,
  -- The rule of thumb for a transformer's forward and backward: 6 FLOPs per parameter per token.
  ROUND(6.0 * param.numel * tokens.n / 1e9, 4) AS six_nt_gflop_per_step,
  -- The mean step: the profiled steps' summed width over their number (ProfilerStep#N).
  CAST(steps.step_ns / steps.n AS INT) AS step_mean_ns,
  -- MFU: the GEMM FLOPs per step over what the step's time could do at the dense bf16 peak.
  100.0 * gemm.flops / steps.n / NULLIF(steps.step_ns / steps.n * 1e3 * peak.tflops, 0)
    AS mfu_pct,
  -- The same with 6 x parameters x tokens for the model's work.
  100.0 * 6.0 * param.numel * tokens.n / NULLIF(steps.step_ns / steps.n * 1e3 * peak.tflops, 0)
    AS mfu_six_nt_pct
FROM steps, gemm, peak
-- A compiled forward runs no per-layer operators (Inductor's code calls the GEMMs directly): no
-- parameters or tokens are read there, and those columns are NULL.
LEFT JOIN param
LEFT JOIN tokens;
