-- A language model generating tokens: forwards labelled `prefill` / `decode`, what each one
-- costs on the CPU and the GPU, the bytes each decode forward must read, and the attention
-- kernels chosen. The window macros take any table of CPU windows, so the same SQL measures a
-- forward of this guide's model or a module of any other model's trace.
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.dtypes;
INCLUDE PERFETTO MODULE guide.windows;

-- Every model forward of every profiled `generate` call: the prefill, then one decode per token.
CREATE PERFETTO TABLE guide_llm_forward(
  -- Slice id of the `prefill` or `decode` annotation.
  id ID(slice.id),
  -- Profiler step (one generate call) the forward belongs to.
  step LONG,
  -- 'prefill' or 'decode'.
  phase STRING,
  -- Position in its generate call: 0 = the prefill, 1 = the first decode, ...
  idx LONG,
  -- Start of the forward on the CPU (ns).
  ts TIMESTAMP,
  -- CPU time of the forward: its annotation's duration (ns).
  dur DURATION,
  -- Track of the CPU thread.
  track_id JOINID(track.id),
  -- Length of this token's turn: from this forward's start to the next forward's start (or the
  -- end of the generate call for the last one), i.e. forward plus generate's own work (ns).
  token_dur DURATION
) AS
WITH
  fwd AS (
    SELECT s.id, st.step, s.name AS phase, s.ts, s.dur, s.track_id, st.ts + st.dur AS step_end
    FROM guide_kineto_slice AS s
    JOIN guide_kineto_profiler_step AS st
      ON s.track_id = st.track_id AND s.ts >= st.ts AND s.ts < st.ts + st.dur
    WHERE s.category = 'user_annotation' AND s.name IN ('prefill', 'decode')
  ),
  gen AS (
    -- End of the `generate` annotation around the forwards of each step.
    SELECT st.step, g.ts + g.dur AS gen_end
    FROM guide_kineto_profiler_step AS st
    JOIN guide_kineto_slice AS g
      ON g.track_id = st.track_id AND g.ts >= st.ts AND g.ts < st.ts + st.dur
    WHERE g.name = 'generate'
  )
SELECT
  fwd.id,
  fwd.step,
  fwd.phase,
  ROW_NUMBER() OVER (PARTITION BY fwd.step ORDER BY fwd.ts) - 1 AS idx,
  fwd.ts,
  fwd.dur,
  fwd.track_id,
  COALESCE(
    LEAD(fwd.ts) OVER (PARTITION BY fwd.step ORDER BY fwd.ts), gen.gen_end, fwd.step_end
  ) - fwd.ts AS token_dur
FROM fwd
LEFT JOIN gen USING (step);

-- The slices the window macros assign to windows: CPU operators and runtime/driver calls,
-- copied once out of the slice table so that every macro call sorts a small table.
CREATE PERFETTO TABLE _guide_llm_cpu_call(
  -- Slice id.
  id ID(slice.id),
  -- Start (ns).
  ts TIMESTAMP,
  -- Duration (ns).
  dur DURATION,
  -- Operator or API name.
  name STRING,
  -- cpu_op, cuda_runtime or cuda_driver.
  category STRING,
  -- Track of the CPU thread.
  track_id JOINID(track.id)
) AS
SELECT id, ts, dur, name, category, track_id
FROM guide_kineto_slice
WHERE category IN ('cpu_op', 'cuda_runtime', 'cuda_driver')
ORDER BY track_id, ts;

