-- Does aten::t do any work: operators that compute, runtime calls, kernels or flow arrows?
-- output: values
-- question_ja: aten::t は何か処理をしているか（計算する演算子、ランタイム呼び出し、カーネル、フローの矢印）
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.shapes;

WITH
  t AS (SELECT * FROM guide_kineto_slice WHERE name = 'aten::t' AND category = 'cpu_op'),
  first_t AS (SELECT * FROM t ORDER BY ts LIMIT 1),
  -- Everything nested inside any aten::t call, on its thread.
  inside AS (
    SELECT s.*
    FROM t
    JOIN guide_kineto_slice AS s
      ON s.track_id = t.track_id AND s.ts >= t.ts AND s.ts + s.dur <= t.ts + t.dur
      AND s.depth > t.depth
  ),
  t_and_inside AS (SELECT id FROM t UNION ALL SELECT id FROM inside),
  -- The GPU columns only mean something on a trace with GPU activity: NULL (not 0) on a CPU one.
  gpu AS (SELECT COUNT(*) > 0 AS yes FROM guide_kineto_gpu_activity),
  first_strided AS (
    SELECT s.*
    FROM first_t
    JOIN guide_kineto_slice AS s
      ON s.track_id = first_t.track_id AND s.ts >= first_t.ts
      AND s.ts + s.dur <= first_t.ts + first_t.dur AND s.name = 'aten::as_strided'
    LIMIT 1
  )
SELECT
  (SELECT COUNT(*) FROM t) AS t_calls,
  (SELECT COUNT(*) FROM inside WHERE category = 'cpu_op') AS t_child_ops,
  -- Operators other than the view-making ones (transpose, as_strided) would read or write data.
  (
    SELECT COUNT(*) FROM inside
    WHERE category = 'cpu_op' AND name NOT IN ('aten::transpose', 'aten::as_strided')
  ) AS t_child_ops_doing_work,
  CASE WHEN (SELECT yes FROM gpu) THEN
    (SELECT COUNT(*) FROM inside WHERE category IN ('cuda_runtime', 'cuda_driver'))
  END AS t_runtime_calls,
  CASE WHEN (SELECT yes FROM gpu) THEN
    (SELECT COUNT(*) FROM flow WHERE slice_out IN (SELECT id FROM t_and_inside))
  END AS t_flows,
  CASE WHEN (SELECT yes FROM gpu) THEN
    (
      SELECT COUNT(*) FROM guide_kineto_launch_link
      WHERE launch_id IN (SELECT id FROM t_and_inside)
    )
  END AS t_kernels,
  CASE WHEN (SELECT yes FROM gpu) THEN
    (
      SELECT COALESCE(SUM(g.dur), 0)
      FROM guide_kineto_launch_link AS ll
      JOIN guide_kineto_gpu_activity AS g ON g.id = ll.gpu_id
      WHERE ll.launch_id IN (SELECT id FROM t_and_inside)
    )
  END AS t_device_ns,
  -- The weight going in, and the view coming out (the sizes and strides as_strided was given).
  (SELECT dims FROM guide_shapes_input WHERE slice_id = (SELECT id FROM first_t)) AS w_dims,
  (SELECT strides FROM guide_shapes_input WHERE slice_id = (SELECT id FROM first_t))
    AS w_strides,
  (SELECT extract_arg(arg_set_id, 'args.Concrete Inputs[1]') FROM first_strided) AS wt_dims,
  (SELECT extract_arg(arg_set_id, 'args.Concrete Inputs[2]') FROM first_strided) AS wt_strides,
  (SELECT ts FROM first_t) / 1e9 AS first_t_start_s,
  (SELECT ts + dur FROM first_t) / 1e9 AS first_t_end_s;
