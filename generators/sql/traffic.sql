-- The bytes an operator (and the GPU work it launches) must move, counted from the shapes the
-- profiler recorded (`record_shapes=True`): the guide's one definition of an operator's memory
-- traffic. Every page that divides bytes by time gets its bytes here.
--
-- What is counted: every tensor input the operator reads, once, as stored (a dimension made by
-- `expand`, with stride 0, counts once); the tensor it writes, once; and the bytes of any memset
-- it launched. That is the least the operator must read and write, from its shapes alone. It is
-- not a measurement of memory traffic, in either direction:
--   - a kernel that reads an input more than once from memory (a tiled GEMM re-reading tiles, a
--     softmax making several passes) moves more;
--   - data already in the GPU's L2 cache (written by the kernel just before, or small enough to
--     stay there) moves less through HBM, so a bandwidth computed from these bytes can exceed the
--     HBM peak for small, cache-resident tensors.
-- A Kineto trace records input shapes only, so what an operator writes is inferred from its
-- inputs and its name (guide_traffic_write_numel).

INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.dtypes;

-- Number of elements of an operator's i-th input tensor (from `args.Input Dims[i][*]`), or
-- NULL when that input is not a tensor with recorded dimensions.
CREATE PERFETTO FUNCTION guide_traffic_input_numel(
  -- Argument set of the operator slice.
  arg_set_id ARGSETID,
  -- Input index (0-based).
  i LONG
)
-- Elements, or NULL.
RETURNS LONG AS
SELECT CASE
  WHEN extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][0]') IS NULL THEN NULL
  ELSE
    extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][0]')
    * COALESCE(extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][1]'), 1)
    * COALESCE(extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][2]'), 1)
    * COALESCE(extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][3]'), 1)
    * COALESCE(extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][4]'), 1)
END;

