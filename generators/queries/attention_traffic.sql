-- What does each operator that launches GPU work read and write per forward, and how fast does its GPU work move it?
-- output: table
-- needs: cuda
-- columns: name=Operator, gpu_work=GPU work, read_bytes=Read, write_bytes=Written, score_bytes=Of which score tensors, gpu_ns=GPU time, traffic_bytes_per_s=Achieved bandwidth, bandwidth_peak_pct=% of peak bandwidth
-- question_ja: GPU の処理を起動する各演算子は順伝播 1 回あたりに何を読み書きし、その GPU の処理はそれをどれだけの速さで動かすか
-- columns_ja: name=演算子, gpu_work=GPU の処理, read_bytes=読み込み, write_bytes=書き込み, score_bytes=うちスコアテンソル, gpu_ns=GPU 時間, traffic_bytes_per_s=達成帯域幅, bandwidth_peak_pct=ピーク帯域幅に対する %
INCLUDE PERFETTO MODULE guide.attention;
INCLUDE PERFETTO MODULE guide.hardware;

-- Bytes come from the operator's recorded shapes (guide_attention_traffic_in): its inputs read
-- once, what it writes written once. The achieved bandwidth divides them by the GPU time of the
-- work the operator launched (the union of its intervals), never by CPU time. Operators are
-- listed in the order the first forward calls them; each row averages over the forwards.
WITH
  fwd AS (SELECT * FROM guide_attention_forward WHERE name = 'attn_fwd'),
  t AS (
    SELECT
      tr.*,
      ROW_NUMBER() OVER (PARTITION BY tr.region_id ORDER BY tr.ts) AS k
    FROM guide_attention_traffic_in!(fwd) AS tr
  ),
  family AS (
    SELECT op_id, GROUP_CONCAT(family, '; ') AS gpu_work
    FROM (
      SELECT op_id, family FROM guide_attention_gpu_work
      WHERE op_id IN (SELECT op_id FROM t)
      ORDER BY op_id, ts
    )
    GROUP BY op_id
  )
SELECT
  MIN(t.name) AS name,
  MIN(f.gpu_work) AS gpu_work,
  AVG(t.read_bytes) AS read_bytes,
  AVG(t.write_bytes) AS write_bytes,
  AVG(t.score_read_bytes + t.score_write_bytes) AS score_bytes,
  AVG(t.gpu_ns) AS gpu_ns,
  1e9 * SUM(t.read_bytes + t.write_bytes) / NULLIF(SUM(t.gpu_ns), 0) AS traffic_bytes_per_s,
  -- Against the capture GPU's datasheet memory bandwidth (guide.hardware).
  100.0 * 1e9 * SUM(t.read_bytes + t.write_bytes) / NULLIF(SUM(t.gpu_ns), 0)
    / guide_hardware_peak_bytes_per_s() AS bandwidth_peak_pct
FROM t
LEFT JOIN family AS f ON f.op_id = t.op_id
GROUP BY t.k
ORDER BY t.k;
