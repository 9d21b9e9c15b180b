-- Where does a forward allocate and copy, and what does each copy start on the GPU?
-- output: table
-- columns: parent=Called from, name=Operator, calls_per_fwd=Calls per forward, time_ns_per_fwd=Time per forward, input0=First input, gpu_work=GPU work, launch_api=Launched by
-- question_ja: 順伝播はどこでメモリの確保とコピーを行い、各コピーは GPU で何を開始するか
-- columns_ja: parent=呼び出し元, name=演算子, calls_per_fwd=順伝播 1 回あたりの呼び出し回数, time_ns_per_fwd=順伝播 1 回あたりの時間, input0=最初の入力, gpu_work=GPU の処理, launch_api=起動元
INCLUDE PERFETTO MODULE guide.attention;

WITH
  fwd AS (SELECT * FROM guide_attention_forward WHERE name = 'attn_fwd'),
  op AS (
    SELECT fs.*, p.name AS parent
    FROM guide_attention_forward_slice AS fs
    JOIN fwd ON fwd.id = fs.fwd_id
    LEFT JOIN slice AS p ON p.id = fs.parent_id
    WHERE fs.category = 'cpu_op'
      AND fs.name IN (
        'aten::clone', 'aten::copy_', 'aten::empty', 'aten::empty_like', 'aten::empty_strided',
        'aten::_to_copy', 'aten::contiguous'
      )
  ),
  launched AS (
    -- GPU work whose launch call sits directly inside one of these operators.
    SELECT op.id AS op_id, w.name AS gpu_name, w.launch_api
    FROM op
    JOIN guide_attention_gpu_work AS w ON w.launch_id IN (
      SELECT c.id FROM slice AS c WHERE c.parent_id = op.id
    )
  )
SELECT
  COALESCE(op.parent, '') AS parent,
  op.name,
  1.0 * COUNT(*) / (SELECT COUNT(*) FROM fwd) AS calls_per_fwd,
  1.0 * SUM(op.dur) / (SELECT COUNT(*) FROM fwd) AS time_ns_per_fwd,
  COALESCE(extract_arg(MIN(op.arg_set_id), 'args.Input type[0]'), '') || ' ['
    || COALESCE(
      extract_arg(MIN(op.arg_set_id), 'args.Input Dims[0][0]')
      || COALESCE(', ' || extract_arg(MIN(op.arg_set_id), 'args.Input Dims[0][1]'), '')
      || COALESCE(', ' || extract_arg(MIN(op.arg_set_id), 'args.Input Dims[0][2]'), '')
      || COALESCE(', ' || extract_arg(MIN(op.arg_set_id), 'args.Input Dims[0][3]'), ''),
      '')
    || ']' AS input0,
  COALESCE((SELECT GROUP_CONCAT(DISTINCT l.gpu_name) FROM launched AS l
    JOIN op AS o2 ON o2.id = l.op_id
    WHERE o2.name = op.name AND COALESCE(o2.parent, '') = COALESCE(op.parent, '')), '')
    AS gpu_work,
  COALESCE((SELECT GROUP_CONCAT(DISTINCT l.launch_api) FROM launched AS l
    JOIN op AS o2 ON o2.id = l.op_id
    WHERE o2.name = op.name AND COALESCE(o2.parent, '') = COALESCE(op.parent, '')), '')
    AS launch_api
FROM op
GROUP BY op.parent, op.name
ORDER BY MIN(op.ts);
