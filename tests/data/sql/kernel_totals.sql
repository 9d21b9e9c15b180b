-- Test-only module: GPU kernel count and total duration, per kernel name.
CREATE PERFETTO TABLE kernel_totals(name STRING, n LONG, total_dur LONG) AS
SELECT s.name AS name, COUNT(*) AS n, SUM(s.dur) AS total_dur
FROM slice s
JOIN args a ON a.arg_set_id = s.arg_set_id AND a.key = 'args.correlation'
WHERE s.category = 'kernel'
GROUP BY s.name;
