-- The casts autocast adds to a training step: what they convert, and what they cost
-- output: values
-- question_ja: autocast が学習ステップに加えるキャスト: 何を変換し、どれだけかかるか
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.train;
INCLUDE PERFETTO MODULE guide.shapes;

WITH
  steps AS (SELECT COUNT(*) AS n, SUM(dur) AS step_ns FROM guide_train_step),
  casts AS MATERIALIZED (
    SELECT
      o.*,
      p.phase,
      i.ndim,
      i.dims,
      extract_arg(s.arg_set_id, 'args.Input type[0]') AS from_type,
      -- The target element type, as PyTorch numbers them (c10::ScalarType): 5 is fp16, 15 bf16.
      extract_arg(s.arg_set_id, 'args.Concrete Inputs[1]') IN ('5', '15') AS to_low
    FROM guide_train_phase_op AS o
    JOIN guide_train_phase AS p ON p.id = o.phase_id
    JOIN slice AS s ON s.id = o.id
    LEFT JOIN guide_shapes_input AS i ON i.slice_id = o.id AND i.input_index = 0
    WHERE o.name = 'aten::_to_copy'
  ),
  fwd AS (SELECT * FROM casts WHERE phase = 'forward'),
  -- A linear layer's weight is a 2-D fp32 tensor; the activations it multiplies have a batch
  -- and a sequence dimension (3-D or more). The rank tells the two kinds of cast apart.
  weight_casts AS (SELECT * FROM fwd WHERE to_low AND from_type = 'float' AND ndim = 2),
  -- The forward's CPU time split by the three kinds of operator autocast changes, each slice
  -- counted once: every cast, every GEMM operator, and the attention operator less the casts
  -- and GEMMs inside it (fp32's math fallback runs its products as aten::bmm, and autocast
  -- casts some of its inputs inside it). What is left is the rest of the forward: the other
  -- operators and the time between operators.
  fwd_gemm AS (SELECT id, dur FROM guide_train_gemm WHERE phase = 'forward'),
  fwd_op AS MATERIALIZED (
    SELECT o.* FROM guide_train_phase_op AS o
    JOIN guide_train_phase AS p ON p.id = o.phase_id
    WHERE p.phase = 'forward' AND o.is_operator
  ),
  -- Some operators appear twice, one inside the other under the same name. Under autocast the
  -- outer row is autocast's wrapper, which casts the inputs (the casts are its children) and
  -- calls the operator again. Counted as two operators they would count the attention's time
  -- twice, so the attention is its outermost row only.
  wrapper AS MATERIALIZED (
    SELECT o.id, o.name, o.dur, (SELECT SUM(c.dur) FROM slice AS c WHERE c.parent_id = o.id)
      AS children_ns
    FROM fwd_op AS o
    WHERE EXISTS (SELECT 1 FROM slice AS c WHERE c.parent_id = o.id AND c.name = o.name)
  ),
  attention AS (
    SELECT o.id, o.dur FROM fwd_op AS o
    WHERE o.name = 'aten::scaled_dot_product_attention'
      AND NOT EXISTS (
        SELECT 1 FROM slice AS s JOIN slice AS up ON up.id = s.parent_id
        WHERE s.id = o.id AND up.name = o.name
      )
  ),
  -- The operators of the rest of the forward: neither a cast, a GEMM or the attention, nor
  -- inside one of them.
  rest_op AS (
    SELECT o.id FROM fwd_op AS o
    WHERE o.id NOT IN (SELECT id FROM fwd) AND o.id NOT IN (SELECT id FROM fwd_gemm)
      AND o.name != 'aten::scaled_dot_product_attention'
      AND NOT EXISTS (
        SELECT 1 FROM ancestor_slice(o.id) AS a
        WHERE a.name IN ('aten::_to_copy', 'aten::scaled_dot_product_attention')
          OR a.id IN (SELECT id FROM fwd_gemm)
      )
  ),
  inside_attention AS (
    SELECT COALESCE(SUM(x.dur), 0) AS ns
    FROM (SELECT id, dur FROM fwd UNION ALL SELECT id, dur FROM fwd_gemm) AS x
    WHERE EXISTS (
      SELECT 1 FROM ancestor_slice(x.id) AS a WHERE a.name = 'aten::scaled_dot_product_attention'
    )
  ),
  split AS (
    SELECT
      (SELECT SUM(dur) FROM guide_train_phase_cost WHERE phase = 'forward') AS forward_ns,
      (SELECT COALESCE(SUM(dur), 0) FROM fwd) AS cast_ns,
      (SELECT COALESCE(SUM(dur), 0) FROM fwd_gemm) AS gemm_ns,
      (SELECT COALESCE(SUM(dur), 0) FROM attention) - (SELECT ns FROM inside_attention)
        AS attention_ns
  )
