-- The ranks of one distributed job, each profiled into its own trace: what each rank's step
-- looked like, and, across the ranks, who arrived late at each collective.
--
-- Two halves. guide_ranks_rank runs on each rank's trace (one row per trace). The cross-rank
-- objects run on the rows gathered from every rank's trace (guide_comm_kernel's), which the caller
-- puts into guide_ranks_member and guide_ranks_gathered before including this module: every
-- rank's trace is opened on its own (in parallel, or on a batch trace processor), and only those
-- rows meet. Every time below is a union of intervals (guide_windows_union), never a sum of
-- durations that may overlap.
INCLUDE PERFETTO MODULE guide.comm;
INCLUDE PERFETTO MODULE guide.windows;

-- One rank's step loop (guide_windows_real_loop: the profiled steps less their stubs, or the
-- whole trace without steps) in a few numbers: the step time, how busy the GPU was, and how much
-- of its communication no compute overlapped. One row.
CREATE PERFETTO VIEW guide_ranks_rank(
  -- Real profiled steps (0 for a trace without step markers: then the loop is the whole trace).
  steps LONG,
  -- The loop's width: the union of its windows (ns).
  loop_ns DURATION,
  -- The mean width of a real step (ns): loop_ns / steps; NULL without steps.
  step_ns DURATION,
  -- GPU busy time inside the loop (guide_windows_loop_busy over its windows, which do not
  -- overlap); NULL on a CPU-only trace.
  busy_ns DURATION,
  -- Communication time inside the loop: the union of the communication kernels (guide_comm_exposed).
  comm_ns DURATION,
  -- Of that, the time no compute kernel on the same GPU overlapped (guide_comm_exposed).
  exposed_ns DURATION,
  -- Communication kernels that ran in the loop.
  comm_kernels LONG,
  -- All-reduce kernels that ran in the loop.
  all_reduces LONG,
  -- The median duration of those all-reduce kernels (ns); NULL without any.
  all_reduce_median_ns DURATION,
  -- The median size of those all-reduces (bytes per rank), over those whose size the trace
  -- records; NULL where it records none.
  all_reduce_median_bytes LONG
) AS
WITH
  loop AS MATERIALIZED (SELECT window_id, step, ts, dur FROM guide_windows_real_loop),
  span AS (
    SELECT busy_ns AS loop_ns
    FROM guide_windows_union!((SELECT 0 AS group_id, ts, dur FROM loop))
  ),
  busy AS (
    SELECT SUM(busy_ns) AS busy_ns FROM guide_windows_loop_busy
    WHERE window_id IN (SELECT window_id FROM loop)
  ),
  comm AS MATERIALIZED (SELECT * FROM guide_comm_exposed!(loop)),
  ar AS MATERIALIZED (
    SELECT dur, msg_bytes FROM guide_comm_kernel
    WHERE kind = 'all_reduce' AND id IN (SELECT id FROM comm)
  ),
  -- Medians: the middle row (the upper one of two).
  ar_dur AS (
    SELECT dur FROM (
      SELECT dur, ROW_NUMBER() OVER (ORDER BY dur) AS k, COUNT(*) OVER () AS m FROM ar
    ) WHERE k = m / 2 + 1
  ),
  ar_bytes AS (
    SELECT msg_bytes FROM (
      SELECT msg_bytes, ROW_NUMBER() OVER (ORDER BY msg_bytes) AS k, COUNT(*) OVER () AS m
      FROM ar WHERE msg_bytes IS NOT NULL
    ) WHERE k = m / 2 + 1
  )
SELECT
  (SELECT COUNT(step) FROM loop) AS steps,
  span.loop_ns,
  IIF((SELECT COUNT(step) FROM loop) > 0, span.loop_ns / (SELECT COUNT(step) FROM loop), NULL)
    AS step_ns,
  (SELECT busy_ns FROM busy) AS busy_ns,
  (SELECT COALESCE(SUM(comm_ns), 0) FROM comm) AS comm_ns,
  (SELECT COALESCE(SUM(exposed_ns), 0) FROM comm) AS exposed_ns,
  (SELECT COUNT(DISTINCT id) FROM comm) AS comm_kernels,
  (SELECT COUNT(*) FROM ar) AS all_reduces,
  (SELECT dur FROM ar_dur) AS all_reduce_median_ns,
  (SELECT msg_bytes FROM ar_bytes) AS all_reduce_median_bytes
FROM span;

-- The ranks of the job, one row each: filled by the caller before the module is included
-- (created here empty otherwise).
CREATE TABLE IF NOT EXISTS guide_ranks_member(rank INT);

-- Every rank's communication kernels (guide_comm_kernel's process_group, kind, seq, ts and dur,
-- read from each rank's trace), filled by the caller before the module is included (created here
-- empty otherwise).
CREATE TABLE IF NOT EXISTS guide_ranks_gathered(
  rank INT, process_group TEXT, kind TEXT, seq INT, ts INT, dur INT
);

