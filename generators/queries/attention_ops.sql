-- Which operators does the first forward call, in order, and what GPU work does each launch?
-- output: table
-- columns: rel_depth=Depth, name=Operator, dur_ns=Time, self_ns=Self time, input0=First input, gpu_work=GPU work launched inside
-- question_ja: 最初の順伝播はどの演算子をどの順に呼び、それぞれがどんな GPU の処理を起動するか
-- columns_ja: rel_depth=深さ, name=演算子, dur_ns=時間, self_ns=自己時間, input0=最初の入力, gpu_work=内部で起動した GPU の処理
INCLUDE PERFETTO MODULE guide.attention;

-- View operators (as_strided, view, expand, reshape, ...) are left out: they touch no data.
WITH
  first_fwd AS (
    SELECT * FROM guide_attention_forward WHERE name = 'attn_fwd' ORDER BY ts LIMIT 1
  ),
  op AS (
    SELECT fs.*
    FROM guide_attention_forward_slice AS fs
    JOIN first_fwd ON first_fwd.id = fs.fwd_id
    WHERE fs.category = 'cpu_op' AND NOT guide_attention_is_view_op(fs.name)
  )
SELECT
  op.rel_depth,
  op.name,
  op.dur AS dur_ns,
  op.self_ns,
  COALESCE(extract_arg(op.arg_set_id, 'args.Input type[0]'), '') || ' ['
    || COALESCE(
      extract_arg(op.arg_set_id, 'args.Input Dims[0][0]')
      || COALESCE(', ' || extract_arg(op.arg_set_id, 'args.Input Dims[0][1]'), '')
      || COALESCE(', ' || extract_arg(op.arg_set_id, 'args.Input Dims[0][2]'), '')
      || COALESCE(', ' || extract_arg(op.arg_set_id, 'args.Input Dims[0][3]'), ''),
      '')
    || ']' AS input0,
  COALESCE((
    SELECT GROUP_CONCAT(family, '; ') FROM (
      SELECT w.family
      FROM guide_attention_gpu_work AS w
      JOIN slice AS launch ON launch.id = w.launch_id
      WHERE launch.track_id = (SELECT track_id FROM first_fwd)
        AND launch.ts >= op.ts AND launch.ts < op.ts + op.dur
      ORDER BY w.ts
    )
  ), '') AS gpu_work
FROM op
ORDER BY op.ts, op.rel_depth;
