-- id: comm-exposed
-- title: Communication kernels that no compute overlaps
-- title_ja: 計算と重なっていない通信カーネル
-- severity: warning
-- param: exposed_pct_min = 30  Reported when at least this share (%) of the communication kernels' time has no compute kernel running beside it.
-- param_ja: exposed_pct_min  通信カーネルの時間のうち、そばで計算カーネルが動いていない時間の割合
--   （%）がこの値以上のとき報告します。
-- param: exposed_ns_min = 100000  ...and when the exposed time is at least this long (ns) in all.
-- param_ja: exposed_ns_min  ……かつ、重なりのない時間の合計がこの値（ns）以上のとき。
-- needs: gpu
-- relies: kernels
-- guide: check-your-trace.md#comm-exposed
-- seen: Communication kernels: {count}, {sum(comm_ns)} in all, of which {sum(cost_ns)} with
--   no compute kernel running on the same GPU ({first(exposed_pct)}).
-- seen_ja: 通信カーネルは {count} 個、合計 {sum(comm_ns)} で、そのうち {sum(cost_ns)} は同じ GPU
--   で計算カーネルが動いていませんでした（{first(exposed_pct)}）。
-- why: Gradient all-reduces (NCCL/RCCL kernels) should run while the backward computes the next
--   gradients. Time when only communication runs is time the GPU's compute units wait for the
--   network.
-- why_ja: 勾配の all-reduce（NCCL/RCCL カーネル）は、逆伝播（backward）
--   が次の勾配を計算している間に実行されるべきものです。通信だけが動いている時間は、GPU
--   の演算ユニットがネットワークを待っている時間です。
-- try: Let DDP or FSDP overlap them: avoid synchronising between the backward and the optimizer,
--   tune `bucket_cap_mb`, check that communication runs on its own stream, and that nothing in
--   the backward forces an early wait.
-- try_ja: DDP や FSDP に通信を計算と重ねさせてください。逆伝播とオプティマイザの間で同期しないこ
--   と、`bucket_cap_mb` を調整すること、通信が専用のストリームで動いていること、
--   逆伝播の中に早すぎる待機を強いるものがないことを確認します。
-- after: The communication kernels sit under compute kernels on another stream of the same GPU.
-- after_ja: 通信カーネルが、同じ GPU の別のストリームで動く計算カーネルと重なります。
-- false-positives: The last bucket of a backward, which has nothing left to overlap with. A
--   communication kernel's time includes waiting for the slowest rank to arrive, so exposed
--   time can be another GPU's lateness rather than this one's missing overlap.
-- false-positives_ja: 逆伝播の最後のバケットには、重ねる相手が残っていません。
--   通信カーネルの時間には最も遅いランクの到着を待つ時間も含まれるため、
--   計算と重なっていない時間は、この GPU の重なり不足ではなく別の GPU の遅れであることもあります。
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;

WITH
  -- Communication kernels: NCCL's or RCCL's, in any letter case, as one GLOB (which the
  -- table filters itself, unlike an OR or a LIKE).
  comm AS MATERIALIZED (
    SELECT id, ts, dur, name, device, stream FROM guide_kineto_gpu_activity
    WHERE category = 'kernel' AND name GLOB '*[nNrR][cC][cC][lL]*'
  ),
  -- The other kernels, read only when there is communication to compare with.
  compute AS MATERIALIZED (
    SELECT id, ts, dur, name, device, stream FROM guide_kineto_gpu_activity
    WHERE category = 'kernel' AND NOT name GLOB '*[nNrR][cC][cC][lL]*'
      AND EXISTS (SELECT 1 FROM comm)
  ),
  overlap AS (
    SELECT c.id AS group_id, MAX(k.ts, c.ts) AS ts, MIN(k.ts + k.dur, c.ts + c.dur) - MAX(k.ts, c.ts) AS dur
    FROM comm AS c
    JOIN compute AS k ON k.device = c.device AND k.ts < c.ts + c.dur AND k.ts + k.dur > c.ts
  ),
  covered AS (SELECT * FROM guide_windows_union!(overlap)),
  per_comm AS MATERIALIZED (
    SELECT c.*, c.dur - COALESCE(cv.busy_ns, 0) AS exposed_ns
    FROM comm AS c LEFT JOIN covered AS cv ON cv.group_id = c.id
  ),
  total AS (SELECT SUM(dur) AS comm_ns, SUM(exposed_ns) AS exposed_ns FROM per_comm)
SELECT
  p.ts,
  p.dur,
  'GPU ' || p.device || ', stream ' || p.stream AS location,
  p.name AS what,
  p.exposed_ns AS cost_ns,
  p.dur AS comm_ns,
  100.0 * total.exposed_ns / total.comm_ns AS exposed_pct
FROM per_comm AS p, total
WHERE total.comm_ns > 0 AND 100.0 * total.exposed_ns / total.comm_ns >= {{exposed_pct_min}}
  AND total.exposed_ns >= {{exposed_ns_min}}
ORDER BY p.exposed_ns DESC, ts, location