-- Each collective of the job, matched across the ranks by its process group, kind and place
-- (the n-th all-reduce of a group on one rank is the n-th on every other): when each rank's
-- kernel started (its arrival), the spread between the first and the last, and the rank that came
-- last. A collective's kernels end together on every rank, since none can finish before the last
-- rank joins; so where they do not all overlap in time, the match is wrong (a trace with events
-- missing) or the ranks' clocks disagree, and the collective is not aligned.
CREATE PERFETTO TABLE guide_ranks_collective(
  -- Process group (NULL where the traces do not record it).
  process_group STRING,
  -- The collective (guide_comm_kind).
  kind STRING,
  -- Its place among the group's collectives of that kind (1 = first).
  seq LONG,
  -- Ranks that ran it.
  ranks LONG,
  -- Ranks that ran any collective of the group.
  expected LONG,
  -- The first rank's arrival: its kernel's start (ns).
  first_ts TIMESTAMP,
  -- The last rank's arrival (ns).
  last_ts TIMESTAMP,
  -- How long after the first rank the last one arrived (ns).
  spread_ns DURATION,
  -- The rank that arrived last (the lowest such rank on a tie).
  straggler LONG,
  -- The earliest end of the collective's kernels (ns).
  first_end_ts TIMESTAMP,
  -- Whether every rank of the group ran it and all its kernels overlap in time (last_ts before
  -- first_end_ts): only then are its arrivals compared.
  aligned BOOL
) AS
WITH
  expected AS (
    SELECT process_group, COUNT(DISTINCT rank) AS expected
    FROM guide_ranks_gathered GROUP BY process_group
  ),
  ranked AS (
    SELECT
      g.*,
      ROW_NUMBER() OVER (
        PARTITION BY g.process_group, g.kind, g.seq ORDER BY g.ts DESC, g.rank
      ) AS late_order
    FROM guide_ranks_gathered AS g
  ),
  grouped AS (
    SELECT
      process_group, kind, seq,
      COUNT(*) AS ranks,
      MIN(ts) AS first_ts,
      MAX(ts) AS last_ts,
      MAX(IIF(late_order = 1, rank, NULL)) AS straggler,
      MIN(ts + dur) AS first_end_ts
    FROM ranked
    GROUP BY process_group, kind, seq
  )
SELECT
  g.process_group, g.kind, g.seq, g.ranks, e.expected, g.first_ts, g.last_ts,
  g.last_ts - g.first_ts AS spread_ns,
  g.straggler,
  g.first_end_ts,
  g.ranks = e.expected AND g.ranks > 1 AND g.last_ts < g.first_end_ts AS aligned
FROM grouped AS g
JOIN expected AS e ON e.process_group IS g.process_group;

-- Each rank's arrival at each collective (guide_ranks_collective): how long after the first rank,
-- and how long it then waited for the last one.
CREATE PERFETTO VIEW guide_ranks_arrival(
  -- The rank.
  rank LONG,
  -- Process group of the collective.
  process_group STRING,
  -- The collective's kind.
  kind STRING,
  -- Its place among the group's collectives of that kind.
  seq LONG,
  -- The rank's arrival: its kernel's start (ns).
  ts TIMESTAMP,
  -- How long after the first rank it arrived (ns).
  offset_ns DURATION,
  -- How long its kernel waited for the last rank to arrive (ns): from its start to the last
  -- arrival (or its own end, if sooner); NULL for a collective that is not aligned.
  wait_ns DURATION
) AS
SELECT
  g.rank, g.process_group, g.kind, g.seq, g.ts,
  g.ts - c.first_ts AS offset_ns,
  IIF(c.aligned, MAX(MIN(g.ts + g.dur, c.last_ts) - g.ts, 0), NULL) AS wait_ns
FROM guide_ranks_gathered AS g
JOIN guide_ranks_collective AS c
  ON c.process_group IS g.process_group AND c.kind = g.kind AND c.seq = g.seq;

-- Each rank's time waiting in collectives, and how often the others waited for it, over the
-- aligned collectives (guide_ranks_collective).
CREATE PERFETTO TABLE guide_ranks_wait(
  -- The rank (every row of guide_ranks_member).
  rank LONG,
  -- Collectives the rank ran.
  collectives LONG,
  -- Of those, the aligned ones.
  aligned LONG,
  -- Time its communication kernels waited for the last rank to arrive: the union of the waits
  -- (guide_ranks_arrival.wait_ns) over the aligned collectives (ns).
  wait_ns DURATION,
  -- Aligned collectives at which it arrived last.
  last_arrivals LONG,
  -- Time the first rank waited for it: the union of the spreads of the aligned collectives at
  -- which it arrived last (ns).
  late_ns DURATION
) AS
WITH
  arrivals AS MATERIALIZED (
    SELECT a.rank, a.ts, a.wait_ns, c.aligned, c.straggler, c.first_ts, c.last_ts
    FROM guide_ranks_arrival AS a
    JOIN guide_ranks_collective AS c
      ON c.process_group IS a.process_group AND c.kind = a.kind AND c.seq = a.seq
  ),
  waited AS (
    SELECT * FROM guide_windows_union!(
      (SELECT rank AS group_id, ts, wait_ns AS dur FROM arrivals WHERE aligned AND wait_ns > 0)
    )
  ),
  late AS (
    SELECT * FROM guide_windows_union!(
      (
        SELECT rank AS group_id, first_ts AS ts, last_ts - first_ts AS dur FROM arrivals
        WHERE aligned AND straggler = rank AND last_ts > first_ts
      )
    )
  ),
  counts AS (
    SELECT rank, COUNT(*) AS collectives, SUM(aligned) AS aligned,
      SUM(aligned AND straggler = rank) AS last_arrivals
    FROM arrivals GROUP BY rank
  )
SELECT
  m.rank,
  COALESCE(n.collectives, 0) AS collectives,
  COALESCE(n.aligned, 0) AS aligned,
  COALESCE(w.busy_ns, 0) AS wait_ns,
  COALESCE(n.last_arrivals, 0) AS last_arrivals,
  COALESCE(l.busy_ns, 0) AS late_ns
FROM guide_ranks_member AS m
LEFT JOIN counts AS n ON n.rank = m.rank
LEFT JOIN waited AS w ON w.group_id = m.rank
LEFT JOIN late AS l ON l.group_id = m.rank;
