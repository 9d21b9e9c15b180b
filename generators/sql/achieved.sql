-- What a trace's kernels achieved: the kernels that take most GPU time, each with the floating-
-- point work and the bytes its launching operators' recorded shapes give, the rates over its own
-- kernel time, and its side of the GPU's roofline. Any Kineto trace: rates need the operators'
-- shapes (`record_shapes=True`) and a GPU that guide.hardware knows; without them the kernel is
-- still listed, its rates NULL.
--
-- A kernel's work is counted only where its operator launched that one kernel: an operator that
-- launches several (a GEMM and its split-K reduce, a memset) cannot say how its work splits
-- between them, so those kernels' time is left out of the rates; of a name run many times, an
-- even sample of 256 is read (`counted_ns` says how much time the rates stand for). Work is
-- counted for matrix multiplies (_guide_achieved_gemm_flops); bytes for matrix multiplies
-- (_guide_achieved_gemm_bytes) and, through the operator's shapes (guide_traffic_op, the least
-- it must move), for kernels whose name says they do memory-bound work (elementwise,
-- pointwise, reductions, norms, softmax).

INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.kernel_names;
INCLUDE PERFETTO MODULE guide.hardware;
INCLUDE PERFETTO MODULE guide.dtypes;
INCLUDE PERFETTO MODULE guide.traffic;

-- The input that holds a matrix multiply's first matrix: 1 for `addmm` / `baddbmm` (their
-- first input is the term added), 0 for `mm` / `bmm`; NULL for any other operator.
CREATE PERFETTO FUNCTION _guide_achieved_gemm_a(
  -- Operator name.
  name STRING
)
-- Input index, or NULL.
RETURNS LONG AS
SELECT CASE
  WHEN $name IN ('aten::mm', 'aten::bmm') THEN 0
  WHEN $name IN ('aten::addmm', 'aten::baddbmm') THEN 1
END;

-- Floating-point operations of one matrix multiply call (`aten::mm`, `addmm`, `bmm`,
-- `baddbmm`) from its recorded shapes: 2 x batch x M x N x K, one multiply and one add per
-- multiply-accumulate (the added term of `addmm` left out, as in guide.gemm). NULL for other
-- operators or without shapes.
CREATE PERFETTO FUNCTION _guide_achieved_gemm_flops(
  -- Operator name.
  name STRING,
  -- Argument set of the operator slice.
  arg_set_id ARGSETID
)
-- FLOPs, or NULL.
RETURNS LONG AS
SELECT CASE
  WHEN $name IN ('aten::mm', 'aten::addmm') THEN 2
    * extract_arg($arg_set_id, 'args.Input Dims[' || a || '][0]')
    * extract_arg($arg_set_id, 'args.Input Dims[' || a || '][1]')
    * extract_arg($arg_set_id, 'args.Input Dims[' || (a + 1) || '][1]')
  WHEN $name IN ('aten::bmm', 'aten::baddbmm') THEN 2
    * extract_arg($arg_set_id, 'args.Input Dims[' || a || '][0]')
    * extract_arg($arg_set_id, 'args.Input Dims[' || a || '][1]')
    * extract_arg($arg_set_id, 'args.Input Dims[' || a || '][2]')
    * extract_arg($arg_set_id, 'args.Input Dims[' || (a + 1) || '][2]')
END
FROM (SELECT _guide_achieved_gemm_a($name) AS a);

-- Bytes one matrix multiply call must move at least: both matrices read and the product
-- written once, at the first matrix's element size (the added term of `addmm` left out). NULL
-- for other operators, without shapes, or for an unknown type.
CREATE PERFETTO FUNCTION _guide_achieved_gemm_bytes(
  -- Operator name.
  name STRING,
  -- Argument set of the operator slice.
  arg_set_id ARGSETID
)
-- Bytes, or NULL.
RETURNS LONG AS
SELECT IIF(a IS NULL, NULL, guide_dtypes_elem_bytes(
    extract_arg($arg_set_id, 'args.Input type[' || COALESCE(a, 0) || ']')))
  * CASE
    WHEN $name IN ('aten::mm', 'aten::addmm') THEN
      extract_arg($arg_set_id, 'args.Input Dims[' || a || '][0]')
        * extract_arg($arg_set_id, 'args.Input Dims[' || a || '][1]')
      + extract_arg($arg_set_id, 'args.Input Dims[' || (a + 1) || '][0]')
        * extract_arg($arg_set_id, 'args.Input Dims[' || (a + 1) || '][1]')
      + extract_arg($arg_set_id, 'args.Input Dims[' || a || '][0]')
        * extract_arg($arg_set_id, 'args.Input Dims[' || (a + 1) || '][1]')
    WHEN $name IN ('aten::bmm', 'aten::baddbmm') THEN
      extract_arg($arg_set_id, 'args.Input Dims[' || a || '][0]') * (
        extract_arg($arg_set_id, 'args.Input Dims[' || a || '][1]')
          * extract_arg($arg_set_id, 'args.Input Dims[' || a || '][2]')
        + extract_arg($arg_set_id, 'args.Input Dims[' || (a + 1) || '][1]')
          * extract_arg($arg_set_id, 'args.Input Dims[' || (a + 1) || '][2]')
        + extract_arg($arg_set_id, 'args.Input Dims[' || a || '][1]')
          * extract_arg($arg_set_id, 'args.Input Dims[' || (a + 1) || '][2]'))
  END
