-- Which kernels (on a CPU: which computing operators) run in one step, and what does each do?
-- output: table
-- columns: position=#, kind=Runs as, name=Name, decoded=What the name says, op_name=Launched by, m=M, n=N, k=K, flops=FLOPs, dur_ns=Time, achieved_tflops=Achieved
INCLUDE PERFETTO MODULE guide.dispatch;
INCLUDE PERFETTO MODULE guide.gemm;
INCLUDE PERFETTO MODULE guide.kernel_names;

WITH first AS (SELECT MIN(step) AS step FROM guide_dispatch_work)
SELECT
  ROW_NUMBER() OVER (ORDER BY w.ts) AS position,
  w.kind,
  w.name,
  guide_kernel_names_summary(w.name) AS decoded,
  w.op_name,
  g.m,
  g.n,
  g.k,
  g.flops,
  w.dur AS dur_ns,
  CASE WHEN g.flops IS NOT NULL AND w.dur > 0 THEN g.flops / (w.dur * 1e3) END AS achieved_tflops
FROM guide_dispatch_work AS w
LEFT JOIN guide_gemm_op AS g ON g.id = w.op_id
WHERE w.step = (SELECT step FROM first)
ORDER BY w.ts;
