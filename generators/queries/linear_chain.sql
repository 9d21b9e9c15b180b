-- What does one aten::linear call run, with the shapes and strides each operator received?
-- output: table
-- columns: depth=Depth, name=Operator, input_dims=Input shapes, input_strides=Input strides, view_args=Sizes / strides passed, kernels=Kernels launched
-- question_ja: aten::linear の 1 回の呼び出しは何を実行するか（各演算子が受け取った形状とストライドとともに）
-- columns_ja: depth=深さ, name=演算子, input_dims=入力の形状, input_strides=入力のストライド, view_args=渡したサイズ / ストライド, kernels=起動したカーネル
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.shapes;

WITH
  first_linear AS (
    SELECT * FROM guide_kineto_slice
    WHERE name = 'aten::linear' AND category = 'cpu_op'
    ORDER BY ts
    LIMIT 1
  ),
  row AS (
    SELECT s.*
    FROM first_linear AS f
    JOIN guide_kineto_slice AS s
      ON s.track_id = f.track_id AND s.ts >= f.ts AND s.ts + s.dur <= f.ts + f.dur
      AND s.category = 'cpu_op'
  )
SELECT
  row.depth - (SELECT depth FROM first_linear) AS depth,
  row.name,
  (
    SELECT GROUP_CONCAT(dims, ' · ')
    FROM (SELECT dims FROM guide_shapes_input WHERE slice_id = row.id ORDER BY input_index)
  ) AS input_dims,
  (
    SELECT GROUP_CONCAT(strides, ' · ')
    FROM (SELECT strides FROM guide_shapes_input WHERE slice_id = row.id ORDER BY input_index)
  ) AS input_strides,
  CASE
    WHEN row.name = 'aten::as_strided'
      THEN extract_arg(row.arg_set_id, 'args.Concrete Inputs[1]')
        || ' / ' || extract_arg(row.arg_set_id, 'args.Concrete Inputs[2]')
    ELSE NULL
  END AS view_args,
  (
    SELECT COUNT(*)
    FROM guide_kineto_launch_link AS ll
    JOIN guide_kineto_slice AS r ON r.id = ll.launch_id
    WHERE r.track_id = row.track_id AND r.ts >= row.ts AND r.ts < row.ts + row.dur
      AND r.depth = row.depth + 1
  ) AS kernels
FROM row
ORDER BY row.ts, row.depth;