-- Every kernel launch with the kernel it started. A launch and its kernel carry the same
-- `correlation` number, and the `ac2g` flow between them is kept only where the numbers agree:
-- when the trace processor drops a kernel that partly overlaps another on its stream (it keeps
-- one slice per time range on a track; cuBLAS split-K GEMMs can overlap their reduction kernel),
-- the dropped kernel's flow lands on the kernel it overlapped, which would otherwise count twice.
-- A kernel launch call (*LaunchKernel*) left without its kernel keeps a row with NULL kernel
-- columns, so kernel counts follow the launches even where the importer lost the kernel.
CREATE PERFETTO TABLE guide_llm_kernel_launch(
  -- Slice id of the runtime or driver call.
  launch_id JOINID(slice.id),
  -- Its API name (cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch...).
  launch_name STRING,
  -- Slice id of the kernel; NULL when the trace processor dropped it.
  kernel_id JOINID(slice.id),
  -- Kernel start (ns); NULL when dropped.
  kernel_ts TIMESTAMP,
  -- Kernel duration (ns); NULL when dropped.
  kernel_dur DURATION,
  -- Kernel name; NULL when dropped.
  kernel_name STRING,
  -- Device index; NULL when dropped.
  device LONG,
  -- Stream id; NULL when dropped.
  stream LONG
) AS
WITH
  linked AS MATERIALIZED (
    SELECT
      r.id AS launch_id,
      r.name AS launch_name,
      g.id AS kernel_id,
      g.ts AS kernel_ts,
      g.dur AS kernel_dur,
      g.name AS kernel_name,
      g.pid AS device,
      g.tid AS stream
    FROM flow AS f
    JOIN guide_kineto_slice AS r ON r.id = f.slice_out
    JOIN guide_kineto_slice AS g ON g.id = f.slice_in
    WHERE r.category IN ('cuda_runtime', 'cuda_driver')
      AND g.category = 'kernel'
      AND COALESCE(
        extract_arg(r.arg_set_id, 'args.correlation')
          = extract_arg(g.arg_set_id, 'args.correlation'),
        TRUE
      )
  )
SELECT * FROM (
  SELECT * FROM linked
  UNION ALL
  SELECT c.id, c.name, NULL, NULL, NULL, NULL, NULL, NULL
  FROM _guide_llm_cpu_call AS c
  WHERE c.category IN ('cuda_runtime', 'cuda_driver')
    AND c.name GLOB '*aunchKernel*'
    AND c.id NOT IN (SELECT launch_id FROM linked)
)
ORDER BY launch_id, kernel_ts;

