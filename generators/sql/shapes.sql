-- Operator input shapes, strides and types, as `record_shapes=True` stores them in a Kineto trace.
--
-- The JSON importer flattens the profiler's nested lists into one argument per element:
-- `args.Input Dims[i][j]` is dimension j of input i, `args.Input Strides[i][j]` its stride, and
-- `args.Input type[i]` the input's type ('float', 'c10::BFloat16', 'Scalar', ...). Non-tensor
-- inputs recorded by value (sizes passed to `aten::as_strided`, scalars) are in
-- `args.Concrete Inputs[i]` as text.

-- Bytes per element of a tensor type as `record_shapes=True` spells it in `args.Input type[i]`
-- (the C++ name of the element type). The one mapping from recorded type to element size in the
-- guide: floating types ('double' 8, 'float' 4, 'c10::BFloat16' and 'c10::Half' 2, every
-- 'c10::Float8_*' variant 1), complex types ('c10::complex<double>' 16, 'c10::complex<float>'
-- 8, 'c10::complex<c10::Half>' 4), integer types in the spellings compilers give them ('long
-- int', 'int64_t', 'long long int' 8; 'int', 'int32_t' 4; 'short int', 'int16_t' 2; 'signed
-- char', 'unsigned char', 'int8_t', 'uint8_t' 1, and their unsigned variants) and 'bool' 1;
-- also PyTorch's own names for them, as a communication kernel's `dtype` argument spells them
-- ('ComplexDouble' 16; 'Double', 'Long', 'UInt64', 'ComplexFloat' 8; 'Float', 'Int', 'UInt32',
-- 'ComplexHalf' 4; 'BFloat16', 'Half', 'Short', 'UInt16' 2; 'Char', 'Byte', 'Bool', 'Float8_*' 1).
-- NULL for anything else ('Scalar', 'ScalarList', quantized or packed types, '').
CREATE PERFETTO FUNCTION guide_shapes_elem_bytes(
  -- The element type as the trace records it, e.g. 'float', 'c10::BFloat16', 'long int'.
  dtype STRING
)
-- Bytes per element, or NULL when the type is not one listed above.
RETURNS LONG AS
SELECT CASE
  WHEN $dtype IN ('c10::complex<double>', 'ComplexDouble') THEN 16
  WHEN $dtype IN (
      'double', 'long int', 'int64_t', 'long long int', 'long unsigned int', 'uint64_t',
      'long long unsigned int', 'c10::complex<float>', 'Double', 'Long', 'UInt64', 'ComplexFloat'
    ) THEN 8
  WHEN $dtype IN (
      'float', 'int', 'int32_t', 'unsigned int', 'uint32_t', 'c10::complex<c10::Half>', 'Float',
      'Int', 'UInt32', 'ComplexHalf'
    ) THEN 4
  WHEN $dtype IN (
      'c10::BFloat16', 'c10::Half', 'short int', 'short', 'int16_t', 'short unsigned int',
      'unsigned short', 'uint16_t', 'BFloat16', 'Half', 'Short', 'UInt16'
    ) THEN 2
  WHEN $dtype IN (
      'bool', 'signed char', 'unsigned char', 'char', 'int8_t', 'uint8_t', 'Char', 'Byte', 'Bool'
    ) THEN 1
  WHEN $dtype GLOB 'c10::Float8_*' OR $dtype GLOB 'Float8_*' THEN 1
  ELSE NULL
END;

-- A short label for a recorded element type, in the words the rest of the guide uses (the kernel
-- name decoder's): 'fp64', 'fp32', 'bf16', 'fp16', 'fp8 e4m3fn' (and the other 'c10::Float8_*'
-- variants, named by their suffix), 'complex64', 'complex128', 'int64', 'int32', 'int16', 'int8',
-- 'uint8', 'bool'. Any other type comes back as recorded; NULL stays NULL.
CREATE PERFETTO FUNCTION guide_shapes_dtype_label(
  -- The element type as the trace records it, e.g. 'float', 'c10::BFloat16'.
  dtype STRING
)
-- The short label, or the recorded type when it has none.
RETURNS STRING AS
SELECT CASE
  WHEN $dtype = 'double' THEN 'fp64'
  WHEN $dtype = 'float' THEN 'fp32'
  WHEN $dtype = 'c10::BFloat16' THEN 'bf16'
  WHEN $dtype = 'c10::Half' THEN 'fp16'
  WHEN $dtype GLOB 'c10::Float8_*' THEN 'fp8 ' || substr($dtype, length('c10::Float8_') + 1)
  WHEN $dtype = 'c10::complex<float>' THEN 'complex64'
  WHEN $dtype = 'c10::complex<double>' THEN 'complex128'
  WHEN $dtype IN ('long int', 'int64_t', 'long long int') THEN 'int64'
  WHEN $dtype IN ('int', 'int32_t') THEN 'int32'
  WHEN $dtype IN ('short int', 'short', 'int16_t') THEN 'int16'
  WHEN $dtype IN ('signed char', 'int8_t') THEN 'int8'
  WHEN $dtype IN ('unsigned char', 'uint8_t') THEN 'uint8'
  ELSE $dtype
END;

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
  -- Bytes per element (guide_shapes_elem_bytes; NULL for types it does not list).
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
    SELECT dtype, guide_shapes_elem_bytes(dtype) AS element_bytes
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
