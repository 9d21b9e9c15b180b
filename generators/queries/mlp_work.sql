-- Which kernels (on a CPU: which computing operators) run in one step, and what does each do?
-- output: table
-- columns: position=#, kind=Runs as, name=Name, decoded=What the name says, op_name=Launched by, m=M, n=N, k=K, shape=M × N × K, flops=FLOPs, dur_ns=Time, achieved_tflops=Achieved, tflops_peak_pct=% of peak, achieved_bytes_per_s=Bandwidth, bytes_peak_pct=% of peak bandwidth
-- question_ja: 1 ステップでどのカーネル（CPU では計算する演算子）が動き、それぞれ何をするか
-- columns_ja: position=#, kind=実行形態, name=名前, decoded=名前が示す内容, op_name=起動元, m=M, n=N, k=K, shape=M × N × K, flops=FLOPs, dur_ns=時間, achieved_tflops=達成性能, tflops_peak_pct=ピーク性能に対する %, achieved_bytes_per_s=帯域幅, bytes_peak_pct=ピーク帯域幅に対する %
-- shown: kind, name, decoded, op_name, shape, flops, dur_ns, achieved_tflops, tflops_peak_pct, achieved_bytes_per_s, bytes_peak_pct
INCLUDE PERFETTO MODULE guide.dispatch;
INCLUDE PERFETTO MODULE guide.dtypes;
INCLUDE PERFETTO MODULE guide.gemm;
INCLUDE PERFETTO MODULE guide.hardware;
INCLUDE PERFETTO MODULE guide.kernel_names;
INCLUDE PERFETTO MODULE guide.traffic;

WITH
  first AS (SELECT MIN(step) AS step FROM guide_dispatch_work),
  -- The bytes each launching operator must read and write at least (guide.traffic).
  traffic AS (
    SELECT * FROM guide_traffic_op!((
      SELECT id, name, arg_set_id FROM slice
      WHERE id IN (SELECT op_id FROM guide_dispatch_work WHERE kind = 'GPU kernel')
    ))
  )
SELECT
  ROW_NUMBER() OVER (ORDER BY w.ts) AS position,
  w.kind,
  w.name,
  guide_kernel_names_summary(w.name) AS decoded,
  w.op_name,
  g.m,
  g.n,
  g.k,
  g.m || ' × ' || g.n || ' × ' || g.k AS shape,
  g.flops,
  w.dur AS dur_ns,
  CASE WHEN g.flops IS NOT NULL AND w.dur > 0 THEN g.flops / (w.dur * 1e3) END AS achieved_tflops,
  -- GEMM kernels: achieved over the GPU's dense peak for the input type and the kernel's math.
  -- Elementwise kernels (ATen's *elementwise_kernel*): the bytes their operator must read and
  -- write at least over kernel time, and that over the GPU's peak bandwidth. NULL on a CPU
  -- trace, for which the guide has no peak table.
  CASE WHEN w.kind = 'GPU kernel' AND g.flops IS NOT NULL AND w.dur > 0
    THEN 100.0 * g.flops / (w.dur * 1e3) / guide_hardware_peak_tflops(
      guide_hardware_gemm_math(guide_dtypes_label(g.dtype), w.name)
    ) END AS tflops_peak_pct,
  CASE WHEN w.kind = 'GPU kernel' AND w.name GLOB '*elementwise_kernel*' AND w.dur > 0
    THEN NULLIF(t.read_bytes + t.write_bytes, 0) * 1e9 / w.dur END AS achieved_bytes_per_s,
  CASE WHEN w.kind = 'GPU kernel' AND w.name GLOB '*elementwise_kernel*' AND w.dur > 0
    THEN 100.0 * NULLIF(t.read_bytes + t.write_bytes, 0) * 1e9 / w.dur
      / guide_hardware_peak_bytes_per_s() END AS bytes_peak_pct
FROM guide_dispatch_work AS w
LEFT JOIN guide_gemm_op AS g ON g.id = w.op_id
LEFT JOIN traffic AS t ON t.op_id = w.op_id
WHERE w.step = (SELECT step FROM first)
ORDER BY w.ts;
