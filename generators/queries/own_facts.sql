-- How many rows the tables a query starts from hold, and the numbers the page's prose cites
-- output: values
-- question_ja: クエリの出発点になるテーブルの行数と、ページの本文が引用する数値
INCLUDE PERFETTO MODULE guide.windows;

WITH steps AS (SELECT ts, dur FROM slice WHERE name GLOB 'ProfilerStep#*')
SELECT
  (SELECT COUNT(*) FROM slice) AS slices,
  (SELECT COUNT(*) FROM thread_track) AS thread_tracks,
  -- Slices on a track that is no thread's (Kineto's global instant markers).
  (SELECT COUNT(*) FROM slice WHERE track_id NOT IN (SELECT id FROM thread_track))
    AS off_thread_slices,
  (SELECT COUNT(*) FROM flow) AS flows,
  (SELECT COUNT(*) FROM counter) AS counters,
  (SELECT COUNT(*) FROM steps) AS steps,
  (SELECT dur FROM steps ORDER BY ts LIMIT 1) AS first_step_ns,
  (SELECT MIN(dur) FROM steps) AS shortest_step_ns,
  (SELECT ROUND(100.0 * busy_ns / dur, 1) FROM guide_windows_step_busy ORDER BY step LIMIT 1)
    AS first_busy_pct;