SELECT
  (SELECT COUNT(*) FROM fwd) * 1.0 / steps.n AS forward_casts,
  (SELECT COUNT(*) FROM casts WHERE phase = 'backward') * 1.0 / steps.n AS backward_casts,
  (SELECT COUNT(*) FROM weight_casts) * 1.0 / steps.n AS forward_weight_casts,
  (SELECT COUNT(*) FROM fwd WHERE to_low AND from_type = 'float' AND ndim >= 3) * 1.0 / steps.n
    AS forward_activation_casts,
  -- bf16 (or fp16) results converted back to fp32 for an operator that computes in fp32.
  (SELECT COUNT(*) FROM fwd WHERE NOT to_low AND from_type IN ('c10::BFloat16', 'c10::Half'))
    * 1.0 / steps.n AS forward_upcasts,
  -- A Python number ('double') or an integer tensor converted to a floating type.
  (SELECT COUNT(*) FROM fwd WHERE from_type NOT IN ('float', 'c10::BFloat16', 'c10::Half'))
    * 1.0 / steps.n AS forward_number_casts,
  -- Weights cast again in the backward: a cast to bf16 of a tensor with a weight's shape. None
  -- means the backward GEMMs use the bf16 copies the forward made, saved for them.
  (SELECT COUNT(*) FROM casts AS c WHERE c.phase = 'backward' AND c.to_low
    AND c.dims IN (SELECT dims FROM weight_casts)) * 1.0 / steps.n AS backward_weight_casts,
  (SELECT CAST(COALESCE(SUM(dur), 0) / steps.n AS INT) FROM casts
    WHERE phase IN ('forward', 'backward')) AS cast_cpu_ns,
  (SELECT CAST(COALESCE(SUM(dur), 0) / steps.n AS INT) FROM fwd) AS forward_cast_cpu_ns,
  -- The forward's attention operator without the casts and GEMMs inside it: its CPU time
  -- depends on the backend SDPA picks (the math fallback in fp32, cuDNN under bf16 autocast on
  -- a GPU).
  CAST(split.attention_ns / steps.n AS INT) AS forward_attention_own_cpu_ns,
  -- The forward's GEMM operators (as train_backward.sql's forward_gemm_cpu_ns).
  CAST(split.gemm_ns / steps.n AS INT) AS forward_gemm_cpu_ns,
  -- The three together (casts, GEMMs, the attention's own time), and the rest of the forward.
  CAST((split.cast_ns + split.gemm_ns + split.attention_ns) / steps.n AS INT)
    AS forward_cast_gemm_attention_cpu_ns,
  CAST((split.forward_ns - split.cast_ns - split.gemm_ns - split.attention_ns) / steps.n AS INT)
    AS forward_rest_cpu_ns,
  CAST(split.forward_ns / steps.n AS INT) AS forward_cpu_ns,
  (SELECT COUNT(*) FROM rest_op) * 1.0 / steps.n AS forward_rest_ops_per_step,
  -- Operators wrapped in an outer row of the same name (autocast's wrapper), and the wrappers'
  -- own time: their width less their children's (the casts and the operator itself).
  (SELECT COUNT(*) FROM wrapper) * 1.0 / steps.n AS forward_wrappers_per_step,
  (SELECT CAST(COALESCE(SUM(dur - children_ns), 0) / steps.n AS INT) FROM wrapper)
    AS forward_wrapper_own_cpu_ns,
  -- What the casts buy: the CPU time of the step's GEMMs (forward and backward), and the step's.
  (SELECT CAST(SUM(dur) / steps.n AS INT) FROM guide_train_gemm) AS gemm_cpu_ns,
  CAST(steps.step_ns / steps.n AS INT) AS step_cpu_ns,
  IIF(traced.yes, (SELECT COUNT(*) FROM guide_train_phase_gpu AS g JOIN casts AS c
    ON g.phase_id = c.phase_id
    JOIN guide_kineto_slice AS r ON r.id = g.launch_id
    WHERE r.ts >= c.ts AND r.ts < c.ts + c.dur AND g.category = 'kernel') * 1.0 / steps.n,
    NULL) AS cast_kernels
FROM steps, split, (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS yes) AS traced;
