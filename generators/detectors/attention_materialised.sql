-- id: attention-materialised
-- title: Attention that writes the whole score matrix
-- title_ja: スコア行列全体をメモリに書き出すアテンション
-- severity: warning
-- relies: operators
-- guide: part-3/02-sdpa-backends.md#the-math-backend-the-reference-not-the-fast-path
-- breakdown: operator
-- columns: cpu_ns=CPU time, gpu_ns=GPU time launched, operator=Operator
-- columns_ja: cpu_ns=CPU 時間, gpu_ns=起動した GPU 時間, operator=演算子
-- seen: Operators that built a full sequence × sequence score matrix in memory: {count}
--   ({sum(cpu_ns)} of CPU time in them[[; GPU time launched from them: {sum(gpu_ns)}]]).
-- seen_ja: 系列長 × 系列長のスコア行列をまるごとメモリ上に作った演算子が {count}
--   個あります（その中で費やされた CPU 時間は {sum(cpu_ns)}[[、そこから起動された GPU
--   時間は {sum(gpu_ns)}]]）。
-- why: Attention written by hand (`softmax(q @ k.T) @ v`) or SDPA's math backend writes the score
--   matrix, sequence length squared per head, to memory and reads it back several times. A fused
--   kernel (FlashAttention, memory-efficient or cuDNN attention) keeps it on chip.
-- why_ja: 手書きのアテンション（`softmax(q @ k.T) @ v`）や SDPA の math バックエンドは、
--   ヘッドごとに系列長の 2 乗の大きさのスコア行列をメモリに書き出し、それを何度も読み戻します。
--   融合カーネル（FlashAttention、memory-efficient アテンション、cuDNN アテンション）
--   はこの行列をチップ上に保持します。
-- try: Call `torch.nn.functional.scaled_dot_product_attention` and let it pick a fused backend:
--   check the dtype (fp16/bf16), the head dimension, the mask and the device (the math backend is
--   the fallback when no fused one accepts the inputs); `torch.nn.attention.sdpa_kernel` forces a
--   backend and raises when it cannot.
-- try_ja: `torch.nn.functional.scaled_dot_product_attention` を呼び、
--   融合バックエンドを選ばせてください。dtype（fp16/bf16）、ヘッド次元、マスク、
--   デバイスを確認します（どの融合バックエンドも入力を受け付けないとき、math
--   バックエンドが代わりに使われます）。`torch.nn.attention.sdpa_kernel` はバックエンドを強制し、
--   使えなければ例外を送出します。
-- after: One `aten::_scaled_dot_product_flash_attention` (or `_efficient_`, `_cudnn_`) operator
--   per attention call, launching one attention kernel, and no `aten::softmax` on a
--   sequence × sequence tensor.
-- after_ja: アテンションの呼び出し 1 回につき `aten::_scaled_dot_product_flash_attention`（または
--   `_efficient_`、`_cudnn_`）演算子が 1 つだけ現れ、アテンションカーネルを 1 つ起動し、系列長 ×
--   系列長のテンソルに対する `aten::softmax` はなくなります。
-- false-positives: A custom attention pattern no fused kernel supports. The math backend is found
--   by name; hand-written attention by a softmax over a square [..., L, L] input, which needs
--   input shapes (`record_shapes=True`): it misses attention with different query and key
--   lengths, can flag a non-attention softmax over a square input, and cannot see attention
--   that torch.compile fused into generated kernels.
-- false-positives_ja: どの融合カーネルも対応していない独自のアテンションパターン。math
--   バックエンドは名前で見つけ、手書きのアテンションは正方形の [..., L, L] 入力に対する softmax
--   で見つけます。後者には入力形状（`record_shapes=True`）が必要です。この方法では、
--   クエリとキーの長さが異なるアテンションを見逃し、アテンションではない正方形入力の softmax
--   を検出することがあり、torch.compile が生成カーネルに融合したアテンションは見えません。
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  op AS MATERIALIZED (
    SELECT s.id, s.ts, s.dur, s.name, t.name AS thread_name, t.tid, s.arg_set_id
    FROM slice AS s
    LEFT JOIN thread_track AS tt ON tt.id = s.track_id
    LEFT JOIN thread AS t USING (utid)
    WHERE s.category = 'cpu_op'
      AND s.name IN ('aten::_scaled_dot_product_attention_math', 'aten::softmax', 'aten::_softmax')
  ),
  -- The first input's last two sizes (the importer flattens `Input Dims` into one arg per size:
  -- `args.Input Dims[0][3]`).
  last_two AS (
    SELECT
      op.id,
      (SELECT GROUP_CONCAT(int_value, ', ') FROM (
        SELECT a.int_value FROM args AS a
        WHERE a.arg_set_id = op.arg_set_id AND a.key LIKE 'args.Input Dims[0][%'
        ORDER BY CAST(regexp_extract(a.key, '\]\[([0-9]+)\]$') AS INT)
      )) AS dims,
      (SELECT a.int_value FROM args AS a
        WHERE a.arg_set_id = op.arg_set_id AND a.key LIKE 'args.Input Dims[0][%'
        ORDER BY CAST(regexp_extract(a.key, '\]\[([0-9]+)\]$') AS INT) DESC LIMIT 1) AS last,
      (SELECT a.int_value FROM args AS a
        WHERE a.arg_set_id = op.arg_set_id AND a.key LIKE 'args.Input Dims[0][%'
        ORDER BY CAST(regexp_extract(a.key, '\]\[([0-9]+)\]$') AS INT) DESC LIMIT 1 OFFSET 1)
        AS second_last
    FROM op
  ),
  -- The math backend, and any softmax over a [..., L, L] input with L of at least 64 that is
  -- not already inside the math backend or another softmax (each counted once, as itself).
  scores AS (
    SELECT op.id, op.ts, op.dur, op.name, op.thread_name, op.tid, '[' || l.dims || ']' AS dims
    FROM op JOIN last_two AS l USING (id)
    WHERE op.name = 'aten::_scaled_dot_product_attention_math'
      OR (
        l.last >= 64 AND l.last = l.second_last
        AND NOT EXISTS (
          SELECT 1 FROM ancestor_slice(op.id) AS a
          WHERE a.name IN ('aten::_scaled_dot_product_attention_math', 'aten::softmax')
        )
      )
  ),
  gpu AS (
    SELECT sc.id, SUM(g.dur) AS gpu_ns
    FROM scores AS sc
    JOIN descendant_slice(sc.id) AS d
    JOIN guide_kineto_launch_link AS ll ON ll.launch_id = d.id
    JOIN guide_kineto_gpu_activity AS g ON g.id = ll.gpu_id
    GROUP BY sc.id
  )
SELECT
  sc.ts,
  sc.dur,
  COALESCE(sc.thread_name, 'thread ' || sc.tid) AS location,
  COALESCE(sc.thread_name, 'スレッド ' || sc.tid) AS location_ja,
  sc.name || IIF(sc.dims IS NULL, '', ' ' || sc.dims) AS what,
  sc.name || IIF(sc.dims IS NULL, '', ' ' || sc.dims) AS what_ja,
  -- What the score matrix costs: the GPU time the operator launched, where it launched any (the
  -- matrix's reads and writes run there); its CPU time on a CPU capture.
  IIF(COALESCE(gpu.gpu_ns, 0) > 0, gpu.gpu_ns, sc.dur) AS cost_ns,
  sc.dur AS cpu_ns,
  IIF(EXISTS (SELECT 1 FROM guide_kineto_gpu_activity), COALESCE(gpu.gpu_ns, 0), NULL) AS gpu_ns,
  sc.name AS operator
FROM scores AS sc
LEFT JOIN gpu USING (id)
ORDER BY gpu_ns DESC, sc.dur DESC, ts, location
