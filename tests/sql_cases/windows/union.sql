-- trace: mini:cpu_only.json
-- what: the union of intervals on literal rows: overlapping, nested, touching, disjoint and NULL intervals
INCLUDE PERFETTO MODULE guide.windows;
WITH iv(group_id, ts, dur) AS (
  VALUES
    (1, 0, 10), (1, 5, 10),                -- overlap: 15
    (2, 0, 100), (2, 10, 5), (2, 50, 20),  -- nested in the first: 100
    (3, 0, 10), (3, 10, 10),               -- touching: 20
    (4, 0, 10), (4, 30, 10),               -- disjoint: 20
    (5, 0, 10), (5, NULL, 10), (5, 3, NULL) -- NULLs left out: 10
)
SELECT group_id, intervals, busy_ns FROM guide_windows_union!(iv) ORDER BY group_id;
