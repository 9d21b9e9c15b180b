-- What torch.compile leaves in a training step's trace: compiled regions, graphs, kernels
-- output: values
-- question_ja: torch.compile が学習ステップのトレースに残すもの: コンパイル済み領域、グラフ、カーネル
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.train;
INCLUDE PERFETTO MODULE guide.kernel_names;

WITH
  steps AS (SELECT COUNT(*) AS n, SUM(dur) AS step_ns FROM guide_train_step),
  traced AS (SELECT EXISTS (SELECT 1 FROM guide_kineto_gpu_activity) AS yes),
  -- Inductor's generated kernels: GPU kernels on a GPU trace; on a CPU trace its C++ kernels,
  -- which record themselves as CPU slices.
  inductor AS (
    SELECT s.*
    FROM guide_kineto_slice AS s, traced
    WHERE guide_kernel_names_family(s.name) GLOB 'Inductor*'
      AND s.category = IIF(traced.yes, 'kernel', 'cpu_op')
  ),
  -- The middle profiled step, for the "Open in Perfetto" button.
  mid AS (
    SELECT ts, dur FROM guide_train_step ORDER BY step
    LIMIT 1 OFFSET (SELECT COUNT(*) / 2 FROM guide_train_step)
  )
SELECT
  (SELECT COUNT(*) FROM guide_kineto_slice WHERE name GLOB 'Torch-Compiled Region*') * 1.0
    / steps.n AS compiled_regions,
  (SELECT COUNT(*) FROM guide_kineto_slice WHERE name = 'CompiledFunction') * 1.0 / steps.n
    AS forward_graphs,
  (SELECT COUNT(*) FROM guide_kineto_slice WHERE name = 'CompiledFunctionBackward') * 1.0
    / steps.n AS backward_graphs,
  (SELECT COUNT(*) FROM inductor) * 1.0 / steps.n AS inductor_kernels,
  (SELECT COUNT(DISTINCT name) FROM inductor) AS inductor_kernel_names,
  -- The kernel that ran longest in all, to quote a real name.
  (SELECT name FROM inductor GROUP BY name ORDER BY SUM(dur) DESC, name LIMIT 1)
    AS longest_inductor_kernel,
  -- The compiler at work: Dynamo, AOTAutograd and Inductor time their phases with
  -- `<phase> (dynamo_timed)` records. None in the traced steps means no compilation and no
  -- recompilation happened there.
  (SELECT COUNT(*) FROM guide_kineto_slice AS s, guide_train_step AS st
    WHERE s.name GLOB '* (dynamo_timed)' AND s.ts >= st.ts AND s.ts < st.ts + st.dur)
    AS compiler_rows,
  (SELECT COUNT(*) FROM guide_kineto_slice WHERE name = 'AOTDispatcher Runtime Wrapper Prologue')
    * 1.0 / steps.n AS runtime_wrappers,
  (SELECT CAST(SUM(dur) / steps.n AS INT) FROM guide_kineto_slice
    WHERE name = 'TorchDynamo Cache Lookup') AS guard_ns,
  (SELECT CAST(SUM(dur) / steps.n AS INT) FROM guide_kineto_slice
    WHERE name GLOB 'Torch-Compiled Region*') AS compiled_region_ns,
  -- The step's CPU time, and on a GPU trace the GPU busy share of the steps (what the compiled
  -- step's CPU time leaves the GPU to do).
  CAST(steps.step_ns / steps.n AS INT) AS step_cpu_ns,
  IIF(traced.yes, (SELECT ROUND(100.0 * busy_ns / window_ns, 1) FROM guide_windows_steps_busy),
    NULL) AS gpu_busy_pct,
  mid.ts / 1e9 AS step_start_s,
  (mid.ts + mid.dur) / 1e9 AS step_end_s
FROM steps, traced, mid;
