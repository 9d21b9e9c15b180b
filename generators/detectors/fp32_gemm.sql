-- id: fp32-gemm
-- title: fp32 matrix multiplies that skip the tensor cores
-- title_ja: Tensor コアを使わない fp32 の行列積
-- severity: warning
-- param: gemm_pct_min = 5  Reported when these GEMMs take at least this share (%) of all kernel time.
-- param_ja: gemm_pct_min  これらの GEMM がカーネル時間全体のこの割合（%）
--   以上を占めるとき報告します。
-- param: gemm_ns_min = 5000  ...and at least this long (ns) in all.
-- param_ja: gemm_ns_min  ……かつ、合計がこの時間（ns）以上のとき。
-- needs: gpu, device
-- relies: kernels
-- guide: part-2/03-kernel-names.md#library-gemms
-- breakdown: kernel
-- columns: kernel=Kernel, caller=Launched under, convolutions=Under a convolution, matmuls=Under a matrix multiply, gemm_pct=Share of kernel time, gpu_name=GPU, advice=Way onto the tensor cores
-- columns_ja: kernel=カーネル, caller=起動元, convolutions=畳み込みの下, matmuls=行列積の下, gemm_pct=カーネル時間に占める割合, gpu_name=GPU, advice=Tensor コアを使う方法
-- seen: GEMM kernels in fp32 on the FMA units (no tensor cores): {count}, {sum(cost_ns)} of
--   GPU time ({first(gemm_pct)} of all kernel time), on a GPU with tensor cores
--   ({first(gpu_name)}); launched under a convolution: {sum(convolutions)}, under a matrix
--   multiply: {sum(matmuls)}. The way onto this GPU's tensor cores: {first(advice)}.
-- seen_ja: Tensor コアを持つ GPU（{first(gpu_name)}）で、Tensor コアを使わず FMA ユニット上で fp32
--   のまま動いた GEMM カーネルが {count} 個あり、GPU 時間は {sum(cost_ns)} です（カーネル時間全体の
--   {first(gemm_pct)}）。畳み込みの下で起動されたものが {sum(convolutions)} 個、行列積の下で
--   起動されたものが {sum(matmuls)} 個です。この GPU の Tensor コアを使う方法: {first(advice_ja)}。
-- why: Tensor cores multiply matrices many times faster than the FMA units. On Ampere and later
--   GPUs PyTorch keeps fp32 matrix multiplies off them by default (TF32 is off for matmul, on for
--   cuDNN convolutions); a Volta or Turing GPU has no TF32 at all, only fp16 tensor cores. Kernel
--   names say which units ran: `sgemm`, `simt` and `ffma` mean FMA units.
-- why_ja: Tensor コアは FMA ユニットの何倍もの速さで行列を掛けます。Ampere 以降の GPU では、PyTorch
--   はデフォルトで fp32 の行列積を Tensor コアで実行しません（TF32 は matmul ではオフ、cuDNN
--   の畳み込みではオン）。Volta や Turing の GPU には TF32 がなく、fp16 の Tensor
--   コアだけがあります。どのユニットで動いたかはカーネル名でわかり、`sgemm`、`simt`、`ffma` は FMA
--   ユニットを意味します。
-- try: On Volta or Turing (compute capability 7.x, no TF32), run the model under
--   `torch.autocast` with fp16: the only way onto their tensor cores. On Ampere and later,
--   autocast with bf16, or allow TF32 (`torch.set_float32_matmul_precision("high")` for matrix
--   multiplies; `torch.backends.cudnn.allow_tf32`, on by default, for convolutions). The
--   finding says which applies to this GPU and which operators launched the GEMMs.
-- try_ja: Volta や Turing（compute capability 7.x、TF32 なし）では、モデルを fp16 の
--   `torch.autocast` の下で実行してください。Tensor コアを使う唯一の方法です。Ampere 以降では
--   bf16 で autocast するか、TF32 を許可してください（行列積には
--   `torch.set_float32_matmul_precision("high")`、畳み込みにはデフォルトでオンの
--   `torch.backends.cudnn.allow_tf32`）。どれがこの GPU に当てはまるか、どの演算子が GEMM
--   を起動したかは「観測」に示します。
-- after: The GEMM kernels' names carry `tf32`, `bf16` or `f16` (fp16 on Volta/Turing) and an
--   MMA shape (e.g. `16816`), and their durations drop.
-- after_ja: GEMM カーネルの名前に `tf32`、`bf16`、`f16`（Volta/Turing では fp16）と MMA の形（例:
--   `16816`）が入り、実行時間が短くなります。
-- false-positives: A GEMM that must stay in full fp32 for accuracy; tiny GEMMs where the units
--   do not matter. The kernel name is the only evidence: a name that does not state its type is
--   not counted, and a custom kernel named like a GEMM with `float` in it is. GEMMs inside SDPA's
--   math backend are left to attention-materialised. Not checked on AMD GPUs (their GEMM names
--   say nothing about matrix cores in this form) or on a trace that does not list its GPU.
-- false-positives_ja: 精度のために完全な fp32 のままにすべき GEMM、
--   どのユニットで動いても差が出ない小さな GEMM。証拠はカーネル名だけです。
--   型を名前に示さないカーネルは見逃し、`float` を含む GEMM
--   風の名前のカスタムカーネルは誤って数えます。SDPA の math バックエンド内の GEMM は
--   attention-materialised に任せます。AMD の GPU（この形式の GEMM
--   名はマトリクスコアについて何も示しません）と、GPU を記載していないトレースではチェックしませ
--   ん。
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.kernel_names;

