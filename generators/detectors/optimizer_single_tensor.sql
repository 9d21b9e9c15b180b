-- id: optimizer-single-tensor
-- title: An optimizer that updates one tensor at a time
-- title_ja: テンソルを 1 つずつ更新するオプティマイザ
-- severity: warning
-- param: ops_min = 20  Reported when one optimizer step runs at least this many operators and none of them is a foreach or fused one.
-- param_ja: ops_min  1 回のオプティマイザステップがこの数以上の演算子を実行し、そのどれも foreach
--   版や fused 版でないとき報告します。
-- relies: operators, flows
-- guide: part-5/02-optimizer-and-data.md#the-optimizer-step
-- columns: operators=Operators
-- columns_ja: operators=演算子
-- seen: Optimizer steps that ran parameter by parameter: {count}, with up to
--   {max(operators)} operators each and {sum(cost_ns)} of CPU time in all.
-- seen_ja: パラメータを 1 つずつ処理したオプティマイザステップが {count} 回あり、1 回あたりの演算子は
--   最大 {max(operators)} 個、CPU 時間は合計 {sum(cost_ns)} でした。
-- why: The single-tensor implementation runs a handful of small operators per parameter (each a
--   kernel launch on a GPU), so a model with hundreds of parameters launches thousands of tiny
--   kernels per step. The `foreach` implementation batches them into a few `multi_tensor_apply`
--   kernels, the fused one into one kernel per group.
-- why_ja: 単一テンソル版はパラメータごとに小さな演算子をいくつも実行するため（GPU
--   ではそれぞれがカーネルの起動）、数百個のパラメータテンソルを持つモデルはステップごとに数千の小さなカーネ
--   ルを起動します。foreach 版はそれらを少数の `multi_tensor_apply` カーネルにまとめ、fused
--   版はグループごとに 1 つのカーネルにまとめます。
-- try: `torch.optim.AdamW(params, foreach=True)`, which PyTorch already picks by default on
--   CUDA when every parameter is a CUDA tensor, or `fused=True` (off by default; CUDA, and CPU
--   since PyTorch 2.4).
-- try_ja: `torch.optim.AdamW(params, foreach=True)` を使ってください（すべてのパラメータが CUDA
--   テンソルなら、PyTorch は CUDA でデフォルトでこれを選びます）。または `fused=True`
--   を使います（デフォルトではオフ。CUDA と、PyTorch 2.4 以降は CPU でも使えます）。
-- after: Under `Optimizer.step#…` a few `aten::_foreach_*` operators (or `aten::_fused_adamw_`)
--   instead of a long run of `aten::mul_`, `aten::add_`, `aten::addcdiv_` per parameter.
-- after_ja: `Optimizer.step#…` の下に、パラメータごとの
--   `aten::mul_`、`aten::add_`、`aten::addcdiv_` の長い列ではなく、少数の `aten::_foreach_*`
--   演算子（または `aten::_fused_adamw_`）が並びます。
-- false-positives: A model with very few parameters, where the loop is short anyway; an
--   optimizer without foreach or fused versions. A fused or foreach optimizer is recognised by
--   its operators (`aten::_foreach_*`, `aten::_fused_*`, or any operator named fused, foreach or
--   multi_tensor), by its label (`Optimizer.step#FusedAdam.step`: a name with Fused, Foreach
--   or multi_tensor) and by its kernels (`multi_tensor_apply_kernel`, as apex and DeepSpeed's
--   FusedAdam launch): the per-parameter `aten::add_` beside them are step counters, not the
--   update. Where shapes are recorded, an `aten::add_` on a 0-dim integer tensor (a step
--   counter) is not counted. Without launch flows only the names can tell.
-- false-positives_ja: パラメータがごく少なく、どのみちループが短いモデル。foreach 版や fused
--   版を持たないオプティマイザ。
--   fused や foreach のオプティマイザは、その演算子（`aten::_foreach_*`、`aten::_fused_*`、または名前に
--   fused、foreach、multi_tensor を含む演算子）とカーネル（apex や DeepSpeed の FusedAdam が起動する
--   `multi_tensor_apply_kernel`）、そしてラベル（`Optimizer.step#FusedAdam.step` のように名前に Fused、
--   Foreach、multi_tensor を含むもの）で見分けます。そばにあるパラメータごとの `aten::add_` はステップの
--   カウンタで、更新そのものではありません。形状が記録されていれば、0 次元の整数テンソルへの
--   `aten::add_`（ステップのカウンタ）は数えません。起動のフローがないトレースでは名前だけが頼りです。
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  opt AS MATERIALIZED (
    SELECT s.id, s.ts, s.dur, s.name, s.track_id
    FROM slice AS s
    WHERE s.name GLOB 'Optimizer.step#*' AND s.category IS NOT 'gpu_user_annotation'
      -- The label names the optimizer's class: FusedAdam, a Foreach or multi_tensor variant
      -- (apex, DeepSpeed, Megatron) is batched whatever its operators are called.
      AND NOT (LOWER(s.name) GLOB '*fused*' OR LOWER(s.name) GLOB '*foreach*'
        OR LOWER(s.name) GLOB '*multi_tensor*')
      -- One step once: a combined optimizer's label holds each inner optimizer's (TorchRec's
      -- CombinedOptimizer.step around Adam.step), counted under the outermost only.
      AND NOT EXISTS (
        SELECT 1 FROM ancestor_slice(s.id) AS a WHERE a.name GLOB 'Optimizer.step#*'
      )
  ),
  inside AS (
    SELECT o.id,
      -- A step counter is an in-place add on a 0-dim integer tensor (Input Dims [[],...] and
      -- Input type long): one per parameter beside a fused update, not the update itself.
      SUM(NOT (
        d.name = 'aten::add_'
        AND extract_arg(d.arg_set_id, 'args.Input type[0]') IN ('long', 'long int', 'int')
        AND extract_arg(d.arg_set_id, 'args.Input Dims[0][0]') IS NULL
      )) AS operators,
      SUM(
        d.name GLOB 'aten::_foreach_*' OR d.name GLOB 'aten::_fused_*'
        OR LOWER(d.name) GLOB '*fused*' OR LOWER(d.name) GLOB '*foreach*'
        OR LOWER(d.name) GLOB '*multi_tensor*'
      ) AS batched
    FROM opt AS o
    JOIN descendant_slice(o.id) AS d
    WHERE d.category = 'cpu_op'
    GROUP BY o.id
  ),
  -- Kernels that update many tensors per launch (apex/DeepSpeed FusedAdam, PyTorch's foreach
  -- and fused paths), launched from inside the step: the step is batched whatever its
  -- operators are called.
  batched_kernels AS (
    SELECT o.id, COUNT(*) AS kernels
    FROM opt AS o
    JOIN descendant_slice(o.id) AS d
    JOIN guide_kineto_launch_link AS ll ON ll.launch_id = d.id
    JOIN slice AS k ON k.id = ll.gpu_id
    WHERE d.category IN ('cuda_runtime', 'cuda_driver')
      AND (k.name GLOB '*multi_tensor_apply*' OR LOWER(k.name) GLOB '*fused*'
        OR LOWER(k.name) GLOB '*foreach*')
    GROUP BY o.id
  )
SELECT
  o.ts,
  o.dur,
  COALESCE(t.name, 'thread ' || t.tid) AS location,
  COALESCE(t.name, 'スレッド ' || t.tid) AS location_ja,
  o.name || ': ' || printf('%,d', i.operators) || ' operators, none foreach or fused' AS what,
  o.name || ': 演算子 ' || printf('%,d', i.operators) || ' 個（foreach も fused もなし）' AS what_ja,
  o.dur AS cost_ns,
  i.operators
FROM opt AS o
JOIN inside AS i USING (id)
LEFT JOIN thread_track AS tt ON tt.id = o.track_id
LEFT JOIN thread AS t USING (utid)
WHERE i.batched = 0 AND i.operators >= {{ops_min}}
  AND o.id NOT IN (SELECT id FROM batched_kernels)
ORDER BY o.dur DESC, ts, location
