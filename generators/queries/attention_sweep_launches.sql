-- In the sweep, which operators launch more than one kernel per call, and how large is the largest tensor they touch?
-- output: table
-- needs: cuda
-- columns: impl=Implementation, seq=Sequence length, name=Operator, kernels_per_call=Kernels per call, kernel_names=Kernels, largest_input_bytes=Largest input
-- question_ja: スイープで、1 回の呼び出しで複数のカーネルを起動する演算子はどれか、また扱う最大のテンソルはどれだけ大きいか
-- columns_ja: impl=実装, seq=系列長, name=演算子, kernels_per_call=呼び出し 1 回あたりのカーネル数, kernel_names=カーネル, largest_input_bytes=最大の入力
INCLUDE PERFETTO MODULE guide.attention;
INCLUDE PERFETTO MODULE guide.traffic;

-- An operator that launches several kernels in one call at some lengths and one at others has
-- split its work; the size of its largest input says why (a tensor past what 32-bit offsets
-- address, or too few blocks to fill the GPU). Memsets are left out: a GEMM's workspace clear
-- is not a split.
WITH
  fwd AS (SELECT * FROM guide_attention_forward WHERE impl IS NOT NULL),
  k AS (
    SELECT w.region_id, w.op_id, w.op_name, w.name
    FROM guide_attention_work_in!(fwd) AS w
    WHERE w.category = 'kernel'
  ),
  per_call AS (
    SELECT region_id, op_id, MIN(op_name) AS name, COUNT(*) AS n
    FROM k
    GROUP BY region_id, op_id
    HAVING COUNT(*) > 1
  ),
  largest AS (
    SELECT
      p.op_id,
      MAX(
        COALESCE(guide_traffic_input_bytes(s.arg_set_id, 0), 0),
        COALESCE(guide_traffic_input_bytes(s.arg_set_id, 1), 0),
        COALESCE(guide_traffic_input_bytes(s.arg_set_id, 2), 0),
        COALESCE(guide_traffic_input_bytes(s.arg_set_id, 3), 0)
      ) AS bytes
    FROM per_call AS p
    JOIN slice AS s ON s.id = p.op_id
  ),
  -- The distinct kernels of such calls, each shortened to its name without template arguments.
  names AS (
    SELECT DISTINCT
      f.impl,
      f.seq,
      p.name AS op_name,
      CASE WHEN instr(k.name, '<') > 0 THEN substr(k.name, 1, instr(k.name, '<') - 1)
        ELSE k.name END AS short
    FROM per_call AS p
    JOIN fwd AS f ON f.id = p.region_id
    JOIN k ON k.op_id = p.op_id
  )
SELECT
  f.impl,
  f.seq,
  p.name,
  1.0 * SUM(p.n) / COUNT(*) AS kernels_per_call,
  (
    SELECT GROUP_CONCAT(n.short, '; ') FROM names AS n
    WHERE n.impl = f.impl AND n.seq = f.seq AND n.op_name = p.name
  ) AS kernel_names,
  MAX(l.bytes) AS largest_input_bytes
FROM per_call AS p
JOIN fwd AS f ON f.id = p.region_id
JOIN largest AS l ON l.op_id = p.op_id
GROUP BY f.impl, f.seq, p.name
ORDER BY f.impl, f.seq, MIN(p.op_id);
