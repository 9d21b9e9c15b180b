-- id: cuda-graphs
-- title: Kernels replayed from CUDA graphs
-- severity: info
-- needs: gpu, flows
-- guide: part-4/03-batch-and-cuda-graphs.md#what-a-static-cache-and-cuda-graphs-change
-- seen: CUDA graph launches: {count}, replaying {sum(kernels)} kernels ({sum(gpu_ns)} of GPU
--   time).
-- why: A CUDA graph replays a recorded sequence of kernels from one `cudaGraphLaunch`: those
--   kernels have no launch call of their own, so per-kernel launch latency, "kernels shorter
--   than their launch" and the CPU time per kernel do not apply to them; the graph launch's cost
--   is shared by all of them. The operators that recorded the graph do not run again, so the
--   CPU rows above the kernels are missing.
-- try: Nothing to fix: read these kernels by their names and GPU times, and the graph launch's
--   CPU time as the cost of the whole sequence.
-- after: —
-- false-positives: None known; a graph captured once and never replayed shows no kernels here.
INCLUDE PERFETTO MODULE guide.kineto;

WITH graph AS MATERIALIZED (
  SELECT r.id, r.ts, r.dur, r.name, COUNT(g.id) AS kernels, SUM(g.dur) AS gpu_ns,
    MIN(g.device) AS device
  FROM guide_kineto_runtime_call AS r
  JOIN guide_kineto_launch_link AS ll ON ll.launch_id = r.id
  JOIN guide_kineto_gpu_activity AS g ON g.id = ll.gpu_id
  WHERE r.name GLOB '*GraphLaunch*'
  GROUP BY r.id
)
SELECT
  ts,
  dur,
  'GPU ' || device AS location,
  name || ': ' || kernels || ' kernels' AS what,
  dur AS cost_ns,
  kernels,
  gpu_ns
FROM graph
ORDER BY ts
