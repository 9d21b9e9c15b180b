-- id: comm-exposed
-- title: Communication kernels that no compute overlaps
-- title_ja: 計算と重なっていない通信カーネル
-- severity: warning
-- param: exposed_pct_min = 30  Reported when at least this share (%) of the communication kernels' time has no compute kernel running beside it.
-- param_ja: exposed_pct_min  通信カーネルの時間のうち、同時に計算カーネルが動いていない時間の割合
--   （%）がこの値以上のとき報告します。
-- param: exposed_trace_pct_min = 5  ...or when the exposed time is at least this share (%) of the trace's time (a large exposure, whatever its share of the communication)...
-- param_ja: exposed_trace_pct_min  ……または、重なりのない時間がトレースの時間のこの割合（%）以上のとき
--   （通信に占める割合によらず、大きな露出）……
-- param: exposed_ns_min = 100000  ...and, either way, when the exposed time is at least this long (ns) in all.
-- param_ja: exposed_ns_min  ……いずれの場合も、重なりのない時間の合計がこの値（ns）以上のとき。
-- needs: gpu
-- relies: kernels
-- guide: check-your-trace.md#comm-exposed
-- columns: comm_ns=Communication time, exposed_pct=Exposed share, collective=Collective, gradient_syncs=Gradient sync, exchanges=Exchange, advice=Advice
-- columns_ja: comm_ns=通信時間, exposed_pct=計算と重ならない割合, collective=集団通信の種類, gradient_syncs=勾配の同期, exchanges=交換, advice=対策
-- seen: Communication kernels: {count}, {sum(comm_ns)} in all, of which {sum(cost_ns)} with
--   no compute kernel running on the same GPU ({first(exposed_pct)}); all-reduce, reduce-scatter
--   or all-gather: {sum(gradient_syncs)}, send/receive or all-to-all: {sum(exchanges)}. What
--   applies (more under "What to try"): {first(advice)}.
-- seen_ja: 通信カーネルは {count} 個、合計 {sum(comm_ns)} で、そのうち {sum(cost_ns)} は同じ GPU
--   で計算カーネルが動いていませんでした（{first(exposed_pct)}）。種類は
--   all-reduce、reduce-scatter、all-gather が {sum(gradient_syncs)} 個、send/receive と
--   all-to-all が {sum(exchanges)} 個です。当てはまる対策（詳しくは「対策」）: {first(advice)}。
-- why: Gradient all-reduces (NCCL/RCCL kernels) should run while the backward computes the next
--   gradients; send/receive and all-to-all exchanges (pipeline stages, embedding or expert
--   exchanges) should run while independent compute does. Time when only communication runs is
--   time the GPU's compute units wait for the network.
-- why_ja: 勾配の all-reduce（NCCL/RCCL カーネル）は、逆伝播（backward）
--   が次の勾配を計算している間に実行されるべきものです。send/receive や all-to-all の交換
--   （パイプラインのステージ、埋め込みやエキスパートの交換）は、それに依存しない計算の間に実行される
--   べきものです。通信だけが動いている時間は、GPU の演算ユニットがネットワークを待っている時間です。
-- try: The kernel's type says which applies. All-reduce, reduce-scatter, all-gather: let DDP or
--   FSDP overlap them: avoid synchronising between the backward and the optimizer, tune
--   `bucket_cap_mb`, check that communication runs on its own stream, and that nothing in the
--   backward forces an early wait. Send/receive and all-to-all (`ncclKernel_SendRecv`):
--   `bucket_cap_mb` does not apply; issue the exchange early (`async_op=True`) and `wait()` only
--   where its result is needed, with independent compute (the next batch's lookups, other
--   micro-batches) in between; the same for any collective in a trace with no backward pass
--   (inference's tensor-parallel all-reduces), where no gradient is being synchronised.
-- try_ja: どれが当てはまるかはカーネルの種類でわかります。all-reduce、reduce-scatter、all-gather:
--   DDP や FSDP に通信を計算と重ねさせてください。逆伝播とオプティマイザの間で同期しないこ
--   と、`bucket_cap_mb` を調整すること、通信が専用のストリームで動いていること、
--   逆伝播の中に早すぎる待機を強いるものがないことを確認します。send/receive と all-to-all
--   （`ncclKernel_SendRecv`）: `bucket_cap_mb` は関係しません。交換を早めに発行し
--   （`async_op=True`）、結果が必要な所でだけ `wait()` して、その間にそれに依存しない計算
--   （次のバッチの埋め込み参照、ほかのマイクロバッチ）を置いてください。逆伝播のないトレース
--   （推論のテンソル並列の all-reduce など）の集団通信も同じで、そこでは勾配を同期していません。
-- after: The communication kernels sit under compute kernels on another stream of the same GPU.
-- after_ja: 通信カーネルが、同じ GPU の別のストリームで動く計算カーネルと重なります。
-- false-positives: The last bucket of a backward, which has nothing left to overlap with. A
--   communication kernel's time includes waiting for the slowest rank to arrive, so exposed
--   time can be another GPU's lateness rather than this one's missing overlap.
-- false-positives_ja: 逆伝播の最後のバケットには、重ねる相手が残っていません。
--   通信カーネルの時間には最も遅いランクの到着を待つ時間も含まれるため、
--   計算と重なっていない時間は、この GPU の重なり不足ではなく別の GPU の遅れであることもあります。
INCLUDE PERFETTO MODULE guide.comm;

WITH
  -- Communication kernels and the part of each that no compute kernel on its GPU overlapped
  -- (guide.comm: the guide's one definition, which the cross-rank section also reads), over the
  -- whole trace. A stretch two communication kernels share counts once, for the earlier.
  whole AS (SELECT 0 AS window_id, start_ts AS ts, end_ts - start_ts AS dur FROM trace_bounds),
  piece AS MATERIALIZED (SELECT id, comm_ns, exposed_ns FROM guide_comm_exposed!(whole)),
  -- The collective a kernel runs, by purpose: gradient synchronisation (all-reduce,
  -- reduce-scatter, all-gather: what DDP and FSDP overlap) or an exchange (send/receive, which
  -- NCCL's all-to-all is made of: pipeline stages, embedding or expert exchanges).
  typed AS MATERIALIZED (
    SELECT c.id, c.ts, c.dur, c.name, c.device, c.stream, c.purpose AS collective,
      COALESCE(p.comm_ns, 0) AS comm_ns, COALESCE(p.exposed_ns, 0) AS exposed_ns
    FROM guide_comm_kernel AS c
    LEFT JOIN piece AS p USING (id)
  ),
  total AS (
    SELECT SUM(comm_ns) AS comm_ns, SUM(exposed_ns) AS exposed_ns,
      SUM(IIF(collective = 'exchange', exposed_ns, 0)) AS exchange_ns,
      SUM(IIF(collective = 'gradient sync', exposed_ns, 0)) AS sync_ns
    FROM typed
  )
SELECT
  p.ts,
  p.dur,
  'GPU ' || p.device || ', stream ' || p.stream AS location,
  'GPU ' || p.device || '、ストリーム ' || p.stream AS location_ja,
  p.name AS what,
  p.name AS what_ja,
  p.exposed_ns AS cost_ns,
  p.comm_ns,
  100.0 * total.exposed_ns / total.comm_ns AS exposed_pct,
  p.collective,
  CASE p.collective WHEN 'gradient sync' THEN '勾配の同期' WHEN 'exchange' THEN '交換'
    ELSE 'その他' END AS collective_ja,
  p.collective = 'gradient sync' AS gradient_syncs,
  p.collective = 'exchange' AS exchanges,
  -- The advice that fits the traffic most of the exposed time is, by its code names alone (the
  -- same in every language; "What to try" says more).
  -- Without a backward pass in the trace (inference: a tensor-parallel all-reduce, say) no
  -- gradient is being synchronised, and DDP's buckets do not apply.
  IIF(total.exchange_ns > total.sync_ns OR NOT EXISTS (
      SELECT 1 FROM slice WHERE name GLOB 'autograd::engine::evaluate_function*'
    ),
    'async_op=True + wait()', 'DDP/FSDP bucket_cap_mb') AS advice
FROM typed AS p, total
WHERE total.comm_ns > 0
  AND (
    100.0 * total.exposed_ns / total.comm_ns >= {{exposed_pct_min}}
    OR 100.0 * total.exposed_ns / (SELECT dur FROM whole) >= {{exposed_trace_pct_min}}
  )
  AND total.exposed_ns >= {{exposed_ns_min}}
ORDER BY p.exposed_ns DESC, ts, location
