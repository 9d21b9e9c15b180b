-- What the GPU runs in one decode step, by kind of kernel: how many, how long, how long each
-- output: table
-- columns: class=Kernels, kernels=Kernels per decode step, kernel_ns=Kernel time per decode step, mean_ns=Mean kernel duration, share_pct=Share of the step's kernel time
-- question_ja: デコードステップ 1 回で GPU が実行するもの（カーネルの種類ごとの個数、合計時間、1 個あたりの時間）
-- columns_ja: class=カーネルの種類, kernels=デコードステップあたりのカーネル数, kernel_ns=デコードステップあたりのカーネル時間, mean_ns=カーネルの平均所要時間, share_pct=ステップのカーネル時間に占める割合
-- needs: cuda
-- Kernel time is the sum of the kernels' durations. A kernel the trace processor dropped (a
-- split-K reduce kernel that starts before its GEMM ends) is counted from its launch and has no
-- duration: its row shows the count only.
INCLUDE PERFETTO MODULE guide.llm;

WITH
  turn AS MATERIALIZED (
    SELECT id AS window_id, ts, token_dur AS dur, track_id
    FROM guide_llm_forward
    WHERE phase = 'decode'
  ),
  k AS MATERIALIZED (
    SELECT
      COALESCE(guide_llm_kernel_class(kernel_name), 'dropped by the trace processor') AS class,
      kernel_dur
    FROM guide_llm_window_kernel!(turn)
  ),
  n AS (SELECT COUNT(*) AS n FROM turn),
  total AS (SELECT SUM(kernel_dur) AS ns FROM k)
SELECT
  k.class,
  COUNT(*) * 1.0 / n.n AS kernels,
  CAST(SUM(k.kernel_dur) / n.n AS INT) AS kernel_ns,
  CAST(AVG(k.kernel_dur) AS INT) AS mean_ns,
  100.0 * SUM(k.kernel_dur) / total.ns AS share_pct
FROM k, n, total
GROUP BY k.class
ORDER BY SUM(k.kernel_dur) IS NULL, SUM(k.kernel_dur) DESC;
