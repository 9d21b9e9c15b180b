-- Attention forwards in Kineto traces: what each forward ran on the CPU, what it launched on the
-- GPU, how it launched it, and the shapes that turn durations into FLOP/s and bytes.
--
-- A forward is a `record_function` region named `attn_fwd` (one per profiler step), or
-- `attn_fwd/<impl>/b<B>h<H>s<S>d<D>` when one step runs several (a sequence-length sweep).
-- Everything else here works on any Kineto trace, with or without such regions.

INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.dtypes;
INCLUDE PERFETTO MODULE guide.traffic;
INCLUDE PERFETTO MODULE guide.windows;

-- What kind of work a GPU kernel or copy is, read from its name: the fused attention kernels
-- of each SDPA backend, GEMMs on tensor cores or on CUDA cores, and the unfused pieces.
CREATE PERFETTO FUNCTION guide_attention_kernel_family(
  -- Kernel, memcpy or memset name as the trace records it.
  name STRING
)
-- The family label ('flash attention', 'GEMM, tensor cores', 'softmax', ...; 'other' when no
-- pattern matches).
RETURNS STRING AS
SELECT CASE
  WHEN $name GLOB 'Memcpy*' THEN 'memcpy'
  WHEN $name GLOB 'Memset*' THEN 'memset'
  WHEN $name GLOB '*fmha_cutlass*' THEN 'efficient attention (CUTLASS fmha)'
  WHEN $name GLOB '*pytorch_flash*' OR $name GLOB '*flash_fwd*' THEN 'flash attention'
  WHEN $name GLOB '*cudnn*sdpa*' OR $name GLOB '*cudnn*flash_fprop*'
    THEN 'cuDNN attention (generated)'
  WHEN ($name GLOB '*gemm*' OR $name GLOB '*Gemm*')
    AND ($name GLOB '*sgemm*' OR $name GLOB '*f32f32*' OR $name GLOB '*simt*')
    THEN 'GEMM, fp32 on CUDA cores'
  WHEN $name GLOB '*gemm*' OR $name GLOB '*Gemm*' OR $name GLOB '*s16816*'
    OR $name GLOB '*h16816*' OR $name GLOB '*cutlass*' OR $name GLOB '*xmma*'
    OR $name GLOB '*nvjet*'
    THEN 'GEMM, tensor cores'
  WHEN $name GLOB '*softmax*' OR $name GLOB '*Softmax*' OR $name GLOB '*SoftMax*' THEN 'softmax'
  WHEN $name GLOB '*triu_tril*' THEN 'mask (tril)'
  WHEN $name GLOB '*where*' THEN 'where'
  WHEN $name GLOB '*masked_fill*' THEN 'masked_fill'
  WHEN $name GLOB '*copy*' OR $name GLOB '*Copy*' THEN 'copy / cast'
  WHEN $name GLOB '*reduce_kernel*' THEN 'reduction'
  WHEN $name GLOB '*elementwise*' OR $name GLOB '*Functor*' THEN 'elementwise'
  ELSE 'other'
END;

