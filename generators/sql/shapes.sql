-- Operator input shapes, strides and types, as `record_shapes=True` stores them in a Kineto trace.
--
-- The JSON importer flattens the profiler's nested lists into one argument per element:
-- `args.Input Dims[i][j]` is dimension j of input i, `args.Input Strides[i][j]` its stride, and
-- `args.Input type[i]` the input's type ('float', 'c10::BFloat16', 'Scalar', ...). Non-tensor
-- inputs recorded by value (sizes passed to `aten::as_strided`, scalars) are in
-- `args.Concrete Inputs[i]` as text.

INCLUDE PERFETTO MODULE guide.dtypes;

-- Each recorded dimension of every operator input: `args.Input Dims[i][j]` is dimension j of
-- input i (a list of tensors has one more level: its keys end in `[i][k][j]`, and each of its
-- tensors' dimensions count under input i). Read by key prefix from the argument table alone:
-- looking arguments up slice by slice is what made this module slow on traces with hundreds of
-- thousands of operators.
CREATE PERFETTO TABLE _guide_shapes_dim(
  -- Argument set of the operator slice.
  arg_set_id ARGSETID,
  -- The argument's key, e.g. 'args.Input Dims[0][1]'.
  key STRING,
  -- Position of the input in the operator's argument list (the first index).
  input_index LONG,
  -- Position of the dimension (the last index).
  dim_index LONG,
  -- The dimension's size.
  size LONG
) AS
SELECT
  arg_set_id,
  key,
  -- The number after the first '[' (CAST stops at the ']').
  CAST(substr(key, instr(key, '[') + 1) AS INT) AS input_index,
  -- The number after the last '[' (rtrim leaves the key up to it; CAST stops at the ']').
  CAST(substr(key, length(rtrim(key, '0123456789]')) + 1) AS INT) AS dim_index,
  int_value AS size
FROM args
WHERE flat_key = 'args.Input Dims';

-- Each input's dimensions and strides put together, one row per input of an argument set.
CREATE PERFETTO TABLE _guide_shapes_grouped(
  -- Argument set of the operator slice.
  arg_set_id ARGSETID,
  -- Position of the input in the operator's argument list (0-based).
  input_index LONG,
  -- Number of dimensions.
  ndim LONG,
  -- Dimensions, comma separated, in order.
  dims STRING,
  -- Strides, comma separated, in order; NULL when the trace recorded none.
  strides STRING,
  -- Product of the dimensions.
  numel LONG
) AS
WITH
  stride AS (
    SELECT arg_set_id, replace(key, 'Input Strides', 'Input Dims') AS key, int_value AS stride
    FROM args
    WHERE flat_key = 'args.Input Strides'
  )
SELECT
  d.arg_set_id,
  d.input_index,
  COUNT(*) AS ndim,
  GROUP_CONCAT(d.size, ', ' ORDER BY d.dim_index) AS dims,
  GROUP_CONCAT(st.stride, ', ' ORDER BY d.dim_index) AS strides,
  -- SQL has no product aggregate: exp(sum(ln)), rounded (exact for realistic sizes).
  CAST(ROUND(EXP(SUM(LN(MAX(d.size, 1))))) AS INT) * MIN(MIN(d.size, 1)) AS numel
FROM _guide_shapes_dim AS d
LEFT JOIN stride AS st USING (arg_set_id, key)
GROUP BY d.arg_set_id, d.input_index;

-- One row per tensor input of every operator slice: its dimensions and strides as text. (A list
-- of tensors gives one row per tensor in it, each with the whole list's dimensions.)
CREATE PERFETTO TABLE guide_shapes_input(
  -- Slice id of the operator.
  slice_id JOINID(slice.id),
  -- Position of the input in the operator's argument list (0-based).
  input_index LONG,
  -- Number of dimensions.
  ndim LONG,
  -- Dimensions as the profiler prints them, e.g. '[64, 32]'.
  dims STRING,
  -- Strides (in elements) in the same format, e.g. '[32, 1]'.
  strides STRING,
  -- Product of the dimensions (number of elements).
  numel LONG,
  -- Element type as recorded ('float', 'c10::BFloat16', 'c10::Half', ...).
  dtype STRING,
  -- Bytes per element (guide_dtypes_elem_bytes; NULL for types it does not list).
  element_bytes LONG
) AS
WITH
  -- Materialized: looked up by argument set, the slice table is scanned once per lookup.
  operator AS MATERIALIZED (SELECT id, arg_set_id FROM slice WHERE arg_set_id IS NOT NULL),
  input_type AS MATERIALIZED (
    SELECT
      arg_set_id,
      CAST(substr(key, instr(key, '[') + 1) AS INT) AS input_index,
      string_value AS dtype
    FROM args
    WHERE flat_key = 'args.Input type'
  ),
  -- The function once per type rather than once per input (a call costs a statement).
  type_bytes AS MATERIALIZED (
    SELECT dtype, guide_dtypes_elem_bytes(dtype) AS element_bytes
    FROM (SELECT DISTINCT dtype FROM input_type)
  )
SELECT
  o.id AS slice_id,
  g.input_index,
  g.ndim,
  '[' || g.dims || ']' AS dims,
  '[' || g.strides || ']' AS strides,
  g.numel,
  t.dtype,
  b.element_bytes
FROM _guide_shapes_grouped AS g
JOIN operator AS o USING (arg_set_id)
JOIN _guide_shapes_dim AS first_dim
  ON first_dim.arg_set_id = g.arg_set_id
  AND first_dim.input_index = g.input_index
  AND first_dim.dim_index = 0
LEFT JOIN input_type AS t ON t.arg_set_id = g.arg_set_id AND t.input_index = g.input_index
LEFT JOIN type_bytes AS b USING (dtype);
