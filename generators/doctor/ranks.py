"""The doctor across the ranks of one distributed job: each rank's trace on its own, then the
rows those traces give compared side by side.

Which traces are ranks of one job is read from each file's opening (Kineto's ``distributedInfo``:
the same backend and world size, a different rank each), or said by the reader (``--ranks``).
Each rank's trace is opened on its own (in worker processes, :func:`generators.parallel.run_each`)
and asked two things from the ``guide`` SQL package: its step loop in a few numbers
(``guide_ranks_rank``) and its communication kernels (``guide_comm_kernel``). Only those rows meet:
they are put into a trace processor holding no trace, whose ``guide.ranks`` module matches the
collectives across the ranks and measures who waited for whom (``guide_ranks_collective``,
``guide_ranks_arrival``, ``guide_ranks_wait``). Every time is a union of intervals, never a sum of
durations that may overlap.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generators.doctor.trust import distributed_info
from generators.tp import open_trace, rows_of

#: What the doctor asks each rank's trace (after its detectors ran on it).
RANK_SQL = "INCLUDE PERFETTO MODULE guide.ranks; SELECT * FROM guide_ranks_rank"
KERNELS_SQL = (
    "INCLUDE PERFETTO MODULE guide.comm; "
    "SELECT process_group, kind, seq, ts, dur FROM guide_comm_kernel ORDER BY ts, id"
)
#: The cross-rank questions, asked of the gathered rows.
COLLECTIVES_SQL = """
SELECT process_group, kind, seq, ranks, expected, first_ts, spread_ns, straggler, aligned
FROM guide_ranks_collective
ORDER BY first_ts, kind, seq
"""
ARRIVALS_SQL = """
SELECT rank, process_group, kind, seq, offset_ns, wait_ns FROM guide_ranks_arrival
ORDER BY rank
"""
WAIT_SQL = "SELECT * FROM guide_ranks_wait ORDER BY rank"

#: Unbucketed all-reduces: at least this many all-reduce kernels per step...
UNBUCKETED_MIN_PER_STEP = 20
#: ...of a median size under this (bytes; DDP's buckets hold 25 MiB each)...
UNBUCKETED_MAX_MEDIAN_BYTES = 1 << 20
#: ...or, where the trace does not record sizes, of a median duration under this (ns).
UNBUCKETED_MAX_MEDIAN_NS = 100_000
#: Rows gathered into one INSERT statement.
_INSERT_ROWS = 500


@dataclass(frozen=True)
class Job:
    """Whether the traces named are the ranks of one job, and why (or why not)."""

    #: True: a cross-rank section follows.
    is_job: bool
    #: Why, or why not, in English and Japanese.
    reason: str
    reason_ja: str
    #: The rank of each trace, in the order named (empty when not a job).
    ranks: tuple[int, ...] = ()
    world_size: int | None = None
    backend: str | None = None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def job_of(paths: Sequence[Path], *, forced: bool = False) -> Job | None:
    """Whether ``paths`` are the ranks of one job: every trace states a ``distributedInfo``
    block with the same backend, world size (and number of process groups, where stated) and a
    rank of its own; or ``forced`` (the reader said so: ranks from the traces where they are
    stated and distinct, else in the order named). None when the question does not arise: one
    trace, or several of which none states a rank of a job of more than one."""
    infos = [distributed_info(p) or {} for p in paths]
    stated = [_int(i.get("rank")) for i in infos]
    sizes = {_int(i.get("world_size")) for i in infos}
    if len(paths) < 2:
        if forced:
            return Job(
                False,
                "No cross-rank section: it compares two or more ranks' traces, and one was named.",
                "ランク間の比較はありません。比較には 2 つ以上のランクのトレースが必要ですが、"
                "指定されたのは 1 つです。",
            )
        return None
    world = next(iter(sizes)) if len(sizes) == 1 else None
    backends = {i.get("backend") for i in infos}
    backend = next(iter(backends)) if len(backends) == 1 else None
    distinct = None not in stated and len(set(stated)) == len(stated)
    if forced:
        ranks = tuple(stated) if distinct else tuple(range(len(paths)))
        how = "their distributedInfo" if distinct else "the order named"
        how_ja = "distributedInfo" if distinct else "指定された順"
        return Job(
            True,
            f"Compared as ranks of one job because --ranks says so (ranks from {how}).",
            f"--ranks の指定により、1 つのジョブのランクとして比較します（ランクは{how_ja}から）。",
            ranks,
            world,
            backend if isinstance(backend, str) else None,
        )
    if not any(s and s > 1 for s in sizes if s is not None):
        return None
    n = len(paths)
    missing = sum(1 for s in stated if s is None)
    why: tuple[str, str] | None = None
    if missing:
        why = (
            f"{missing} of the {n} traces state{'s' if missing == 1 else ''} no rank "
            "(Kineto's distributedInfo)",
            f"{n} 個のトレースのうち {missing} 個がランクを記録していません"
            "（Kineto の distributedInfo）",
        )
    elif world is None or backend is None:
        why = (
            "the traces state different world sizes or backends: they are ranks of different jobs",
            "トレースの world size かバックエンドが異なります。別々のジョブのランクです",
        )
    elif len({repr(i.get("pg_count")) for i in infos if "pg_count" in i}) > 1:
        why = (
            "the traces state different numbers of process groups: they are ranks of "
            "different jobs",
            "トレースのプロセスグループの数が異なります。別々のジョブのランクです",
        )
    elif not distinct:
        why = (
            "two traces state the same rank: they are not ranks of one run",
            "2 つのトレースが同じランクを記録しています。1 回の実行のランクではありません",
        )
    if why:
        return Job(
            False,
            f"No cross-rank section: {why[0]}. Name one job's ranks only, or pass --ranks to "
            "compare them anyway.",
            f"ランク間の比較はありません。{why[1]}。1 つのジョブのランクだけを指定するか、"
            "それでも比較するには --ranks を付けてください。",
        )
    return Job(
        True,
        f"The traces are ranks {', '.join(map(str, sorted(stated)))} of a job of {world} "
        f"({backend}), as their distributedInfo states.",
        f"distributedInfo によると、これらのトレースは {world} ランク（{backend}）のジョブの"
        f"ランク {', '.join(map(str, sorted(stated)))} です。",
        tuple(stated),  # type: ignore[arg-type]
        world,
        backend,
    )


@dataclass
class RankRows:
    """What one rank's trace gives the cross-rank section: its loop in numbers
    (``guide_ranks_rank``) and its communication kernels (``guide_comm_kernel``)."""

    summary: dict[str, Any]
    kernels: list[list[Any]]


def rank_rows(tp: Any) -> RankRows:
    """Ask an opened trace (after the doctor's detectors ran on it) for its rank's rows."""
    cols, rows = rows_of(tp, RANK_SQL)
    _, kernels = rows_of(tp, KERNELS_SQL)
    return RankRows(dict(zip(cols, rows[0], strict=True)), kernels)


@dataclass
class RankEntry:
    """One rank in the cross-rank section."""

    rank: int
    trace: str
    steps: int
    step_ns: int | None
    loop_ns: int
    busy_ns: int | None
    comm_ns: int
    exposed_ns: int
    comm_kernels: int
    collectives: int
    aligned: int
    wait_ns: int
    last_arrivals: int
    late_ns: int
    all_reduces: int
    all_reduce_median_ns: int | None
    all_reduce_median_bytes: int | None

    @property
    def busy_pct(self) -> float | None:
        if self.busy_ns is None or not self.loop_ns:
            return None
        return 100 * self.busy_ns / self.loop_ns

    @property
    def exposed_pct(self) -> float | None:
        """Exposed communication as a share of the loop."""
        return 100 * self.exposed_ns / self.loop_ns if self.loop_ns else None

    @property
    def all_reduces_per_step(self) -> float:
        return self.all_reduces / self.steps if self.steps else float(self.all_reduces)

    @property
    def unbucketed(self) -> bool:
        """Many small all-reduces per step: gradients sent tensor by tensor, not in buckets."""
        if self.all_reduces_per_step < UNBUCKETED_MIN_PER_STEP:
            return False
        if self.all_reduce_median_bytes is not None:
            return self.all_reduce_median_bytes < UNBUCKETED_MAX_MEDIAN_BYTES
        return (self.all_reduce_median_ns or 0) < UNBUCKETED_MAX_MEDIAN_NS

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "trace": self.trace,
            "steps": self.steps,
            "step_ns": self.step_ns,
            "loop_ns": self.loop_ns,
            "gpu_busy_ns": self.busy_ns,
            "gpu_busy_pct": _round(self.busy_pct),
            "comm_ns": self.comm_ns,
            "exposed_comm_ns": self.exposed_ns,
            "exposed_comm_pct_of_loop": _round(self.exposed_pct),
            "comm_kernels": self.comm_kernels,
            "collectives": self.collectives,
            "collectives_aligned": self.aligned,
            "collective_wait_ns": self.wait_ns,
            "last_arrivals": self.last_arrivals,
            "late_ns": self.late_ns,
            "all_reduces": self.all_reduces,
            "all_reduces_per_step": _round(self.all_reduces_per_step),
            "all_reduce_median_ns": self.all_reduce_median_ns,
            "all_reduce_median_bytes": self.all_reduce_median_bytes,
            "unbucketed_all_reduces": self.unbucketed,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


@dataclass
class Collective:
    """One collective matched across the ranks."""

    process_group: str | None
    kind: str
    seq: int
    ranks: int
    expected: int
    aligned: bool
    spread_ns: int
    straggler: int
    #: Each rank's arrival after the first (ns).
    arrivals: dict[int, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "process_group": self.process_group,
            "kind": self.kind,
            "seq": self.seq,
            "ranks": self.ranks,
            "ranks_expected": self.expected,
            "aligned": self.aligned,
            "spread_ns": self.spread_ns,
            "straggler": self.straggler,
            "arrival_after_first_ns": {str(r): ns for r, ns in sorted(self.arrivals.items())},
        }


@dataclass
class CrossRank:
    """The cross-rank section."""

    job: Job
    ranks: list[RankEntry]
    collectives: list[Collective]

    @property
    def aligned(self) -> list[Collective]:
        return [c for c in self.collectives if c.aligned]

    @property
    def stragglers(self) -> list[Collective]:
        """Aligned collectives, the widest spread first."""
        return sorted(self.aligned, key=lambda c: (-c.spread_ns, c.kind, c.seq))

    @property
    def unbucketed(self) -> list[RankEntry]:
        return [r for r in self.ranks if r.unbucketed]

    def to_json(self) -> dict[str, Any]:
        return {
            "job": {
                "world_size": self.job.world_size,
                "backend": self.job.backend,
                "why": self.job.reason,
                "collectives": len(self.collectives),
                "collectives_aligned": len(self.aligned),
                "unbucketed_thresholds": {
                    "all_reduces_per_step_min": UNBUCKETED_MIN_PER_STEP,
                    "median_bytes_under": UNBUCKETED_MAX_MEDIAN_BYTES,
                    "median_ns_under_without_sizes": UNBUCKETED_MAX_MEDIAN_NS,
                },
            },
            "ranks": [r.to_json() for r in self.ranks],
            "collectives": [c.to_json() for c in self.collectives],
            "unbucketed_all_reduces": [r.rank for r in self.unbucketed],
        }


def _sql_value(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"unexpected value {value!r}")
    if isinstance(value, int):
        return str(value)
    return "'" + value.replace("\x00", "").replace("'", "''")[:256] + "'"


def _insert(table: str, rows: list[tuple[Any, ...]]) -> list[str]:
    """INSERT statements for ``rows`` (a trace's strings quoted as literals, never spliced)."""
    out = []
    for i in range(0, len(rows), _INSERT_ROWS):
        values = ", ".join(
            "(" + ", ".join(_sql_value(v) for v in row) + ")" for row in rows[i : i + _INSERT_ROWS]
        )
        out.append(f"INSERT INTO {table} VALUES {values}")
    return out


def cross_rank(
    job: Job, paths: Sequence[Path], rows: Sequence[RankRows], **options: Any
) -> CrossRank:
    """Compare the ranks: ``rows[i]`` is the rank ``job.ranks[i]``'s, read from ``paths[i]``.
    ``options`` go to :func:`generators.tp.open_trace` (the engine)."""
    member = [(rank,) for rank in job.ranks]
    gathered = [
        (rank, k[0], k[1], k[2], k[3], k[4])
        for rank, r in zip(job.ranks, rows, strict=True)
        for k in r.kernels
    ]
    with tempfile.TemporaryDirectory() as tmp:
        # A trace processor with no trace: a SQL engine for the gathered rows.
        empty = Path(tmp) / "no-trace.json"
        empty.write_text('{"traceEvents": []}', encoding="utf-8")
        with open_trace(empty, allow_empty=True, client="light", **options) as tp:
            tp.query("CREATE TABLE guide_ranks_member(rank INT)")
            tp.query(
                "CREATE TABLE guide_ranks_gathered("
                "rank INT, process_group TEXT, kind TEXT, seq INT, ts INT, dur INT)"
            )
            for sql in _insert("guide_ranks_member", member) + _insert(
                "guide_ranks_gathered", gathered
            ):
                tp.query(sql)
            tp.query("INCLUDE PERFETTO MODULE guide.ranks")
            cols, coll_rows = rows_of(tp, COLLECTIVES_SQL)
            acols, arrival_rows = rows_of(tp, ARRIVALS_SQL)
            wcols, wait_rows = rows_of(tp, WAIT_SQL)
    collectives = {}
    for row in coll_rows:
        c = dict(zip(cols, row, strict=True))
        key = (c["process_group"], c["kind"], c["seq"])
        collectives[key] = Collective(
            c["process_group"],
            c["kind"],
            int(c["seq"]),
            int(c["ranks"]),
            int(c["expected"]),
            bool(c["aligned"]),
            int(c["spread_ns"]),
            int(c["straggler"]),
        )
    for row in arrival_rows:
        a = dict(zip(acols, row, strict=True))
        collectives[(a["process_group"], a["kind"], a["seq"])].arrivals[int(a["rank"])] = int(
            a["offset_ns"]
        )
    waits = {int(w[0]): dict(zip(wcols, w, strict=True)) for w in wait_rows}
    entries = []
    for rank, path, r in zip(job.ranks, paths, rows, strict=True):
        s, w = r.summary, waits[rank]
        entries.append(
            RankEntry(
                rank=rank,
                trace=str(path),
                steps=int(s["steps"]),
                step_ns=s["step_ns"],
                loop_ns=int(s["loop_ns"] or 0),
                busy_ns=s["busy_ns"],
                comm_ns=int(s["comm_ns"]),
                exposed_ns=int(s["exposed_ns"]),
                comm_kernels=int(s["comm_kernels"]),
                collectives=int(w["collectives"]),
                aligned=int(w["aligned"]),
                wait_ns=int(w["wait_ns"]),
                last_arrivals=int(w["last_arrivals"]),
                late_ns=int(w["late_ns"]),
                all_reduces=int(s["all_reduces"]),
                all_reduce_median_ns=s["all_reduce_median_ns"],
                all_reduce_median_bytes=s["all_reduce_median_bytes"],
            )
        )
    entries.sort(key=lambda e: e.rank)
    return CrossRank(job, entries, list(collectives.values()))


def unread_rank(job: Job, paths: Sequence[Path], failed: Sequence[int]) -> Job:
    """The plain answer when a rank's trace could not be read: no cross-rank section."""
    names = ", ".join(f"rank {job.ranks[i]} ({paths[i]})" for i in failed)
    names_ja = "、".join(f"ランク {job.ranks[i]}（{paths[i]}）" for i in failed)
    return Job(
        False,
        f"No cross-rank section: the trace of {names} could not be read (see the error above), "
        "and the ranks can only be compared whole.",
        f"ランク間の比較はありません。{names_ja} のトレースを読めませんでした（上のエラーを"
        "見てください）。ランクの比較は全ランクがそろって初めてできます。",
        job.ranks,
        job.world_size,
        job.backend,
    )


def examine_ranks(
    traces: Sequence[Path],
    job: Job,
    *,
    only: tuple[str, ...] | None = None,
    overrides: dict[str, dict[str, float]] | None = None,
    tp_bin: str | None = None,
    engine: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[Any], CrossRank | Job, list[str]]:
    """The doctor on each rank's trace, in worker processes (as many as
    :func:`generators.parallel.worker_count` allows), then the ranks compared: the reports, the
    cross-rank section (or, where a rank's trace could not be read, the plain reason there is
    none) and the errors, each naming its file."""
    from generators.doctor.examine import TraceTask, examine_in_worker
    from generators.doctor.tuning import engine_options
    from generators.parallel import run_each

    say = progress or (lambda message: None)
    tasks = [
        TraceTask(Path(path), f"t{n}", rank_rows, only, overrides, tp_bin, engine)
        for n, path in enumerate(traces, 1)
    ]
    finished = 0

    def done(task: Any) -> None:
        nonlocal finished
        finished += 1
        say(f"[{finished}/{len(tasks)}] examined {task.path}")

    say(f"{len(tasks)} ranks of one job: each trace on its own, then compared")
    weight = lambda task: task.path.stat().st_size if task.path.is_file() else 0  # noqa: E731
    results = list(run_each(examine_in_worker, tasks, weight=weight, done=done))
    errors = [r.error for r in results if r.error is not None]
    reports = [r.report for r in results if r.report is not None]
    unread = [i for i, r in enumerate(results) if r.error is not None]
    if unread:
        return reports, unread_rank(job, traces, unread), errors
    say("comparing the ranks")
    rows = [r.rows for r in results]
    # Tuned as for the first trace: the engine the command line started early for it serves.
    options = engine_options(traces[0])
    if engine or tp_bin:
        options["engine"] = engine
    cross = cross_rank(job, traces, rows, bin_path=tp_bin, **options)
    return reports, cross, errors