FROM (SELECT _guide_achieved_gemm_a($name) AS a);

-- The kernels that take most GPU time (at most `limit` names), one row per kernel name: how
-- often it ran, its time, and what it achieved where its operators' shapes say.
CREATE PERFETTO MACRO guide_achieved_top_kernels(
  -- How many kernel names to keep, the longest in total first.
  top Expr
)
-- One row per kernel name with the columns:
--   name: the kernel's name; family: its library (guide_kernel_names_family);
--   decoded: what its name says (guide_kernel_names_summary);
--   kernels: how many ran; total_ns: their summed duration; kernel_pct: that share of every
--     kernel's summed duration;
--   op_name: the operator that launched it most often (NULL when unlinked);
--   counted_ns: the time of the kernels whose work or bytes are counted (at most 256 of the
--     name, spread over the trace);
--   flops, traffic_bytes: what those kernels did and moved (NULL when none counted);
--   achieved_tflops, achieved_bytes_per_s: those over counted_ns;
--   math: the peak the work is held to ('bf16', 'fp32', ... as guide_hardware_gemm_math);
--   tflops_peak_pct, bytes_peak_pct: the rates against the GPU's peaks;
--   flop_per_byte: the arithmetic intensity; ridge_flop_per_byte: the math's peak over the
--     bandwidth; side: 'compute' above the ridge, 'memory' below it or with bytes and no work.
RETURNS TableOrSubquery AS
(
  WITH
    _ak_all AS MATERIALIZED (
      SELECT name, COUNT(*) AS kernels, SUM(dur) AS total_ns
      FROM guide_kineto_gpu_activity
      WHERE category = 'kernel'
      GROUP BY name
    ),
    _ak_top AS MATERIALIZED (
      SELECT * FROM _ak_all ORDER BY total_ns DESC, name LIMIT $top
    ),
    -- Every linked kernel of the top names, with the operator whose launch call started it
    -- and how many GPU activities that operator launched in all (one pass over the links; the
    -- joins are on slice ids, which the trace processor indexes).
    _ak_linked AS MATERIALIZED (
      SELECT g.name, g.dur, op.id AS op_id, op.name AS op_name, op.arg_set_id, l.activities
      FROM (
        SELECT ll.gpu_id, r.parent_id, COUNT(*) OVER (PARTITION BY r.parent_id) AS activities
        FROM guide_kineto_launch_link AS ll
        JOIN slice AS r ON r.id = ll.launch_id
      ) AS l
      JOIN slice AS g ON g.id = l.gpu_id
      LEFT JOIN slice AS op ON op.id = l.parent_id AND op.category = 'cpu_op'
      WHERE g.name IN (SELECT name FROM _ak_top)
    ),
    -- The kernels that are their operator's only GPU work: that operator's work is theirs.
    -- At most 256 of each name, spread evenly over the trace (every n-th): the rate of a
    -- kernel run a hundred thousand times needs no more, and reading every operator's shapes
    -- would cost seconds.
    _ak_single AS MATERIALIZED (
      SELECT * FROM (
        SELECT *,
          ROW_NUMBER() OVER (PARTITION BY name ORDER BY op_id) AS nth,
          COUNT(*) OVER (PARTITION BY name) AS runs
        FROM _ak_linked
        WHERE activities = 1 AND op_id IS NOT NULL
      )
      WHERE nth % ((runs + 255) / 256) = 0
    ),
    -- Each counted kernel's work and bytes: a matrix multiply's from its shapes; else, for
    -- kernels whose name says they do memory-bound work (elementwise, pointwise, reductions,
    -- norms, softmax), the bytes guide_traffic_op counts from the operator's shapes. A
    -- convolution's or an attention kernel's bytes without its work would misplace it on the
    -- roofline. Gathered by operator (one kernel each) rather than joined, which keeps a trace
    -- of many operators fast.
    _ak_parts AS (
      SELECT
        op_id,
        name,
        dur,
        _guide_achieved_gemm_flops(op_name, arg_set_id) AS flops,
        _guide_achieved_gemm_bytes(op_name, arg_set_id) AS bytes,
        guide_dtypes_label(extract_arg(arg_set_id, 'args.Input type['
          || COALESCE(_guide_achieved_gemm_a(op_name), 0) || ']')) AS dtype
      FROM _ak_single
      UNION ALL
      SELECT op_id, NULL, NULL, NULL, NULLIF(read_bytes + write_bytes, 0), NULL
      FROM guide_traffic_op!((
        SELECT op_id AS id, op_name AS name, arg_set_id FROM _ak_single
        WHERE _guide_achieved_gemm_a(op_name) IS NULL
          AND guide_kernel_names_work(name) IN (
            'elementwise', 'pointwise', 'reduction', 'persistent reduction', 'normalization',
            'softmax', 'gated GELU'
          )
      ))
    ),
    _ak_counted AS (
      SELECT MAX(name) AS name, SUM(dur) AS dur, MAX(flops) AS flops, MAX(bytes) AS bytes,
        MAX(dtype) AS dtype
      FROM _ak_parts
      GROUP BY op_id
    ),
    _ak_rates AS (
      SELECT
        name,
        SUM(IIF(flops IS NOT NULL OR bytes IS NOT NULL, dur, 0)) AS counted_ns,
        SUM(flops) AS flops,
        SUM(bytes) AS traffic_bytes,
        MAX(dtype) AS dtype
      FROM _ak_counted
      GROUP BY name
    ),
    _ak_op AS (
      SELECT name, op_name FROM (
        SELECT name, op_name, ROW_NUMBER() OVER (
          PARTITION BY name ORDER BY COUNT(*) DESC, op_name
        ) AS rn
        FROM _ak_linked
        WHERE op_name IS NOT NULL
        GROUP BY name, op_name
      )
      WHERE rn = 1
    ),
    _ak_row AS (
      SELECT
        t.name,
        t.kernels,
        t.total_ns,
        o.op_name,
        NULLIF(r.counted_ns, 0) AS counted_ns,
        r.flops,
        r.traffic_bytes,
        IIF(r.flops IS NULL, NULL, guide_hardware_gemm_math(r.dtype, t.name)) AS math
      FROM _ak_top AS t
      LEFT JOIN _ak_rates AS r USING (name)
      LEFT JOIN _ak_op AS o USING (name)
    )
  SELECT
    row.name,
    guide_kernel_names_family(row.name) AS family,
    guide_kernel_names_summary(row.name) AS decoded,
    row.kernels,
    row.total_ns,
    100.0 * row.total_ns / (SELECT SUM(total_ns) FROM _ak_all) AS kernel_pct,
    row.op_name,
    row.counted_ns,
    row.flops,
    row.traffic_bytes,
    row.flops / (row.counted_ns * 1e3) AS achieved_tflops,
    row.traffic_bytes * 1e9 / row.counted_ns AS achieved_bytes_per_s,
    row.math,
    100.0 * row.flops / (row.counted_ns * 1e3) / guide_hardware_peak_tflops(row.math)
      AS tflops_peak_pct,
    100.0 * row.traffic_bytes * 1e9 / row.counted_ns / guide_hardware_peak_bytes_per_s()
      AS bytes_peak_pct,
    row.flops * 1.0 / row.traffic_bytes AS flop_per_byte,
    guide_hardware_peak_tflops(row.math) * 1e12 / guide_hardware_peak_bytes_per_s()
      AS ridge_flop_per_byte,
    CASE
      WHEN row.traffic_bytes IS NULL THEN NULL
      WHEN row.flops IS NULL THEN 'memory'
      WHEN guide_hardware_peak_tflops(row.math) IS NULL THEN NULL
      WHEN row.flops * 1.0 / row.traffic_bytes
        >= guide_hardware_peak_tflops(row.math) * 1e12 / guide_hardware_peak_bytes_per_s()
        THEN 'compute'
      ELSE 'memory'
    END AS side
  FROM _ak_row AS row
  ORDER BY row.total_ns DESC, row.name
);
