-- Operator input shapes, strides and types, as `record_shapes=True` stores them in a Kineto trace.
--
-- The JSON importer flattens the profiler's nested lists into one argument per element:
-- `args.Input Dims[i][j]` is dimension j of input i, `args.Input Strides[i][j]` its stride, and
-- `args.Input type[i]` the input's type ('float', 'c10::BFloat16', 'Scalar', ...). Non-tensor
-- inputs recorded by value (sizes passed to `aten::as_strided`, scalars) are in
-- `args.Concrete Inputs[i]` as text.

-- One row per tensor input of every operator slice: its dimensions and strides as text.
CREATE PERFETTO TABLE guide_shapes_input(
  -- Slice id of the operator.
  slice_id LONG,
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
  -- Bytes per element for the common floating types (NULL for others).
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
  )
SELECT
  o.slice_id,
  o.input_index,
  o.ndim,
  '[' || o.dims || ']' AS dims,
  '[' || o.strides || ']' AS strides,
  o.numel,
  extract_arg(s.arg_set_id, 'args.Input type[' || o.input_index || ']') AS dtype,
  CASE extract_arg(s.arg_set_id, 'args.Input type[' || o.input_index || ']')
    WHEN 'float' THEN 4
    WHEN 'double' THEN 8
    WHEN 'c10::BFloat16' THEN 2
    WHEN 'c10::Half' THEN 2
    ELSE NULL
  END AS element_bytes
FROM win AS o
JOIN slice AS s ON s.id = o.slice_id
WHERE o.dim_index = 0;
