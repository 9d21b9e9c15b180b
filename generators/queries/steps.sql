-- What happens in each profiled step: its length, and when the first aten:: operator starts?
-- output: table
-- columns: step=Step, dur_ns=Step time, label_ns=Labelled region, first_op_delay_ns=Label start to first aten:: op, cpu_ops=CPU ops, kernels=Kernels
-- question_ja: プロファイルした各ステップで何が起きるか（ステップの長さと、最初の aten:: 演算子が始まる時点）
-- columns_ja: step=ステップ, dur_ns=ステップ時間, label_ns=ラベル付きの領域, first_op_delay_ns=ラベル開始から最初の aten:: 演算子まで, cpu_ops=CPU 演算子数, kernels=カーネル数
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  label AS (SELECT step, id, ts, dur, depth, track_id FROM guide_kineto_step_label),
  op_in_step AS (
    SELECT st.step, s.ts, s.name
    FROM guide_kineto_profiler_step AS st
    JOIN guide_kineto_slice AS s
      ON s.track_id = st.track_id AND s.ts >= st.ts AND s.ts < st.ts + st.dur
    WHERE s.category = 'cpu_op'
  )
SELECT
  st.step,
  st.dur AS dur_ns,
  label.dur AS label_ns,
  (SELECT MIN(o.ts) FROM op_in_step AS o WHERE o.step = st.step AND o.name GLOB 'aten::*')
    - label.ts AS first_op_delay_ns,
  (SELECT COUNT(*) FROM op_in_step AS o WHERE o.step = st.step) AS cpu_ops,
  (
    SELECT COUNT(*)
    FROM guide_kineto_launch_link AS ll
    JOIN guide_kineto_runtime_call AS r ON r.id = ll.launch_id
    JOIN guide_kineto_gpu_activity AS g ON g.id = ll.gpu_id
    WHERE g.category = 'kernel' AND r.ts >= st.ts AND r.ts < st.ts + st.dur
  ) AS kernels
FROM guide_kineto_profiler_step AS st
LEFT JOIN label USING (step)
ORDER BY st.step;
