"""The doctor across the ranks of one job: which traces are one job's ranks, the cross-rank section
against an independent count from the JSON (Holistic Trace Analysis's sampled rank 0 and rank 1
of a 128-rank job) and against the hand-written two-rank job in tests/data/doctor-traces/ (every
number there worked out by hand), its four formats in both languages with every name escaped,
and bad input. Each trace is opened once in this module, but for the command line's own runs on
the small hand-written ones.
"""

from __future__ import annotations

import gzip
import html
import json
from pathlib import Path

import pytest

from generators.doctor.ranks import CrossRank, Job, examine_ranks, job_of
from generators.doctor.render import render_html, render_json, render_markdown, render_text
from tests import reference_traces as ref
from tests.doctor_cli import run_doctor

REPO = Path(__file__).resolve().parent.parent
SYNTHETIC = REPO / "tests" / "data" / "doctor-traces"
JOB = [SYNTHETIC / "job-rank-0.json", SYNTHETIC / "job-rank-1.json"]
HTA = [ref.GPU_UNLISTED, ref.GPU_UNLISTED_RANK_1]
#: The hand-written job's process group: markup, a pipe and Markdown (make_traces.py).
HOSTILE_GROUP = "0<script>alert('pg')</script>|*x*"


def _union(intervals: list[tuple[float, float]]) -> list[list[float]]:
    out: list[list[float]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def _overlap(a: list[list[float]], b: list[list[float]]) -> float:
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(hi - lo, 0)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def exposed_from_json(path: Path) -> float:
    """Exposed communication (ns), read from the JSON in Python, not by the guide's SQL: per
    device, the union of the NCCL kernels less its overlap with the union of the other kernels."""
    with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    total = 0.0
    for device in {e["args"]["device"] for e in kernels}:
        on = [e for e in kernels if e["args"]["device"] == device]
        comm = _union([(e["ts"], e["ts"] + e["dur"]) for e in on if "nccl" in e["name"].lower()])
        compute = _union(
            [(e["ts"], e["ts"] + e["dur"]) for e in on if "nccl" not in e["name"].lower()]
        )
        total += sum(e - s for s, e in comm) - _overlap(comm, compute)
    return total * 1000


@pytest.fixture(scope="module")
def hta() -> tuple[list, CrossRank]:
    job = job_of(HTA)
    assert job is not None and job.is_job, job
    reports, cross, errors = examine_ranks(HTA, job)
    assert errors == [] and isinstance(cross, CrossRank)
    return reports, cross


@pytest.fixture(scope="module")
def handmade() -> tuple[list, CrossRank]:
    job = job_of(JOB)
    assert job is not None and job.is_job
    reports, cross, errors = examine_ranks(JOB, job)
    assert errors == [] and isinstance(cross, CrossRank)
    return reports, cross


def test_exposed_communication_agrees_with_the_json(hta) -> None:
    """HTA's sampled ranks: exposed communication per rank within 1 % of the count from the JSON
    (about 337 ms and 304 ms). Every communication kernel lies inside the two profiled steps, so
    the section's loop holds all of them."""
    _, cross = hta
    assert [r.rank for r in cross.ranks] == [0, 1]
    for entry, path in zip(cross.ranks, HTA, strict=True):
        expected = exposed_from_json(path)
        assert entry.exposed_ns == pytest.approx(expected, rel=0.01), path.name
        assert entry.comm_kernels == 10 and entry.steps == 2
    assert 336e6 < cross.ranks[0].exposed_ns < 338e6
    assert 303e6 < cross.ranks[1].exposed_ns < 305e6


def test_the_sampled_ranks_collectives(hta) -> None:
    """Sampling dropped events, so matching by order pairs some different collectives: those do
    not overlap in time and are left out; at the four that do, rank 1 came last."""
    _, cross = hta
    assert len(cross.collectives) == 10 and len(cross.aligned) == 4
    assert {c.kind for c in cross.collectives} == {"send_recv"}
    assert {c.straggler for c in cross.aligned} == {1}
    worst = cross.stragglers[0]
    assert worst.seq == 9 and worst.arrivals == {0: 0, 1: worst.spread_ns}
    assert cross.ranks[1].last_arrivals == 4 and cross.ranks[1].wait_ns == 0
    # Rank 0 waited at each aligned collective from its start to rank 1's (or its own end).
    assert 0 < cross.ranks[0].wait_ns <= sum(c.spread_ns for c in cross.aligned)
    assert cross.unbucketed == [] and all(r.all_reduces == 0 for r in cross.ranks)


def test_the_handmade_job_by_hand(handmade) -> None:
    """Every number of make_traces.py's two-rank job, worked out by hand (µs): 2 steps of
    10,000; 24 all-reduces a step, 18 of them alone; rank 0's run 70, rank 1's 50, 20 later."""
    _, cross = handmade
    r0, r1 = cross.ranks
    assert (r0.steps, r0.step_ns, r1.step_ns) == (2, 10_000_000, 10_000_000)
    assert (r0.comm_ns, r0.exposed_ns) == (48 * 70_000, 36 * 70_000)
    assert (r1.comm_ns, r1.exposed_ns) == (48 * 50_000, 36 * 50_000)
    assert r0.busy_ns == 2 * (4_000_000 + 18 * 70_000)
    assert r1.busy_ns == 2 * (4_000_000 + 18 * 50_000)
    assert (r0.wait_ns, r1.wait_ns) == (48 * 20_000, 0)
    assert (r0.last_arrivals, r1.last_arrivals, r1.late_ns) == (0, 48, 48 * 20_000)
    assert len(cross.collectives) == len(cross.aligned) == 48
    assert {c.process_group for c in cross.collectives} == {HOSTILE_GROUP}
    assert all(c.spread_ns == 20_000 and c.straggler == 1 for c in cross.collectives)
    assert [r.rank for r in cross.unbucketed] == [0, 1]
    assert r0.all_reduces_per_step == 24 and r0.all_reduce_median_bytes == 4000


def test_every_format_in_both_languages(hta, handmade) -> None:
    """The section leads every format, in English and Japanese; the JSON keeps the per-trace
    reports under `traces` and one entry per rank under `ranks`."""
    reports, cross = hta
    url = "http://127.0.0.1:8000/"
    data = json.loads(render_json(reports, url, ranks=cross))
    assert [t["trace"] for t in data["traces"]] == [str(p) for p in HTA]
    assert [r["rank"] for r in data["ranks"]] == [0, 1]
    assert data["ranks"][0]["exposed_comm_ns"] == cross.ranks[0].exposed_ns
    assert data["job"]["world_size"] == 128 and len(data["collectives"]) == 10
    for lang, heading, words in (
        ("en", "Across the ranks", "exposed communication"),
        ("ja", "ランク間の比較", "計算と重なっていない通信"),
    ):
        text = render_text(reports, url, lang=lang, ranks=cross)
        assert text.startswith(f"== {heading}") and words in text
        assert "337 ms" in text and "304 ms" in text
        md = render_markdown(reports, url, lang=lang, ranks=cross)
        assert md.startswith(f"## {heading}") and words in md and "| 0 |" in md
        page = render_html(reports, url, lang=lang, ranks=cross, with_findings=False)
        assert f"<h2>{heading}</h2>" in page and 'class="ranks-table"' in page
    assert "rank 1 arrived last" in render_text(reports, url, ranks=cross)
    assert "ランク 1 が最後に到着" in render_text(reports, url, lang="ja", ranks=cross)
    # The call-out on unbucketed all-reduces, in both languages.
    reports, cross = handmade
    assert "Unbucketed all-reduces on rank 0" in render_text(reports, url, ranks=cross)
    ja = render_markdown(reports, url, lang="ja", ranks=cross)
    assert "バケット化されていない all-reduce" in ja and "`bucket_cap_mb`" in ja


def test_names_are_escaped_in_every_format(handmade) -> None:
    """The process group's name comes from the trace: markup, a pipe and Markdown."""
    reports, cross = handmade
    url = "http://127.0.0.1:8000/"
    for lang in ("en", "ja"):
        page = render_html(reports, url, lang=lang, ranks=cross, with_findings=False)
        assert "<script>alert('pg')" not in page
        assert html.escape(HOSTILE_GROUP, quote=True) in page
        md = render_markdown(reports, url, lang=lang, ranks=cross)
        assert "<script>" not in md and "|*x*" not in md
        text = render_text(reports, url, lang=lang, ranks=cross)
        assert HOSTILE_GROUP in text  # plain text shows it as it is, control characters dropped
    data = json.loads(render_json(reports, url, ranks=cross))
    assert data["collectives"][0]["process_group"] == HOSTILE_GROUP


def test_which_traces_are_one_jobs_ranks(tmp_path: Path) -> None:
    """A single trace asks nothing; ranks of different jobs, or traces without ranks, get a plain
    sentence and no section; --ranks compares them anyway."""
    assert job_of([ref.GPU_UNLISTED]) is None
    assert job_of([ref.V100, ref.MI300X]) is None  # no job of more than one rank
    mixed = job_of([JOB[0], ref.GPU_UNLISTED_RANK_1])  # world sizes 2 and 128
    assert isinstance(mixed, Job) and not mixed.is_job
    assert "different jobs" in mixed.reason and "別々のジョブ" in mixed.reason_ja
    twice = job_of([JOB[0], JOB[0]])
    assert twice is not None and not twice.is_job and "same rank" in twice.reason
    partly = job_of([JOB[0], ref.V100, ref.MI300X])  # MI300X states none
    assert (
        partly is not None
        and not partly.is_job
        and "1 of the 3 traces states no rank" in partly.reason
    )
    forced = job_of([ref.V100, ref.MI300X], forced=True)
    assert forced is not None and forced.is_job and forced.ranks == (0, 1)
    alone = job_of([ref.V100], forced=True)
    assert alone is not None and not alone.is_job and "one was named" in alone.reason


def test_cli_a_folder_of_ranks_and_an_unreadable_rank(tmp_path: Path) -> None:
    """A folder stands for its traces. One rank that cannot be read is named, exit status 2,
    and the report says plainly that there is no cross-rank section."""
    folder = tmp_path / "job"
    folder.mkdir()
    (folder / "rank-0.json").write_bytes(JOB[0].read_bytes())
    whole = JOB[1].read_bytes()
    broken = folder / "rank-1.json"
    broken.write_bytes(whole[: len(whole) // 2])  # truncated after its distributedInfo
    result = run_doctor(str(folder), "-q", "--only", "comm-exposed")
    assert result.returncode == 2
    assert f"error: {broken}" in result.stderr and "Traceback" not in result.stderr
    assert f"No cross-rank section: the trace of rank 1 ({broken}) could not be read" in (
        result.stdout
    )
    assert "== rank-0.json" not in result.stdout and f"== {folder / 'rank-0.json'}" in result.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    none = run_doctor(str(empty), "-q")
    assert none.returncode == 2 and "a folder without any trace" in none.stderr


def test_cli_not_one_jobs_ranks_said_plainly() -> None:
    """A rank and a trace that states none: each reported, no section, said plainly; the JSON
    stays the list of reports."""
    traces = [str(JOB[0]), str(SYNTHETIC / "graphs-and-comm.json")]
    result = run_doctor(*traces, "-q", "--only", "comm-exposed")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        "== Across the ranks\nNo cross-rank section: 1 of the 2 traces states no rank"
    )
    data = json.loads(
        run_doctor(*traces, "-q", "--only", "comm-exposed", "--format", "json").stdout
    )
    assert isinstance(data, list) and len(data) == 2
