-- Memory copies per training step: pageable or pinned, and whether they overlap compute
-- output: table
-- needs: cuda
-- columns: phase=Phase, name=Copy (as the trace names it), launch_name=Launched by, copies_per_step=Copies per step, copy_bytes=Bytes per copy, launch_cpu_ns=CPU time in the launch call, copy_ns=GPU time per copy, overlap_ns=Kernel time during the copy
-- question_ja: 学習ステップあたりのメモリコピー: ページング可能かピン留めか、計算と重なるか
-- columns_ja: phase=フェーズ, name=コピー（トレース上の名前）, launch_name=起動元, copies_per_step=ステップあたりのコピー数, copy_bytes=コピー 1 回あたりのバイト数, launch_cpu_ns=起動呼び出しの CPU 時間, copy_ns=コピー 1 回あたりの GPU 時間, overlap_ns=コピー中のカーネル時間
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.train;

WITH
  steps AS (SELECT COUNT(*) AS n FROM guide_train_step),
  -- Every copy launched from the step's thread (or an autograd engine thread) during a step.
  copy AS MATERIALIZED (
    SELECT
      g.id AS gpu_id,
      g.name,
      r.name AS launch_name,
      g.ts,
      g.dur,
      r.dur AS launch_dur,
      extract_arg(g.arg_set_id, 'args.bytes') AS bytes,
      (SELECT p.phase FROM guide_train_phase AS p
        WHERE r.ts >= p.ts AND r.ts < p.ts + p.dur ORDER BY p.depth DESC LIMIT 1) AS phase
    FROM guide_kineto_gpu_activity AS g
    JOIN guide_kineto_launch_link AS ll ON ll.gpu_id = g.id
    JOIN guide_kineto_slice AS r ON r.id = ll.launch_id
    JOIN guide_train_thread AS th ON th.track_id = r.track_id
    JOIN guide_train_step AS st ON r.ts >= st.ts AND r.ts < st.ts + st.dur
    WHERE g.category = 'gpu_memcpy'
  ),
  kernel AS MATERIALIZED (
    SELECT ts, dur FROM guide_kineto_gpu_activity WHERE category = 'kernel'
  ),
  -- Kernels running while each copy runs (any stream), clipped to the copy: a union, so two
  -- overlapping kernels count once.
  overlap AS (
    SELECT * FROM guide_windows_union!((
      SELECT
        c.gpu_id AS group_id,
        MAX(k.ts, c.ts) AS ts,
        MIN(k.ts + k.dur, c.ts + c.dur) - MAX(k.ts, c.ts) AS dur
      FROM copy AS c
      JOIN kernel AS k ON k.ts < c.ts + c.dur AND k.ts + k.dur > c.ts
    ))
  )
SELECT
  COALESCE(c.phase, 'outside the phases') AS phase,
  c.name,
  c.launch_name,
  COUNT(*) * 1.0 / steps.n AS copies_per_step,
  CAST(AVG(c.bytes) AS INT) AS copy_bytes,
  CAST(AVG(c.launch_dur) AS INT) AS launch_cpu_ns,
  CAST(AVG(c.dur) AS INT) AS copy_ns,
  CAST(AVG(COALESCE(o.busy_ns, 0)) AS INT) AS overlap_ns
FROM copy AS c
LEFT JOIN overlap AS o ON o.group_id = c.gpu_id, steps
GROUP BY c.phase, c.name, c.launch_name
ORDER BY guide_train_phase_order(c.phase), copies_per_step DESC, c.name;