-- Bytes of an operator's i-th input tensor as stored: dimensions with stride 0 (a broadcast made
-- with `expand`) count once, so a [seq, seq] mask expanded to [batch, heads, seq, seq] is
-- seq * seq elements. NULL when that input is not a tensor with recorded dimensions, or its
-- type has no known element size. A tensor with no dimensions (a 0-dimensional scalar tensor)
-- records no `Input Dims` entries and so reads as NULL: a few bytes, left out.
CREATE PERFETTO FUNCTION guide_traffic_input_bytes(
  -- Argument set of the operator slice.
  arg_set_id ARGSETID,
  -- Input index (0-based).
  i LONG
)
-- Bytes, or NULL.
RETURNS LONG AS
SELECT CASE
  WHEN extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][0]') IS NULL THEN NULL
  ELSE guide_dtypes_elem_bytes(extract_arg($arg_set_id, 'args.Input type[' || $i || ']'))
    * (CASE WHEN extract_arg($arg_set_id, 'args.Input Strides[' || $i || '][0]') = 0 THEN 1
        ELSE extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][0]') END)
    * (CASE WHEN extract_arg($arg_set_id, 'args.Input Strides[' || $i || '][1]') = 0 THEN 1
        ELSE COALESCE(extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][1]'), 1) END)
    * (CASE WHEN extract_arg($arg_set_id, 'args.Input Strides[' || $i || '][2]') = 0 THEN 1
        ELSE COALESCE(extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][2]'), 1) END)
    * (CASE WHEN extract_arg($arg_set_id, 'args.Input Strides[' || $i || '][3]') = 0 THEN 1
        ELSE COALESCE(extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][3]'), 1) END)
    * (CASE WHEN extract_arg($arg_set_id, 'args.Input Strides[' || $i || '][4]') = 0 THEN 1
        ELSE COALESCE(extract_arg($arg_set_id, 'args.Input Dims[' || $i || '][4]'), 1) END)
END;

-- Whether an operator reads its i-th input: `copy_` does not read its first input (the
-- destination), `where` with a fourth tensor is `where.self_out` and does not read that one (its
-- destination), and `fill_` / `zero_` read nothing; every other input is read. Only inputs 0-4
-- count (no operator the guide measures reads more).
CREATE PERFETTO FUNCTION guide_traffic_reads_input(
  -- Operator name, e.g. aten::copy_.
  name STRING,
  -- Input index (0-based).
  i LONG
)
-- True when the input counts as read.
RETURNS BOOL AS
SELECT $i BETWEEN 0 AND 4
  AND NOT ($name = 'aten::copy_' AND $i = 0)
  AND NOT ($name = 'aten::where' AND $i = 3)
  AND $name NOT IN ('aten::fill_', 'aten::zero_');

-- Elements an operator writes, from its recorded inputs (a Kineto trace records no output
-- shapes). In-place operators (a trailing `_`: `copy_`, `fill_`, `masked_fill_`, `add_`) write
-- their first input; `bmm` / `mm` write [batch,] rows x columns of their two inputs; the
-- reductions `all`, `any`, `sum`, `mean`, `amax`, `amin` write the input less the reduced
-- dimension (one element when no single dimension is recorded); every other operator writes a
-- tensor as large as its largest input, which is its broadcast shape whenever one input has
-- that shape (true of every operator the guide measures).
CREATE PERFETTO FUNCTION guide_traffic_write_numel(
  -- Operator name.
  name STRING,
  -- Argument set of the operator slice.
  arg_set_id ARGSETID
)
-- Elements, or NULL when the shapes needed are not recorded.
RETURNS LONG AS
SELECT CASE
  WHEN $name GLOB 'aten::*_' THEN guide_traffic_input_numel($arg_set_id, 0)
  WHEN $name = 'aten::bmm' THEN
    extract_arg($arg_set_id, 'args.Input Dims[0][0]')
    * extract_arg($arg_set_id, 'args.Input Dims[0][1]')
    * extract_arg($arg_set_id, 'args.Input Dims[1][2]')
  WHEN $name = 'aten::mm' THEN
    extract_arg($arg_set_id, 'args.Input Dims[0][0]')
    * extract_arg($arg_set_id, 'args.Input Dims[1][1]')
  WHEN $name IN (
      'aten::all', 'aten::any', 'aten::sum', 'aten::mean', 'aten::amax', 'aten::amin'
    ) THEN COALESCE(
      guide_traffic_input_numel($arg_set_id, 0) / extract_arg(
        $arg_set_id,
        -- No single reduced dimension recorded (a full reduction, or a list of dimensions): the
        -- key is NULL, extract_arg must not see it, and the result counts as one element.
        COALESCE(
          'args.Input Dims[0]['
            || (CAST(extract_arg($arg_set_id, 'args.Concrete Inputs[1]') AS INT)
              + CASE WHEN CAST(extract_arg($arg_set_id, 'args.Concrete Inputs[1]') AS INT) < 0
                THEN (
                  SELECT COUNT(*) FROM args
                  WHERE arg_set_id = $arg_set_id AND key LIKE 'args.Input Dims[0][%'
                )
                ELSE 0 END)
            || ']',
          'args.Input Dims[-]'
        )
      ),
      1)
  ELSE MAX(
    COALESCE(guide_traffic_input_numel($arg_set_id, 0), 0),
    COALESCE(guide_traffic_input_numel($arg_set_id, 1), 0),
    COALESCE(guide_traffic_input_numel($arg_set_id, 2), 0),
    COALESCE(guide_traffic_input_numel($arg_set_id, 3), 0),
    COALESCE(guide_traffic_input_numel($arg_set_id, 4), 0)
  )
END;

-- Bytes per element of what an operator writes: 1 for operators that return booleans
-- (comparisons, `isneginf`, `all`, ...), the larger of the two value inputs for `where` (a
-- Python number there makes a float32 result), else the first input's.
CREATE PERFETTO FUNCTION guide_traffic_write_elem_bytes(
  -- Operator name.
  name STRING,
  -- Argument set of the operator slice.
  arg_set_id ARGSETID
)
-- Bytes per element, or NULL for an unknown type.
RETURNS LONG AS
SELECT CASE
  WHEN $name IN (
      'aten::isneginf', 'aten::isposinf', 'aten::isinf', 'aten::isnan', 'aten::eq', 'aten::ne',
      'aten::lt', 'aten::le', 'aten::gt', 'aten::ge', 'aten::logical_and', 'aten::logical_or',
      'aten::logical_not', 'aten::all', 'aten::any'
    ) THEN 1
  WHEN $name = 'aten::where' THEN COALESCE(NULLIF(MAX(
      COALESCE(guide_dtypes_elem_bytes(extract_arg($arg_set_id, 'args.Input type[1]')), 0),
      COALESCE(guide_dtypes_elem_bytes(extract_arg($arg_set_id, 'args.Input type[2]')), 0)
    ), 0), 4)
  ELSE guide_dtypes_elem_bytes(extract_arg($arg_set_id, 'args.Input type[0]'))
END;

-- Tensor operands per element of a multi-tensor optimizer operator (`aten::_foreach_*`,
-- `aten::_fused_adamw_`/`_fused_adam_`), whose tensor lists a Kineto trace records without
-- shapes: the tensors it reads plus the tensors it writes, each element once, as the same rules
-- as guide_traffic_op count a single-tensor operator. A `_foreach_` operator reads each list
-- named in its arguments and writes its first (in place) or a new list: `_foreach_lerp_(self,
-- end, w)` 3, `_foreach_addcmul_` / `_foreach_addcdiv_(self, t1, t2)` 4, one list and a scalar
-- (`_foreach_mul_`, `_foreach_div_`, `_foreach_add_`, `_foreach_sqrt`) 2, `_foreach_zero_` 1
-- (written, not read). The fused AdamW step reads param, grad, exp_avg and exp_avg_sq and writes
-- param, exp_avg and exp_avg_sq: 7. NULL for any other operator.
CREATE PERFETTO FUNCTION guide_traffic_list_operands(
  -- Operator name.
  name STRING
)
-- Tensor operands per element, or NULL.
RETURNS LONG AS
SELECT CASE
  WHEN $name IN ('aten::_fused_adamw_', 'aten::_fused_adam_') THEN 7
  WHEN $name IN ('aten::_foreach_addcmul_', 'aten::_foreach_addcdiv_') THEN 4
  WHEN $name = 'aten::_foreach_lerp_' THEN 3
  WHEN $name IN (
      'aten::_foreach_mul_', 'aten::_foreach_div_', 'aten::_foreach_add_', 'aten::_foreach_sqrt'
    ) THEN 2
  WHEN $name = 'aten::_foreach_zero_' THEN 1
END;

-- The tensor inputs each operator reads (guide_traffic_reads_input), one row per (operator,
-- input), for callers that split the bytes read by tensor size.
CREATE PERFETTO MACRO guide_traffic_op_inputs(
  -- Operators: needs the columns id (slice id), name and arg_set_id.
  ops TableOrSubquery
)
-- One row per (operator, input read) with the columns op_id, i (input index), numel (elements,
-- NULL when not recorded) and bytes (as stored, guide_traffic_input_bytes; 0 when unknown).
-- Inputs that are not tensors with recorded dimensions have bytes 0.
RETURNS TableOrSubquery AS
(
  SELECT
    o.id AS op_id,
    n.i,
    guide_traffic_input_numel(o.arg_set_id, n.i) AS numel,
    COALESCE(guide_traffic_input_bytes(o.arg_set_id, n.i), 0) AS bytes
  FROM $ops AS o
  CROSS JOIN (
    SELECT 0 AS i UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
  ) AS n
  WHERE guide_traffic_reads_input(o.name, n.i)
);

-- The bytes each operator must read and write at least (the rules at the top of this module):
-- its inputs read once, the tensor it writes written once, plus the bytes of the memsets its
-- runtime calls launched (a GEMM clearing its workspace, say).
CREATE PERFETTO MACRO guide_traffic_op(
  -- Operators: needs the columns id (slice id), name and arg_set_id.
  ops TableOrSubquery
)
-- One row per operator with the columns:
--   op_id: the operator's slice id;
--   read_bytes: its inputs, as guide_traffic_op_inputs counts them;
--   write_numel: elements of the tensor it writes (guide_traffic_write_numel; NULL if unknown);
--   result_bytes: bytes of that tensor (write_numel x guide_traffic_write_elem_bytes; 0 if
--     unknown);
--   memset_bytes: bytes set by the GPU memsets it launched (0 when none);
--   write_bytes: result_bytes + memset_bytes.
RETURNS TableOrSubquery AS
(
  WITH
    _tr_ops AS MATERIALIZED (SELECT id, name, arg_set_id FROM $ops),
    _tr_read AS MATERIALIZED (
      SELECT op_id, SUM(bytes) AS read_bytes
      FROM guide_traffic_op_inputs!(_tr_ops)
      GROUP BY op_id
    ),
    -- Every memset's bytes by the operator whose launch call started it, read from the memsets
    -- (few) through the indexed links; the join below keeps the asked operators' own. Asked the
    -- other way round (each operator's launches), SQLite scanned every launch per operator: 44
    -- s for 4,000 operators on a 3 MB trace.
    _tr_memset AS MATERIALIZED (
      SELECT r.parent_id AS op_id, SUM(COALESCE(extract_arg(g.arg_set_id, 'args.bytes'), 0))
        AS memset_bytes
      FROM guide_kineto_gpu_activity AS g
      JOIN guide_kineto_launch_link AS ll ON ll.gpu_id = g.id
      JOIN slice AS r ON r.id = ll.launch_id
      WHERE g.category = 'gpu_memset'
      GROUP BY r.parent_id
    ),
    _tr_write AS (
      SELECT
        id,
        guide_traffic_write_numel(name, arg_set_id) AS write_numel,
        COALESCE(
          guide_traffic_write_numel(name, arg_set_id)
            * guide_traffic_write_elem_bytes(name, arg_set_id),
          0) AS result_bytes
      FROM _tr_ops
    )
  SELECT
    w.id AS op_id,
    COALESCE(rd.read_bytes, 0) AS read_bytes,
    w.write_numel,
    w.result_bytes,
    COALESCE(m.memset_bytes, 0) AS memset_bytes,
    w.result_bytes + COALESCE(m.memset_bytes, 0) AS write_bytes
  FROM _tr_write AS w
  LEFT JOIN _tr_read AS rd ON rd.op_id = w.id
  LEFT JOIN _tr_memset AS m ON m.op_id = w.id
);
