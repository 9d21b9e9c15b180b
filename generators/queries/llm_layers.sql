-- Inside a decode forward: what the attention blocks, MLPs and norms of all layers cost per token
-- output: table
-- columns: region=Region, calls=Calls per token, cpu_ns=CPU time per token, cpu_share_pct=Share of the forward's CPU time, cpu_ops=CPU ops per token, kernels=Kernels per token, kernel_ns=GPU kernel time per token
-- question_ja: デコードの順伝播の内訳（全層のアテンションブロック、MLP、正規化にかかるトークンあたりのコスト）
-- columns_ja: region=領域, calls=トークンあたりの呼び出し回数, cpu_ns=トークンあたりの CPU 時間, cpu_share_pct=順伝播の CPU 時間に占める割合, cpu_ops=トークンあたりの CPU 演算子数, kernels=トークンあたりのカーネル数, kernel_ns=トークンあたりの GPU カーネル時間
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.llm;

WITH
  dec AS (SELECT * FROM guide_llm_forward WHERE phase = 'decode'),
  region AS MATERIALIZED (
    -- The labels the workload puts around each layer's modules (--layer-labels), in a decode.
    SELECT a.id AS window_id, a.ts, a.dur, a.track_id, a.name AS region
    FROM guide_llm_assign!(
      (SELECT id AS window_id, ts, dur, track_id FROM dec),
      (
        SELECT id, ts, dur, name, category, track_id
        FROM guide_kineto_slice
        WHERE category = 'user_annotation' AND name IN ('attention', 'mlp', 'norm')
      )
    ) AS a
  ),
  cost AS (SELECT * FROM guide_llm_window_cost!(region)),
  tokens AS (SELECT COUNT(*) AS n, SUM(dur) AS cpu FROM dec)
SELECT
  region.region,
  COUNT(*) * 1.0 / tokens.n AS calls,
  CAST(SUM(cost.cpu_ns) / tokens.n AS INT) AS cpu_ns,
  100.0 * SUM(cost.cpu_ns) / tokens.cpu AS cpu_share_pct,
  SUM(cost.cpu_ops) * 1.0 / tokens.n AS cpu_ops,
  SUM(cost.kernels) * 1.0 / tokens.n AS kernels,
  CAST(SUM(cost.kernel_ns) / tokens.n AS INT) AS kernel_ns
FROM region
JOIN cost USING (window_id), tokens
GROUP BY region.region
ORDER BY cpu_ns DESC;
