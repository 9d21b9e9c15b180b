-- Matrix multiplications (GEMMs) in a Kineto trace: their sizes from recorded shapes, their
-- floating-point work, and the GPU kernels each one launched.
--
-- Needs `record_shapes=True` at capture time. FLOPs count one multiply and one add per
-- multiply-accumulate: 2 * batch * M * N * K (the bias of `addmm` adds M * N more, left out, as
-- GEMM throughput figures usually do).

INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.shapes;

-- One row per GEMM operator call (`aten::mm`, `aten::addmm`, `aten::bmm`, `aten::baddbmm`),
-- with its problem size and the GPU kernels it launched (none on a CPU-only trace).
CREATE PERFETTO TABLE guide_gemm_op(
  -- Slice id of the operator.
  id ID(slice.id),
  -- Start timestamp (ns).
  ts TIMESTAMP,
  -- CPU duration of the operator call (ns).
  dur DURATION,
  -- Operator name.
  name STRING,
  -- Track of the CPU thread.
  track_id JOINID(track.id),
  -- Batch count (1 for mm/addmm).
  batch LONG,
  -- Rows of the output.
  m LONG,
  -- Columns of the output.
  n LONG,
  -- Inner (reduction) dimension.
  k LONG,
  -- Floating-point operations: 2 * batch * M * N * K.
  flops LONG,
  -- Element type of the first matrix operand.
  dtype STRING,
  -- Bytes per element of that type (NULL if unknown).
  element_bytes LONG,
  -- Kernels this call launched (0 on a CPU-only trace).
  kernels LONG,
  -- Name of the longest kernel it launched (NULL if none).
  kernel_name STRING,
  -- Summed duration of the kernels it launched (ns; 0 if none).
  kernel_dur DURATION
) AS
WITH
  op AS (
    SELECT
      s.id, s.ts, s.dur, s.name, s.track_id,
      CASE WHEN s.name IN ('aten::addmm', 'aten::baddbmm') THEN 1 ELSE 0 END AS a_index
    FROM guide_kineto_slice AS s
    WHERE s.category = 'cpu_op'
      AND s.name IN ('aten::mm', 'aten::addmm', 'aten::bmm', 'aten::baddbmm')
  ),
  sized AS (
    SELECT
      op.*,
      a.ndim,
      a.dtype,
      a.element_bytes,
      CAST(str_split(substr(a.dims, 2, length(a.dims) - 2), ', ', a.ndim - 2) AS INT) AS m,
      CAST(str_split(substr(a.dims, 2, length(a.dims) - 2), ', ', a.ndim - 1) AS INT) AS k,
      CAST(str_split(substr(b.dims, 2, length(b.dims) - 2), ', ', b.ndim - 1) AS INT) AS n,
      CASE
        WHEN a.ndim = 3 THEN CAST(str_split(substr(a.dims, 2, length(a.dims) - 2), ', ', 0) AS INT)
        ELSE 1
      END AS batch
    FROM op
    JOIN guide_shapes_input AS a ON a.slice_id = op.id AND a.input_index = op.a_index
    JOIN guide_shapes_input AS b ON b.slice_id = op.id AND b.input_index = op.a_index + 1
  ),
  -- Every kernel launch (runtime or driver call, on a CPU thread), once: the GEMMs are joined
  -- to these rows by time, not to every slice of the trace, and the kernels each one launched
  -- are materialized once for the three lookups below (a large trace took half a minute).
  kernel_launch AS MATERIALIZED (
    SELECT r.ts, r.track_id, g.name, g.dur
    FROM guide_kineto_launch_link AS ll
    JOIN slice AS r ON r.id = ll.launch_id
    JOIN guide_kineto_gpu_activity AS g ON g.id = ll.gpu_id AND g.category = 'kernel'
  ),
  launched AS MATERIALIZED (
    SELECT op.id AS op_id, k.name, k.dur
    FROM op
    JOIN kernel_launch AS k
      ON k.track_id = op.track_id AND k.ts >= op.ts AND k.ts < op.ts + op.dur
  )
SELECT
  sized.id,
  sized.ts,
  sized.dur,
  sized.name,
  sized.track_id,
  sized.batch,
  sized.m,
  sized.n,
  sized.k,
  2 * sized.batch * sized.m * sized.n * sized.k AS flops,
  sized.dtype,
  sized.element_bytes,
  (SELECT COUNT(*) FROM launched AS l WHERE l.op_id = sized.id) AS kernels,
  (SELECT l.name FROM launched AS l WHERE l.op_id = sized.id ORDER BY l.dur DESC LIMIT 1)
    AS kernel_name,
  (SELECT COALESCE(SUM(l.dur), 0) FROM launched AS l WHERE l.op_id = sized.id) AS kernel_dur
FROM sized;
