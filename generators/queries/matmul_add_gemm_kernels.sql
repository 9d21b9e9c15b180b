-- Which GEMM kernels ran, how long did each take at its fastest, median and slowest, and at what rate?
-- output: table
-- needs: cuda
-- columns: op_name=Operator, kernel_name=Kernel, instances=Instances, min_ns=Min, median_ns=Median, max_ns=Max, median_tflops=At the median, tflops_peak_pct=% of peak
-- question_ja: どの GEMM カーネルが実行され、それぞれ最速・中央値・最遅でどれだけかかり、どのレートに達したか
-- columns_ja: op_name=演算子, kernel_name=カーネル, instances=インスタンス数, min_ns=最小, median_ns=中央値, max_ns=最大, median_tflops=中央値での達成性能, tflops_peak_pct=ピーク性能に対する %
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.dtypes;
INCLUDE PERFETTO MODULE guide.hardware;
INCLUDE PERFETTO MODULE guide.launch;
INCLUDE PERFETTO MODULE guide.shapes;

WITH
  k AS (
    SELECT
      g.*,
      ROW_NUMBER() OVER (PARTITION BY g.op_name, g.kernel_name ORDER BY g.kernel_dur) AS rn,
      COUNT(*) OVER (PARTITION BY g.op_name, g.kernel_name) AS n
    FROM guide_launch_gemm AS g
    JOIN guide_kineto_profiler_step AS st ON g.ts >= st.ts AND g.ts < st.ts + st.dur
    WHERE g.kernel_id IS NOT NULL
  )
SELECT
  op_name,
  kernel_name,
  COUNT(*) AS instances,
  MIN(kernel_dur) AS min_ns,
  MAX(CASE WHEN rn = (n + 1) / 2 THEN kernel_dur END) AS median_ns,
  MAX(kernel_dur) AS max_ns,
  MAX(CASE WHEN rn = (n + 1) / 2 THEN flops / CAST(kernel_dur AS DOUBLE) / 1e3 END)
    AS median_tflops,
  -- The median rate over the GPU's dense peak for the operator's input type and the kernel's
  -- math.
  100.0 * MAX(CASE WHEN rn = (n + 1) / 2 THEN flops / CAST(kernel_dur AS DOUBLE) / 1e3 END)
    / guide_hardware_peak_tflops(guide_hardware_gemm_math(
      MIN((SELECT guide_dtypes_label(i.dtype) FROM guide_shapes_input AS i
        WHERE i.slice_id = k.op_id AND i.input_index = 0)),
      kernel_name
    )) AS tflops_peak_pct
FROM k
GROUP BY op_name, kernel_name
ORDER BY MIN(ts);
