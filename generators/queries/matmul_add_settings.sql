-- Which sizes and dtype did this capture use (from the trace's recorded input shapes and types)?
-- output: values
-- question_ja: このキャプチャはどのサイズと dtype を使ったか（トレースに記録された入力の形状と型から）
INCLUDE PERFETTO MODULE guide.kineto;

-- The GEMM's first input is N x N (or B x N x N when batched); the capture record holds the same
-- settings, and tests check that both agree.
WITH g AS (
  SELECT s.arg_set_id, s.name
  FROM guide_kineto_slice AS s
  WHERE s.category = 'cpu_op' AND s.name IN ('aten::mm', 'aten::bmm', 'aten::addmm')
  ORDER BY s.ts
  LIMIT 1
)
SELECT
  (
    SELECT CASE name
      WHEN 'aten::bmm' THEN extract_arg(arg_set_id, 'args.Input Dims[0][1]')
      WHEN 'aten::addmm' THEN extract_arg(arg_set_id, 'args.Input Dims[1][0]')
      ELSE extract_arg(arg_set_id, 'args.Input Dims[0][0]')
    END FROM g
  ) AS size,
  (
    SELECT CASE extract_arg(arg_set_id, 'args.Input type[0]')
      WHEN 'c10::BFloat16' THEN 'bf16'
      WHEN 'float' THEN 'fp32'
      ELSE extract_arg(arg_set_id, 'args.Input type[0]')
    END FROM g
  ) AS dtype,
  (SELECT COUNT(*) FROM guide_kineto_profiler_step) AS active_steps;