WITH
  gpu AS (
    SELECT name, compute_major FROM guide_trace_device
    WHERE compute_major >= 7 AND name NOT GLOB '*AMD*'
    ORDER BY device LIMIT 1
  ),
  -- Each distinct name read once: a trace repeats a few names thousands of times.
  kernel_name AS MATERIALIZED (
    SELECT DISTINCT name FROM guide_kineto_gpu_activity WHERE category = 'kernel'
  ),
  fp32_name AS MATERIALIZED (
    SELECT name FROM kernel_name
    WHERE guide_kernel_names_work(name) = 'GEMM'
      AND guide_kernel_names_dtype(name) = 'fp32'
      AND guide_kernel_names_mma(name) IS NULL
  ),
  -- SDPA's math backend computes in fp32 whatever the model's type: its GEMMs are that
  -- backend's finding (attention-materialised), not the model's precision.
  sdpa_math AS MATERIALIZED (
    SELECT id FROM slice WHERE name = 'aten::_scaled_dot_product_attention_math'
  ),
  fp32 AS MATERIALIZED (
    SELECT k.* FROM guide_kineto_gpu_activity AS k
    WHERE k.category = 'kernel' AND k.name IN (SELECT name FROM fp32_name)
      -- Ancestors are read only when the trace ran the math backend at all.
      AND (
        NOT EXISTS (SELECT 1 FROM sdpa_math)
        OR NOT EXISTS (
          SELECT 1 FROM guide_kineto_launch_link AS ll
          JOIN ancestor_slice(ll.launch_id) AS a
          WHERE ll.gpu_id = k.id AND a.id IN (SELECT id FROM sdpa_math)
        )
      )
  ),
  -- The operator that launched each kernel, by kind: a convolution (cuDNN or its im2col GEMM)
  -- and a matrix multiply take different advice, and a name alone does not tell them apart.
  caller AS MATERIALIZED (
    SELECT ll.gpu_id AS id,
      CASE
        WHEN MAX(a.name GLOB '*conv*') THEN 'convolution'
        WHEN MAX(a.name GLOB 'aten::*mm*' OR a.name GLOB 'aten::linear*'
          OR a.name GLOB 'aten::matmul*' OR a.name GLOB 'aten::einsum*') THEN 'matmul'
      END AS kind,
      CASE
        WHEN MAX(a.name GLOB '*conv*') THEN '畳み込み'
        WHEN MAX(a.name GLOB 'aten::*mm*' OR a.name GLOB 'aten::linear*'
          OR a.name GLOB 'aten::matmul*' OR a.name GLOB 'aten::einsum*') THEN '行列積'
      END AS kind_ja
    FROM guide_kineto_launch_link AS ll
    JOIN ancestor_slice(ll.launch_id) AS a
    WHERE ll.gpu_id IN (SELECT id FROM fp32) AND a.category = 'cpu_op'
    GROUP BY ll.gpu_id
  ),
  total AS (
    SELECT
      (SELECT SUM(dur) FROM fp32) AS fp32_ns,
      (SELECT SUM(dur) FROM guide_kineto_gpu_activity WHERE category = 'kernel') AS kernel_ns
  )
SELECT
  fp32.ts,
  fp32.dur,
  'GPU ' || fp32.device || ', stream ' || fp32.stream AS location,
  'GPU ' || fp32.device || '、ストリーム ' || fp32.stream AS location_ja,
  fp32.name || IIF(c.kind IS NULL, '', ' (under a ' || c.kind || ')') AS what,
  fp32.name || IIF(c.kind IS NULL, '', '（' || c.kind_ja || 'の下で起動）') AS what_ja,
  fp32.dur AS cost_ns,
  fp32.name AS kernel,
  COALESCE(c.kind, 'operator unknown') AS caller,
  COALESCE(c.kind_ja, '演算子は不明') AS caller_ja,
  c.kind = 'convolution' AS convolutions,
  c.kind = 'matmul' AS matmuls,
  100.0 * total.fp32_ns / total.kernel_ns AS gemm_pct,
  gpu.name AS gpu_name,
  -- Volta and Turing (compute capability 7.x) have no TF32: fp16 is their only way onto the
  -- tensor cores. Code and option names, joined in each language's words.
  IIF(gpu.compute_major < 8,
    'torch.autocast with dtype=torch.float16 (compute capability ' || gpu.compute_major
      || '.x: no TF32)',
    'torch.autocast with dtype=torch.bfloat16, or TF32') AS advice,
  IIF(gpu.compute_major < 8,
    'dtype=torch.float16 の torch.autocast（compute capability ' || gpu.compute_major
      || '.x: TF32 なし）',
    'dtype=torch.bfloat16 の torch.autocast、または TF32') AS advice_ja
FROM fp32
CROSS JOIN total
CROSS JOIN gpu
LEFT JOIN caller AS c ON c.id = fp32.id
WHERE total.kernel_ns > 0 AND 100.0 * total.fp32_ns / total.kernel_ns >= {{gemm_pct_min}}
  AND total.fp32_ns >= {{gemm_ns_min}}
ORDER BY fp32.dur DESC, ts, location