-- Assigns slices to CPU windows: each slice goes to the latest window that started at or before
-- it on its track, if the slice starts before that window ends. Windows on one track must not
-- overlap (forwards, a forward's turns, sibling modules). A sort and a running maximum rather
-- than a range join, so it stays fast on traces with hundreds of thousands of slices.
CREATE PERFETTO MACRO guide_llm_assign(
  -- CPU windows: needs the columns window_id, ts, dur and track_id.
  windows TableOrSubquery,
  -- Slices to assign: needs the columns id, ts, dur, name, category and track_id.
  slices TableOrSubquery
)
-- One row per assigned slice: window_id; id, ts, dur, name, category and track_id of the slice.
RETURNS TableOrSubquery AS
(
  WITH
    _llm_aw AS MATERIALIZED (SELECT window_id, ts, dur, track_id FROM $windows),
    _llm_amarks AS (
      SELECT w.ts, w.track_id, 0 AS is_slice, NULL AS id, NULL AS dur, NULL AS name,
        NULL AS category
      FROM _llm_aw AS w
      UNION ALL
      SELECT s.ts, s.track_id, 1 AS is_slice, s.id, s.dur, s.name, s.category
      FROM $slices AS s
      WHERE s.track_id IN (SELECT track_id FROM _llm_aw)
    ),
    _llm_alatest AS (
      SELECT
        id, ts, dur, name, category, track_id, is_slice,
        MAX(IIF(is_slice = 0, ts, NULL)) OVER (
          PARTITION BY track_id ORDER BY ts, is_slice ROWS UNBOUNDED PRECEDING
        ) AS window_ts
      FROM _llm_amarks
    )
  SELECT w.window_id, l.id, l.ts, l.dur, l.name, l.category, l.track_id
  FROM _llm_alatest AS l
  JOIN _llm_aw AS w ON w.track_id = l.track_id AND w.ts = l.window_ts
  WHERE l.is_slice = 1 AND l.ts < w.ts + w.dur
);

-- The CPU operators and runtime/driver calls that start inside each CPU window.
CREATE PERFETTO MACRO guide_llm_window_slice(
  -- CPU windows: needs the columns window_id, ts, dur and track_id (the CPU thread's track);
  -- windows on one track must not overlap (see guide_llm_assign).
  windows TableOrSubquery
)
-- One row per slice: window_id; id, ts, dur, name, category and track_id of the slice.
RETURNS TableOrSubquery AS
(
  SELECT * FROM guide_llm_assign!($windows, _guide_llm_cpu_call)
);

-- GPU kernels launched from inside each CPU window: a kernel belongs to the window in which its
-- launch call (cudaLaunchKernel, cuLaunchKernel, cudaGraphLaunch...) started.
CREATE PERFETTO MACRO guide_llm_window_kernel(
  -- CPU windows, as guide_llm_window_slice takes them.
  windows TableOrSubquery
)
-- One row per kernel launch: window_id; launch_id and launch_name (the runtime or driver call);
-- kernel_id, kernel_ts, kernel_dur, kernel_name, device and stream (the kernel it started; NULL
-- for a kernel the trace processor dropped, see guide_llm_kernel_launch).
RETURNS TableOrSubquery AS
(
  SELECT
    r.window_id,
    k.launch_id,
    k.launch_name,
    k.kernel_id,
    k.kernel_ts,
    k.kernel_dur,
    k.kernel_name,
    k.device,
    k.stream
  FROM guide_llm_window_slice!($windows) AS r
  JOIN guide_llm_kernel_launch AS k ON k.launch_id = r.id
);

-- What each CPU window costs: operators, launch calls and the GPU kernels they started.
CREATE PERFETTO MACRO guide_llm_window_cost(
  -- CPU windows, as guide_llm_window_slice takes them.
  windows TableOrSubquery
)
-- One row per window, also for windows that launched nothing, with the columns:
--   window_id: the input window;
--   cpu_ns: the window's length (ns);
--   cpu_ops: CPU operators that start in the window;
--   kernel_launches: runtime/driver calls named *LaunchKernel*;
--   graph_launches: cudaGraphLaunch calls;
--   launch_ns: CPU time inside those launch calls (ns);
--   kernels, kernel_ns: kernels launched from the window and their summed time (ns);
--   dropped_kernels: those of them the trace processor dropped (see guide_llm_kernel_launch):
--     counted in kernels, missing from kernel_ns and from the gaps;
--   gpu_span_ns: first kernel start to last kernel end (ns);
--   max_gap_ns, idle_ns: the longest and the summed time with no kernel running between the
--     first kernel and the last (ns);
--   kernel_union_ns: time during which at least one of those kernels runs: the union of their
--     intervals (guide_windows_union, not clipped to the window: a kernel launched in the window
--     counts whole, whenever it runs), equal to gpu_span_ns - idle_ns (ns). Kernels on one
--     stream can overlap (a split-K reduce kernel starts before its GEMM ends), so this union,
--     not kernel_ns (a sum, which counts overlapping time twice), is the GPU time to divide
--     bytes or work by.
-- Every column from kernel_launches on is NULL when the trace recorded no GPU activity at all
-- (a CPU-only capture), so a CPU trace shows "no data" rather than a measured zero; on a GPU
-- trace a window that launched nothing gets 0 (gpu_span_ns and max_gap_ns stay NULL).
RETURNS TableOrSubquery AS
(
  WITH
    _llm_win AS MATERIALIZED (SELECT window_id, ts, dur, track_id FROM $windows),
    _llm_s AS MATERIALIZED (SELECT * FROM guide_llm_window_slice!(_llm_win)),
    _llm_k AS MATERIALIZED (
      SELECT s.window_id, k.*
      FROM _llm_s AS s
      JOIN guide_llm_kernel_launch AS k ON k.launch_id = s.id
    ),
    -- Idle time before each kernel: from the latest end of any earlier kernel of the window.
    _llm_gap AS (
      SELECT
        window_id,
        kernel_ts - MAX(kernel_ts + kernel_dur) OVER (
          PARTITION BY window_id ORDER BY kernel_ts, kernel_id
          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS gap_ns
      FROM _llm_k
      WHERE kernel_id IS NOT NULL
    ),
    _llm_call AS (
      SELECT
        s.window_id,
        SUM(s.category = 'cpu_op') AS cpu_ops,
        SUM(s.name GLOB '*aunchKernel*') AS kernel_launches,
        SUM(s.name GLOB '*GraphLaunch*') AS graph_launches,
        SUM(IIF(s.name GLOB '*aunchKernel*' OR s.name GLOB '*GraphLaunch*', s.dur, 0))
          AS launch_ns
      FROM _llm_s AS s
      GROUP BY s.window_id
    ),
    _llm_kernel AS (
      SELECT
        window_id,
        COUNT(*) AS kernels,
        SUM(kernel_id IS NULL) AS dropped_kernels,
        SUM(kernel_dur) AS kernel_ns,
        MAX(kernel_ts + kernel_dur) - MIN(kernel_ts) AS gpu_span_ns
      FROM _llm_k
      GROUP BY window_id
    ),
    _llm_idle AS (
      SELECT window_id, MAX(gap_ns) AS max_gap_ns, SUM(MAX(gap_ns, 0)) AS idle_ns
      FROM _llm_gap
      WHERE gap_ns IS NOT NULL
      GROUP BY window_id
    ),
    _llm_union AS (
      SELECT * FROM guide_windows_union!((
        SELECT window_id AS group_id, kernel_ts AS ts, kernel_dur AS dur
        FROM _llm_k
        WHERE kernel_id IS NOT NULL
      ))
    )
  SELECT
    w.window_id,
    w.dur AS cpu_ns,
    COALESCE(c.cpu_ops, 0) AS cpu_ops,
    IIF(gpu.traced, COALESCE(c.kernel_launches, 0), NULL) AS kernel_launches,
    IIF(gpu.traced, COALESCE(c.graph_launches, 0), NULL) AS graph_launches,
    IIF(gpu.traced, COALESCE(c.launch_ns, 0), NULL) AS launch_ns,
    IIF(gpu.traced, COALESCE(k.kernels, 0), NULL) AS kernels,
    IIF(gpu.traced, COALESCE(k.dropped_kernels, 0), NULL) AS dropped_kernels,
    IIF(gpu.traced, COALESCE(k.kernel_ns, 0), NULL) AS kernel_ns,
    k.gpu_span_ns,
    i.max_gap_ns,
    IIF(gpu.traced, COALESCE(i.idle_ns, 0), NULL) AS idle_ns,
    IIF(gpu.traced, COALESCE(u.busy_ns, 0), NULL) AS kernel_union_ns
  FROM _llm_win AS w
  CROSS JOIN (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS traced) AS gpu
  LEFT JOIN _llm_call AS c USING (window_id)
  LEFT JOIN _llm_kernel AS k USING (window_id)
  LEFT JOIN _llm_idle AS i USING (window_id)
  LEFT JOIN _llm_union AS u ON u.group_id = w.window_id
);

-- Weight bytes every `aten::linear` reads, from the shapes the profiler recorded
-- (record_shapes=True): input 1 is the weight, out_features x in_features.
CREATE PERFETTO VIEW guide_llm_linear_read(
  -- Slice id of the aten::linear call.
  id ID(slice.id),
  -- Start (ns).
  ts TIMESTAMP,
  -- CPU time of the call, everything it dispatched included (ns).
  dur DURATION,
  -- Track of the CPU thread.
  track_id JOINID(track.id),
  -- Bytes of the weight matrix.
  weight_bytes LONG
) AS
SELECT
  id,
  ts,
  dur,
  track_id,
  extract_arg(arg_set_id, 'args.Input Dims[1][0]')
    * extract_arg(arg_set_id, 'args.Input Dims[1][1]')
    * guide_dtypes_elem_bytes(extract_arg(arg_set_id, 'args.Input type[1]')) AS weight_bytes
FROM guide_kineto_slice
WHERE name = 'aten::linear';

-- Key and value bytes every attention call reads (inputs 1 and 2 of
-- aten::scaled_dot_product_attention: batch x heads x cached positions x head size).
CREATE PERFETTO VIEW guide_llm_attention_read(
  -- Slice id of the aten::scaled_dot_product_attention call.
  id ID(slice.id),
  -- Start (ns).
  ts TIMESTAMP,
  -- Track of the CPU thread.
  track_id JOINID(track.id),
  -- Sequences in the batch.
  batch LONG,
  -- Query positions (the prompt length in prefill, 1 in decode).
  query_len LONG,
  -- Key/value positions attended to (the cache length in decode).
  kv_len LONG,
  -- Bytes of keys plus values.
  kv_bytes LONG
) AS
SELECT
  id,
  ts,
  track_id,
  extract_arg(arg_set_id, 'args.Input Dims[0][0]') AS batch,
  extract_arg(arg_set_id, 'args.Input Dims[0][2]') AS query_len,
  extract_arg(arg_set_id, 'args.Input Dims[1][2]') AS kv_len,
  2 * extract_arg(arg_set_id, 'args.Input Dims[1][0]')
    * extract_arg(arg_set_id, 'args.Input Dims[1][1]')
    * extract_arg(arg_set_id, 'args.Input Dims[1][2]')
    * extract_arg(arg_set_id, 'args.Input Dims[1][3]')
    * guide_dtypes_elem_bytes(extract_arg(arg_set_id, 'args.Input type[1]')) AS kv_bytes
FROM guide_kineto_slice
WHERE name = 'aten::scaled_dot_product_attention';

-- What a kernel of a forward does, from its name: the matrix products that read the weights
-- (cuBLAS's GEMMs and the split-K reduce kernels that finish some of them), the attention
-- library's kernels, or the small kernels between them (norms, rotary embedding, residual adds,
-- casts, cache updates), split by ATen's kernel families, or fused into kernels Inductor generated
-- (a compiled forward). NULL for a kernel the trace processor dropped (no name).
CREATE PERFETTO FUNCTION guide_llm_kernel_class(
  -- Kernel name, or NULL.
  name STRING
)
-- Class label, or NULL.
RETURNS STRING AS
SELECT CASE
  WHEN $name IS NULL THEN NULL
  -- Inductor's pointwise and reduction kernels name the operators they fuse, and one that fuses
  -- the copies around an attention call names that call too: read the prefix first.
  WHEN $name GLOB 'triton_poi_*' OR $name GLOB 'triton_red_*' OR $name GLOB 'triton_per_*'
    THEN 'fused by Inductor (Triton)'
  WHEN $name GLOB 'nvjet_*' OR lower($name) GLOB '*gemm*' OR $name GLOB '*splitKreduce*'
    THEN 'GEMM'
  WHEN $name GLOB '*cudnn*' OR $name GLOB '*flash*' OR $name GLOB '*fmha*'
    THEN 'attention'
  WHEN $name GLOB '*reduce_kernel*' THEN 'reduction (mean, argmax)'
  WHEN $name GLOB '*CatArray*' OR $name GLOB '*copy_kernel*' THEN 'copy, cast or concatenation'
  WHEN $name GLOB '*elementwise_kernel*' THEN 'elementwise'
  ELSE 'other'
END;

-- The attention implementation family a kernel or backend operator name points to.
CREATE PERFETTO FUNCTION guide_llm_attention_family(
  -- Kernel or operator name.
  name STRING
)
-- Family label ('cuDNN attention', 'FlashAttention', ...), or NULL when the name points to none.
RETURNS STRING AS
SELECT CASE
  -- cuDNN's generated attention kernels also say 'flash' in their names: cuDNN comes first.
  WHEN $name GLOB '*cudnn*' THEN 'cuDNN attention'
  WHEN $name GLOB '*flash*' AND $name GLOB '*splitkv*' THEN 'FlashAttention (split-KV)'
  WHEN $name GLOB '*flash*' OR $name GLOB '*Flash*' THEN 'FlashAttention'
  WHEN $name GLOB '*fmha*' OR $name GLOB '*efficient_attention*' THEN 'memory-efficient'
  WHEN $name GLOB '*math*' THEN 'math (unfused)'
  ELSE NULL
END;

-- Every attention call with the backend operator it dispatched to and the kernels it launched.
CREATE PERFETTO VIEW guide_llm_attention_kernel(
  -- Slice id of the aten::scaled_dot_product_attention call.
  sdpa_id JOINID(slice.id),
  -- Name of the first operator nested directly inside it (the backend, e.g.
  -- aten::_scaled_dot_product_flash_attention); NULL if none.
  backend_op STRING,
  -- Kernel launched from inside the call (NULL on a CPU-only trace).
  kernel_name STRING,
  -- Duration of that kernel (ns).
  kernel_dur DURATION
) AS
WITH
  sdpa AS (
    SELECT id AS window_id, ts, dur, track_id
    FROM guide_kineto_slice
    WHERE name = 'aten::scaled_dot_product_attention'
  ),
  backend AS (
    SELECT parent_id AS sdpa_id, name, ROW_NUMBER() OVER (PARTITION BY parent_id ORDER BY ts) AS n
    FROM guide_kineto_slice
    WHERE parent_id IN (SELECT window_id FROM sdpa) AND category = 'cpu_op'
  ),
  k AS (SELECT * FROM guide_llm_window_kernel!(sdpa) WHERE kernel_id IS NOT NULL)
SELECT
  sdpa.window_id AS sdpa_id,
  b.name AS backend_op,
  k.kernel_name,
  k.kernel_dur
FROM sdpa
LEFT JOIN backend AS b ON b.sdpa_id = sdpa.window_id AND b.n = 1
LEFT JOIN k ON k.window_id = sdpa.window_id;