-- Every piece of GPU work with the CPU call that launched it (through an `ac2g` flow) and the
-- operator that made that call; GPU work without a flow has NULL launch columns. A table, not a
-- view: the queries join it on time ranges once per forward region, and a view would redo its
-- joins and argument lookups for each region.
CREATE PERFETTO TABLE guide_attention_gpu_work(
  -- Slice id of the kernel, copy or set.
  id JOINID(slice.id),
  -- Start timestamp (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- Kernel or copy name.
  name STRING,
  -- kernel, gpu_memcpy or gpu_memset.
  category STRING,
  -- What the name says the work is (guide_attention_kernel_family).
  family STRING,
  -- Slice id of the launching runtime or driver call.
  launch_id JOINID(slice.id),
  -- Its API name: cudaLaunchKernel, cuLaunchKernelEx, cudaMemcpyAsync, ...
  launch_api STRING,
  -- cuda_runtime or cuda_driver.
  launch_category STRING,
  -- Start of the launching call (ns).
  launch_ts TIMESTAMP,
  -- Track of the CPU thread that made the call.
  launch_track_id JOINID(track.id),
  -- Slice id of the CPU slice enclosing the launch (usually an aten:: operator).
  op_id JOINID(slice.id),
  -- Its name.
  op_name STRING,
  -- Name of the slice enclosing that one.
  op_parent_name STRING,
  -- Registers per thread (kernels only).
  registers_per_thread LONG,
  -- Threads per block (kernels only).
  block_threads LONG,
  -- Blocks in the grid (kernels only).
  grid_blocks LONG,
  -- Shared memory per block in bytes, as the trace records it (kernels only).
  shared_memory_bytes LONG,
  -- The profiler's own estimate of achieved occupancy, 0-100 (kernels only).
  reported_occupancy_pct DOUBLE,
  -- Bytes a memcpy copies or a memset sets, as the trace records them (NULL for kernels).
  bytes LONG
) AS
SELECT
  g.id,
  g.ts,
  g.dur,
  g.name,
  g.category,
  guide_attention_kernel_family(g.name) AS family,
  r.id AS launch_id,
  r.name AS launch_api,
  r.category AS launch_category,
  r.ts AS launch_ts,
  rs.track_id AS launch_track_id,
  op.id AS op_id,
  op.name AS op_name,
  opp.name AS op_parent_name,
  extract_arg(g.arg_set_id, 'args.registers per thread') AS registers_per_thread,
  extract_arg(g.arg_set_id, 'args.block[0]')
    * COALESCE(extract_arg(g.arg_set_id, 'args.block[1]'), 1)
    * COALESCE(extract_arg(g.arg_set_id, 'args.block[2]'), 1) AS block_threads,
  extract_arg(g.arg_set_id, 'args.grid[0]')
    * COALESCE(extract_arg(g.arg_set_id, 'args.grid[1]'), 1)
    * COALESCE(extract_arg(g.arg_set_id, 'args.grid[2]'), 1) AS grid_blocks,
  extract_arg(g.arg_set_id, 'args.shared memory') AS shared_memory_bytes,
  extract_arg(g.arg_set_id, 'args.est. achieved occupancy %') AS reported_occupancy_pct,
  extract_arg(g.arg_set_id, 'args.bytes') AS bytes
FROM guide_kineto_gpu_activity AS g
LEFT JOIN guide_kineto_launch_link AS ll ON ll.gpu_id = g.id
LEFT JOIN guide_kineto_runtime_call AS r ON r.id = ll.launch_id
LEFT JOIN slice AS rs ON rs.id = r.id
LEFT JOIN slice AS op ON op.id = r.parent_id
LEFT JOIN slice AS opp ON opp.id = op.parent_id;

-- View operators: they give a tensor a new shape or strides and touch no data.
CREATE PERFETTO FUNCTION guide_attention_is_view_op(
  -- Operator name.
  name STRING
)
-- True for a view operator.
RETURNS BOOL AS
SELECT $name IN (
  'aten::as_strided', 'aten::view', 'aten::expand', 'aten::reshape', 'aten::_reshape_alias',
  'aten::_unsafe_view', 'aten::resolve_conj', 'aten::transpose', 'aten::t', 'aten::unsqueeze',
  'aten::squeeze', 'aten::permute', 'aten::select', 'aten::slice', 'aten::alias',
  'aten::lift_fresh', 'aten::detach'
);

-- GPU work launched from inside CPU regions: a launch call on the region's thread that starts
-- inside the region.
CREATE PERFETTO MACRO guide_attention_work_in(
  -- CPU regions: needs the columns id, ts, dur and track_id.
  regions TableOrSubquery
)
-- One row per (region, piece of GPU work): region_id (the region's id) followed by every column
-- of guide_attention_gpu_work (id, ts, dur, name, category, family, launch_id, launch_api, ...).
-- A region that launched nothing has no rows.
RETURNS TableOrSubquery AS
(
  SELECT r.id AS region_id, w.*
  FROM $regions AS r
  JOIN guide_attention_gpu_work AS w
    ON w.launch_track_id = r.track_id AND w.launch_ts >= r.ts AND w.launch_ts < r.ts + r.dur
);

-- Operators that move no data of their own: views, allocations, and the conversions `aten::to`
-- and `aten::contiguous`, which either call an operator that copies or return their input.
CREATE PERFETTO FUNCTION _guide_attention_moves_no_data(
  -- Operator name.
  name STRING
)
-- True for an operator that moves no data of its own.
RETURNS BOOL AS
SELECT guide_attention_is_view_op($name)
  OR $name GLOB 'aten::empty*'
  OR $name IN ('aten::resize_', 'aten::to', 'aten::contiguous');

-- Memory traffic of the operators that do the work inside CPU regions, counted from their
-- recorded shapes by the guide's one traffic definition (guide.traffic, guide_traffic_op): each
-- operator's inputs read once as stored, the tensor it writes written once, plus the bytes of
-- the memsets it launched. That is the least the work must move: a kernel that reads an input
-- more than once from memory moves more, and one whose data sits in the GPU's L2 cache moves
-- less through HBM.
-- The operators that do the work are, in a trace with GPU activity, those that launched GPU
-- work themselves (a launch call directly inside them); in a trace without, the innermost
-- operators that move data (no view, allocation or conversion below them does).
CREATE PERFETTO MACRO guide_attention_traffic_in(
  -- CPU regions: needs the columns id, ts, dur, track_id, depth, batch, heads and seq (as
  -- _guide_attention_with_shape gives them).
  regions TableOrSubquery
)
-- One row per (region, operator) with the columns:
--   region_id, op_id, name, ts: the region, and the operator's slice id, name and start (ns);
--   read_bytes, write_bytes: bytes read and written (guide_traffic_op);
--   score_read_bytes: the part of read_bytes in inputs of [batch, heads, seq, seq] elements;
--   score_write_bytes: the bytes of the tensor it writes when that has [batch, heads, seq, seq]
--     elements (memsets left out), else 0;
--   gpu_items: kernels, memcpys and memsets it launched (0 in a trace without GPU activity);
--   gpu_ns: the time they ran, as the union of their intervals (guide_windows_union; NULL when
--     none).
RETURNS TableOrSubquery AS
(
  WITH
    tr_reg AS (
      SELECT id, ts, dur, track_id, depth, batch * heads * seq * seq AS score_numel
      FROM $regions
    ),
    tr_has_gpu AS (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS yes),
    tr_op AS (
      SELECT r.id AS region_id, r.score_numel, s.id, s.ts, s.name, s.arg_set_id
      FROM tr_reg AS r
      JOIN slice AS s
        ON s.track_id = r.track_id AND s.ts >= r.ts AND s.ts < r.ts + r.dur
        AND s.depth > r.depth
      WHERE s.category = 'cpu_op'
    ),
    tr_launched AS (
      SELECT op_id, COUNT(*) AS n
      FROM guide_attention_gpu_work
      WHERE op_id IS NOT NULL
      GROUP BY op_id
    ),
    tr_working AS MATERIALIZED (
      SELECT tr_op.*, COALESCE(l.n, 0) AS gpu_items
      FROM tr_op
      CROSS JOIN tr_has_gpu
      LEFT JOIN tr_launched AS l ON l.op_id = tr_op.id
      WHERE CASE
        WHEN tr_has_gpu.yes THEN l.op_id IS NOT NULL
        ELSE NOT _guide_attention_moves_no_data(tr_op.name)
          AND NOT EXISTS (
            SELECT 1 FROM slice AS c
            WHERE c.parent_id = tr_op.id AND c.category = 'cpu_op'
              AND NOT _guide_attention_moves_no_data(c.name)
          )
      END
    ),
    tr_ops AS (SELECT DISTINCT id, name, arg_set_id FROM tr_working),
    tr_score_reads AS (
      SELECT w.id, SUM(i.bytes) AS score_read_bytes
      FROM guide_traffic_op_inputs!(tr_ops) AS i
      JOIN tr_working AS w ON w.id = i.op_id
      WHERE i.numel = w.score_numel
      GROUP BY w.id
    ),
    tr_bytes AS (SELECT * FROM guide_traffic_op!(tr_ops)),
    tr_busy AS (
      SELECT * FROM guide_windows_union!((
        SELECT op_id AS group_id, ts, dur FROM guide_attention_gpu_work
        WHERE op_id IN (SELECT id FROM tr_working)
      ))
    )
  SELECT
    w.region_id,
    w.id AS op_id,
    w.name,
    w.ts,
    t.read_bytes,
    t.write_bytes,
    COALESCE(sr.score_read_bytes, 0) AS score_read_bytes,
    CASE WHEN t.write_numel = w.score_numel THEN t.result_bytes ELSE 0 END AS score_write_bytes,
    w.gpu_items,
    b.busy_ns AS gpu_ns
  FROM tr_working AS w
  JOIN tr_bytes AS t ON t.op_id = w.id
  LEFT JOIN tr_score_reads AS sr ON sr.id = w.id
  LEFT JOIN tr_busy AS b ON b.group_id = w.id
);

-- CPU regions with the attention shape they compute: read from the region itself when it is an
-- aten::scaled_dot_product_attention call, else from the first such call or aten::matmul inside
-- it (its first input is q: [batch, heads, seq, head_dim]).
CREATE PERFETTO MACRO _guide_attention_with_shape(
  -- CPU regions: needs the columns id, ts, dur, name, track_id and depth.
  regions TableOrSubquery
)
-- One row per region with the columns:
--   id, ts, dur, name, track_id, depth: the region's own, passed through;
--   impl: the <impl> part of an `attn_fwd/<impl>/...` name, else NULL;
--   batch, heads, seq, head_dim: q's dimensions (NULL when no such call is inside);
--   elem_bytes: bytes per element of q's dtype (NULL for an unknown type).
RETURNS TableOrSubquery AS
(
  WITH
    reg AS (SELECT id, ts, dur, name, track_id, depth FROM $regions),
    shape_op AS (
      SELECT
        r.id AS region_id,
        s.arg_set_id,
        ROW_NUMBER() OVER (
          PARTITION BY r.id
          ORDER BY s.name != 'aten::scaled_dot_product_attention', s.ts, s.depth
        ) AS rn
      FROM reg AS r
      JOIN slice AS s
        ON s.track_id = r.track_id AND s.ts >= r.ts AND s.ts < r.ts + r.dur
        AND s.depth >= r.depth
      WHERE s.name IN ('aten::scaled_dot_product_attention', 'aten::matmul')
    )
  SELECT
    r.id,
    r.ts,
    r.dur,
    r.name,
    CASE
      WHEN r.name GLOB 'attn_fwd/*/*'
        THEN substr(r.name, 10, instr(substr(r.name, 10), '/') - 1)
      ELSE NULL
    END AS impl,
    r.track_id,
    r.depth,
    extract_arg(o.arg_set_id, 'args.Input Dims[0][0]') AS batch,
    extract_arg(o.arg_set_id, 'args.Input Dims[0][1]') AS heads,
    extract_arg(o.arg_set_id, 'args.Input Dims[0][2]') AS seq,
    extract_arg(o.arg_set_id, 'args.Input Dims[0][3]') AS head_dim,
    guide_dtypes_elem_bytes(extract_arg(o.arg_set_id, 'args.Input type[0]')) AS elem_bytes
  FROM reg AS r
  LEFT JOIN shape_op AS o ON o.region_id = r.id AND o.rn = 1
);

-- One row per region: CPU operators, GPU work launched from inside it, and the memory traffic
-- through [batch, heads, seq, seq] score tensors.
CREATE PERFETTO MACRO _guide_attention_summary(
  -- CPU regions: needs the columns of _guide_attention_with_shape.
  regions TableOrSubquery
)
-- One row per region with the columns:
--   id, name, impl, ts: the region's slice id, name, implementation label and start (ns);
--   cpu_ns: the region's duration on its CPU thread (ns);
--   batch, heads, seq, head_dim, elem_bytes: its attention shape, as _guide_attention_with_shape;
--   cpu_ops: aten:: operators inside the region, all depths;
--   sdpa_self_ns: self time of the aten::scaled_dot_product_attention calls inside (ns; 0 when
--     there are none);
--   kernels: GPU kernels launched from inside the region;
--   copies: GPU memcpys launched from inside the region;
--   memsets: GPU memsets launched from inside the region;
--   copy_gpu_ns: summed duration of those memcpys on the GPU (ns);
--   gpu_ns: time the GPU spent on that work: the union of its intervals (guide_windows_union),
--     so that work which overlaps (a split-K reduce kernel starting before its GEMM ends) counts
--     once (ns);
--   launch_apis: the distinct runtime and driver calls that launched it, comma-separated;
--   score_passes: innermost non-view operators reading a [batch, heads, seq, seq]-sized input;
--   traffic_bytes: bytes read and written by the operators that do the work, counted from their
--     shapes (guide_attention_traffic_in);
--   score_traffic_bytes: the part of traffic_bytes in [batch, heads, seq, seq]-sized tensors;
--   flops: FLOPs of the two matrix products over the full score matrix,
--     4 * batch * heads * seq^2 * head_dim (2 per multiply-add);
--   causal_flops: the same over the entries a causal mask keeps visible, the diagonal included
--     (a query sees its own key): seq * (seq + 1) / 2 of the seq^2 per head, so
--     2 * batch * heads * seq * (seq + 1) * head_dim.
-- kernels, copies, memsets, copy_gpu_ns and gpu_ns are NULL when the trace has no GPU activity
-- at all (a CPU capture), so that a CPU capture never reads as "zero kernels, zero GPU time";
-- launch_apis is NULL then.
RETURNS TableOrSubquery AS
(
  WITH
    reg AS (SELECT * FROM $regions),
    op AS (
      SELECT
        r.id AS region_id,
        s.id,
        s.name,
        s.parent_id,
        s.arg_set_id,
        s.dur - COALESCE((SELECT SUM(c.dur) FROM slice AS c WHERE c.parent_id = s.id), 0)
          AS self_ns,
        r.batch * r.heads * r.seq * r.seq AS score_numel
      FROM reg AS r
      JOIN slice AS s
        ON s.track_id = r.track_id AND s.ts >= r.ts AND s.ts < r.ts + r.dur
        AND s.depth >= r.depth
      WHERE s.category = 'cpu_op'
    ),
    reader AS (
      -- Operators that touch data (no views or allocations) with a score-sized first or
      -- second input.
      SELECT o.*
      FROM op AS o
      WHERE NOT guide_attention_is_view_op(o.name)
        AND o.name NOT GLOB 'aten::empty*'
        AND (
          guide_traffic_input_numel(o.arg_set_id, 0) = o.score_numel
          OR guide_traffic_input_numel(o.arg_set_id, 1) = o.score_numel
        )
    ),
    score_read AS (
      -- Innermost readers only: an operator handing the tensor to another is not a pass.
      SELECT rd.region_id, COUNT(*) AS passes
      FROM reader AS rd
      WHERE NOT EXISTS (SELECT 1 FROM reader AS c WHERE c.parent_id = rd.id)
      GROUP BY rd.region_id
    ),
    traffic AS (
      SELECT
        region_id,
        SUM(read_bytes + write_bytes) AS traffic_bytes,
        SUM(score_read_bytes + score_write_bytes) AS score_traffic_bytes
      FROM guide_attention_traffic_in!(reg)
      GROUP BY region_id
    ),
    work AS (SELECT * FROM guide_attention_work_in!(reg)),
    busy AS (
      SELECT * FROM guide_windows_union!((SELECT region_id AS group_id, ts, dur FROM work))
    ),
    -- Per-region aggregates as grouped joins, not as subqueries run once per region.
    op_agg AS (
      SELECT
        region_id,
        SUM(name GLOB 'aten::*') AS cpu_ops,
        SUM(CASE WHEN name = 'aten::scaled_dot_product_attention' THEN self_ns ELSE 0 END)
          AS sdpa_self_ns
      FROM op
      GROUP BY region_id
    ),
    work_agg AS (
      SELECT
        region_id,
        SUM(category = 'kernel') AS kernels,
        SUM(category = 'gpu_memcpy') AS copies,
        SUM(category = 'gpu_memset') AS memsets,
        SUM(CASE WHEN category = 'gpu_memcpy' THEN dur ELSE 0 END) AS copy_gpu_ns
      FROM work
      GROUP BY region_id
    ),
    api AS (
      SELECT region_id, GROUP_CONCAT(launch_api, ', ') AS launch_apis
      FROM (
        SELECT DISTINCT region_id, launch_api FROM work
        WHERE launch_api IS NOT NULL
        ORDER BY region_id, launch_api
      )
      GROUP BY region_id
    ),
    has_gpu AS (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS yes)
  SELECT
    r.id,
    r.name,
    r.impl,
    r.ts,
    r.dur AS cpu_ns,
    r.batch,
    r.heads,
    r.seq,
    r.head_dim,
    r.elem_bytes,
    COALESCE(oa.cpu_ops, 0) AS cpu_ops,
    COALESCE(oa.sdpa_self_ns, 0) AS sdpa_self_ns,
    CASE WHEN has_gpu.yes THEN COALESCE(wa.kernels, 0) END AS kernels,
    CASE WHEN has_gpu.yes THEN COALESCE(wa.copies, 0) END AS copies,
    CASE WHEN has_gpu.yes THEN COALESCE(wa.memsets, 0) END AS memsets,
    CASE WHEN has_gpu.yes THEN COALESCE(wa.copy_gpu_ns, 0) END AS copy_gpu_ns,
    CASE WHEN has_gpu.yes THEN COALESCE(b.busy_ns, 0) END AS gpu_ns,
    api.launch_apis,
    COALESCE(sr.passes, 0) AS score_passes,
    COALESCE(t.traffic_bytes, 0) AS traffic_bytes,
    COALESCE(t.score_traffic_bytes, 0) AS score_traffic_bytes,
    4 * r.batch * r.heads * r.seq * r.seq * r.head_dim AS flops,
    2 * r.batch * r.heads * r.seq * (r.seq + 1) * r.head_dim AS causal_flops
  FROM reg AS r
  CROSS JOIN has_gpu
  LEFT JOIN op_agg AS oa ON oa.region_id = r.id
  LEFT JOIN work_agg AS wa ON wa.region_id = r.id
  LEFT JOIN busy AS b ON b.group_id = r.id
  LEFT JOIN api ON api.region_id = r.id
  LEFT JOIN score_read AS sr ON sr.region_id = r.id
  LEFT JOIN traffic AS t ON t.region_id = r.id
);

-- The annotated forward regions (`attn_fwd`, or `attn_fwd/<impl>/...` in a sweep) with their
-- shape.
CREATE PERFETTO TABLE guide_attention_forward(
  -- Slice id of the region.
  id ID(slice.id),
  -- Start timestamp (ns).
  ts TIMESTAMP,
  -- Duration on its CPU thread (ns).
  dur DURATION,
  -- Region name: `attn_fwd` or `attn_fwd/<impl>/b<B>h<H>s<S>d<D>`.
  name STRING,
  -- The <impl> part of a sweep label (naive_inplace, sdpa_flash, ...); NULL for `attn_fwd`.
  impl STRING,
  -- Track of the CPU thread.
  track_id JOINID(track.id),
  -- Depth of the region on its track.
  depth LONG,
  -- Batch size (q's first dimension).
  batch LONG,
  -- Attention heads.
  heads LONG,
  -- Sequence length.
  seq LONG,
  -- Head dimension.
  head_dim LONG,
  -- Bytes per element of q's dtype.
  elem_bytes LONG
) AS
SELECT id, ts, dur, name, impl, track_id, depth, batch, heads, seq, head_dim, elem_bytes
FROM _guide_attention_with_shape!((
  SELECT id, ts, dur, name, track_id, depth
  FROM slice
  WHERE category = 'user_annotation' AND (name = 'attn_fwd' OR name GLOB 'attn_fwd/*')
));

-- Every forward region summarised (_guide_attention_summary over guide_attention_forward).
CREATE PERFETTO TABLE guide_attention_forward_summary(
  -- Slice id of the region.
  id ID(slice.id),
  -- Region name.
  name STRING,
  -- The <impl> part of a sweep label; NULL for `attn_fwd`.
  impl STRING,
  -- Start timestamp (ns).
  ts TIMESTAMP,
  -- The region's duration on its CPU thread (ns).
  cpu_ns DURATION,
  -- Batch size.
  batch LONG,
  -- Attention heads.
  heads LONG,
  -- Sequence length.
  seq LONG,
  -- Head dimension.
  head_dim LONG,
  -- Bytes per element of q's dtype.
  elem_bytes LONG,
  -- aten:: operators inside the region, all depths.
  cpu_ops LONG,
  -- Self time of aten::scaled_dot_product_attention calls inside (ns; 0 when none).
  sdpa_self_ns DURATION,
  -- GPU kernels launched from inside; NULL in a trace without GPU activity.
  kernels LONG,
  -- GPU memcpys launched from inside; NULL in a trace without GPU activity.
  copies LONG,
  -- GPU memsets launched from inside; NULL in a trace without GPU activity.
  memsets LONG,
  -- Summed GPU duration of those memcpys (ns); NULL in a trace without GPU activity.
  copy_gpu_ns DURATION,
  -- Time the GPU spent on that work, the union of its intervals (ns); NULL in a trace without
  -- GPU activity.
  gpu_ns DURATION,
  -- Distinct launch calls (runtime or driver API), comma-separated; NULL when none.
  launch_apis STRING,
  -- Innermost non-view operators reading a [batch, heads, seq, seq]-sized input.
  score_passes LONG,
  -- Bytes read and written by the operators that do the work, from their shapes.
  traffic_bytes LONG,
  -- The part of traffic_bytes in [batch, heads, seq, seq]-sized tensors.
  score_traffic_bytes LONG,
  -- FLOPs of the two matmuls over the full score matrix: 4 * batch * heads * seq^2 * head_dim.
  flops LONG,
  -- The same over the causally visible entries, diagonal included:
  -- 2 * batch * heads * seq * (seq + 1) * head_dim.
  causal_flops LONG
) AS
SELECT
  id, name, impl, ts, cpu_ns, batch, heads, seq, head_dim, elem_bytes, cpu_ops, sdpa_self_ns,
  kernels, copies, memsets, copy_gpu_ns, gpu_ns, launch_apis, score_passes, traffic_bytes,
  score_traffic_bytes, flops, causal_flops
FROM _guide_attention_summary!(guide_attention_forward);

-- Every CPU slice inside a forward region (operators and runtime calls), with its forward.
CREATE PERFETTO VIEW guide_attention_forward_slice(
  -- Forward region id.
  fwd_id JOINID(guide_attention_forward.id),
  -- Slice id.
  id JOINID(slice.id),
  -- Start (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- Slice name.
  name STRING,
  -- cpu_op, cuda_runtime, cuda_driver, ...
  category STRING,
  -- Depth below the forward region (1 = called directly inside it).
  rel_depth LONG,
  -- Enclosing slice.
  parent_id JOINID(slice.id),
  -- Argument set (input shapes and types for operators).
  arg_set_id ARGSETID,
  -- Self time: duration minus that of the slices directly inside it (ns).
  self_ns DURATION
) AS
SELECT
  f.id AS fwd_id,
  s.id,
  s.ts,
  s.dur,
  s.name,
  s.category,
  s.depth - f.depth AS rel_depth,
  s.parent_id,
  s.arg_set_id,
  s.dur - COALESCE((SELECT SUM(c.dur) FROM slice AS c WHERE c.parent_id = s.id), 0) AS self_ns
FROM guide_attention_forward AS f
JOIN slice AS s
  ON s.track_id = f.track_id AND s.ts >= f.ts AND s.ts < f.ts + f.dur AND s.depth > f.depth;
