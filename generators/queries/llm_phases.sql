-- Prefill against decode: what one forward of each phase costs, on average
-- output: table
-- columns: phase=Phase, forwards=Forwards per generate call, cpu_ns=CPU time per forward, token_ns=Turn per forward (forward + generate's own work), cpu_ops=CPU ops per forward, kernel_launches=Kernel launches per forward, graph_launches=CUDA graph launches per forward, kernels=Kernels per forward, kernel_ns=GPU kernel time per forward
-- question_ja: プリフィルとデコードの比較: 各フェーズの順伝播 1 回にかかる平均コスト
-- columns_ja: phase=フェーズ, forwards=generate 1 回あたりの順伝播の回数, cpu_ns=順伝播 1 回あたりの CPU 時間, token_ns=順伝播 1 回あたりのターン（順伝播 + generate 自身の処理）, cpu_ops=順伝播 1 回あたりの CPU 演算子数, kernel_launches=順伝播 1 回あたりのカーネル起動数, graph_launches=順伝播 1 回あたりの CUDA グラフ起動数, kernels=順伝播 1 回あたりのカーネル数, kernel_ns=順伝播 1 回あたりの GPU カーネル時間
INCLUDE PERFETTO MODULE guide.llm;

WITH
  fwd AS (SELECT id AS window_id, ts, dur, track_id, phase, token_dur FROM guide_llm_forward),
  cost AS (SELECT * FROM guide_llm_window_cost!(fwd))
SELECT
  fwd.phase,
  COUNT(*) * 1.0 / (SELECT COUNT(DISTINCT step) FROM guide_llm_forward) AS forwards,
  CAST(AVG(cost.cpu_ns) AS INT) AS cpu_ns,
  CAST(AVG(fwd.token_dur) AS INT) AS token_ns,
  AVG(cost.cpu_ops) AS cpu_ops,
  AVG(cost.kernel_launches) AS kernel_launches,
  AVG(cost.graph_launches) AS graph_launches,
  AVG(cost.kernels) AS kernels,
  CAST(AVG(cost.kernel_ns) AS INT) AS kernel_ns
FROM fwd
JOIN cost USING (window_id)
GROUP BY fwd.phase
ORDER BY MIN(fwd.ts);
