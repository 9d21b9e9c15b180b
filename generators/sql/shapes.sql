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

-- One row per tensor input of every operator slice: its dimensions and strides as text.
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
  flat AS (
    SELECT
      s.id AS slice_id,
      CAST(regexp_extract(a.key, 'Dims\[([0-9]+)\]') AS INT) AS input_index,
      CAST(regexp_extract(a.key, '\]\[([0-9]+)\]$') AS INT) AS dim_index,
      a.int_value AS size,
      extract_arg(s.arg_set_id, replace(a.key, 'Input Dims', 'Input Strides')) AS stride
    FROM slice AS s
    JOIN args AS a USING (arg_set_id)
    WHERE a.key LIKE 'args.Input Dims[%][%]'
  ),
  win AS (
    SELECT
      slice_id,
      input_index,
      dim_index,
      COUNT(*) OVER w AS ndim,
      GROUP_CONCAT(size, ', ') OVER w AS dims,
      GROUP_CONCAT(stride, ', ') OVER w AS strides,
      -- SQL has no product aggregate: exp(sum(ln)), rounded (exact for realistic sizes).
      CAST(ROUND(EXP(SUM(LN(MAX(size, 1))) OVER w)) AS INT) * MIN(MIN(size, 1)) OVER w AS numel
    FROM flat
    WINDOW w AS (
      PARTITION BY slice_id, input_index ORDER BY dim_index
      ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
    )
  ),
  typed AS (
    SELECT o.*, extract_arg(s.arg_set_id, 'args.Input type[' || o.input_index || ']') AS dtype
    FROM win AS o
    JOIN slice AS s ON s.id = o.slice_id
    WHERE o.dim_index = 0
  )
SELECT
  slice_id,
  input_index,
  ndim,
  '[' || dims || ']' AS dims,
  '[' || strides || ']' AS strides,
  numel,
  dtype,
  guide_shapes_elem_bytes(dtype) AS element_bytes
FROM typed;
