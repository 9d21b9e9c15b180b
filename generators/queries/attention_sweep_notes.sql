-- At the shortest and longest lengths of the sweep, what bounds the unfused version, and how many kernels does the math backend launch?
-- output: values
-- question_ja: スイープの最短と最長の系列長で、融合していない版を律速するものは何か、また math バックエンドはいくつのカーネルを起動するか
-- needs: cuda
INCLUDE PERFETTO MODULE guide.attention;
INCLUDE PERFETTO MODULE guide.hardware;

-- Sweep captures only (labelled forwards `attn_fwd/<impl>/...`); elsewhere every value is NULL.
-- Bandwidths divide the bytes counted from shapes (guide_attention_traffic_in) by GPU time.
WITH
  s AS (
    SELECT
      impl,
      seq,
      AVG(gpu_ns) AS gpu_ns,
      AVG(kernels) AS kernels,
      AVG(traffic_bytes) AS traffic_bytes,
      MIN(batch * heads * seq * seq * elem_bytes) AS score_bytes
    FROM guide_attention_forward_summary
    WHERE impl IS NOT NULL
    GROUP BY impl, seq
  ),
  inplace AS (
    SELECT *, 1e9 * traffic_bytes / NULLIF(gpu_ns, 0) AS bytes_per_s
    FROM s WHERE impl = 'naive_inplace'
  ),
  short AS (SELECT * FROM inplace ORDER BY seq LIMIT 1),
  best AS (SELECT * FROM inplace ORDER BY bytes_per_s DESC LIMIT 1),
  math AS (SELECT * FROM s WHERE impl = 'sdpa_math'),
  peak AS (SELECT guide_hardware_peak_bytes_per_s() AS bytes_per_s)
SELECT
  (SELECT MIN(seq) FROM s) AS short_seq,
  (SELECT MAX(seq) FROM s) AS long_seq,
  -- The in-place version at the shortest length: one score matrix, GPU time per kernel, and the
  -- rate its kernels move their bytes at, also as a share of the datasheet peak.
  (SELECT score_bytes FROM short) AS short_score_matrix_bytes,
  (SELECT gpu_ns / kernels FROM short) AS short_kernel_ns,
  (SELECT bytes_per_s FROM short) AS short_traffic_bytes_per_s,
  (SELECT 100.0 * short.bytes_per_s / peak.bytes_per_s FROM short, peak) AS short_peak_pct,
  -- The length at which the in-place version moves its bytes fastest, and that rate.
  (SELECT seq FROM best) AS best_seq,
  (SELECT bytes_per_s FROM best) AS best_traffic_bytes_per_s,
  (SELECT 100.0 * best.bytes_per_s / peak.bytes_per_s FROM best, peak) AS best_peak_pct,
  -- Kernels per forward of the math backend at the longest length, and at every other length.
  (SELECT kernels FROM math WHERE seq = (SELECT MAX(seq) FROM s)) AS math_long_kernels,
  (SELECT MAX(kernels) FROM math WHERE seq < (SELECT MAX(seq) FROM s)) AS math_other_kernels,
  (SELECT bytes_per_s FROM peak) AS peak_bytes_per_s,
  -- The highest full-count FLOP rate in the sweep, and the GPU's dense bf16 peak it stays under.
  (
    SELECT MAX(flops / NULLIF(gpu_ns, 0) / 1e3)
    FROM (
      SELECT MIN(flops) AS flops, AVG(gpu_ns) AS gpu_ns
      FROM guide_attention_forward_summary WHERE impl IS NOT NULL GROUP BY impl, seq
    )
  ) AS best_gpu_tflops,
  guide_hardware_peak_tflops('bf16') AS peak_bf16_tflops;
