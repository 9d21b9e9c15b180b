-- How soon does each kernel start after the kernel before it on its stream ends?
-- output: values
-- needs: cuda
-- question_ja: 各カーネルは、同じストリームで直前のカーネルが終わってからどれだけ後に始まるか
-- Split-K reduce kernels (`…splitKreduce…`) are set apart from every other kernel: in the eager
-- decode traces they start a little before their GEMM ends, and Perfetto's importer drops
-- those (trace_json.kernel_overlaps reads them from the file); a trace whose importer dropped
-- none holds them all here. A gap below 0 is an overlap.
INCLUDE PERFETTO MODULE guide.kineto;

WITH
  kernel AS MATERIALIZED (
    SELECT
      g.id,
      g.name GLOB '*splitKreduce*' AS splitk_reduce,
      g.ts - LAG(g.ts + g.dur) OVER (PARTITION BY g.device, g.stream ORDER BY g.ts, g.id)
        AS gap_ns
    FROM guide_kineto_gpu_activity AS g
    WHERE g.category = 'kernel'
  ),
  reduce_launch AS (
    SELECT r.name, COUNT(*) AS n
    FROM kernel AS k
    JOIN guide_kineto_launch_link AS ll ON ll.gpu_id = k.id
    JOIN slice AS r ON r.id = ll.launch_id
    WHERE k.splitk_reduce
    GROUP BY r.name
    ORDER BY n DESC
    LIMIT 1
  )
SELECT
  (SELECT COUNT(*) FROM kernel WHERE splitk_reduce) AS splitk_reduce_kernels,
  (SELECT MIN(gap_ns) FROM kernel WHERE splitk_reduce) AS splitk_reduce_min_gap_ns,
  (SELECT COUNT(*) FROM kernel WHERE splitk_reduce AND gap_ns < 0) AS splitk_reduce_overlaps,
  -- The call that launched most of them (a graph's kernels: cudaGraphLaunch).
  (SELECT name FROM reduce_launch) AS splitk_reduce_launch,
  (SELECT COUNT(*) FROM kernel WHERE NOT splitk_reduce AND gap_ns IS NOT NULL)
    AS other_kernels,
  (SELECT MIN(gap_ns) FROM kernel WHERE NOT splitk_reduce) AS other_min_gap_ns,
  (SELECT COUNT(*) FROM kernel WHERE NOT splitk_reduce AND gap_ns < 0) AS other_overlaps;
