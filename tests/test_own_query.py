"""The "Write your own query" page (docs/write-your-own-query.md): every query it teaches is a
file that runs on a committed trace, each result it shows is that run's artifact, and what its
prose says about the results holds.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from docs.hooks.artifacts import objects_used
from generators.derive import run_query, to_csv
from generators.queries import QUERIES_DIR, load_query
from generators.steps import STEPS
from generators.tp import open_trace
from tests.claims import REPO, capture_record, needs_cuda, table, values, variant_dir
from tests.open_traces import shared_trace
from tests.reference_traces import MI300X
from tests.sql_rows import query_rows, trace_rows

STEP, VARIANT = "matmul_add", "variance"
PAGES = (REPO / "docs" / "write-your-own-query.md", REPO / "docs-ja" / "write-your-own-query.md")
#: The page's lessons, in its order; the last two build on the guide's modules.
TAUGHT = (
    "own_tables",
    "own_args",
    "own_steps",
    "own_launch",
    "own_slowest",
    "own_busy",
    "own_gaps",
)
WITH_MODULES = ("own_busy", "own_gaps")

pytestmark = needs_cuda(STEP, VARIANT)


def _page(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.parent.name)
def test_the_page_shows_each_query_file_then_its_result(page: Path) -> None:
    """Each lesson: the query file itself (a snippet include, never a copy), then the table that
    query made, in the page's order; every ``own_*`` file is on the page."""
    text = _page(page)
    shown = re.findall(r'--8<-- "generators/queries/(own_\w+)\.sql"', text)
    tables = re.findall(rf'table\("{STEP}", "{VARIANT}", "(own_\w+)", cpu=False\)', text)
    assert tuple(shown) == TAUGHT == tuple(tables)
    for name in TAUGHT:
        assert text.index(f"queries/{name}.sql") < text.index(f'"{name}", cpu=False')
    files = {p.stem for p in QUERIES_DIR.glob("own_*.sql")}
    assert files == {*TAUGHT, "own_facts"}


def test_the_queries_are_derived_from_the_variant_the_page_names() -> None:
    step = next(s for s in STEPS if s.slug == STEP)
    assert set(step.queries_for(VARIANT, "cuda")) >= {*TAUGHT, "own_facts"}


@pytest.mark.parametrize("name", TAUGHT)
def test_each_query_run_on_the_trace_gives_the_table_shown(name: str) -> None:
    """The query file, run now on the committed trace, returns exactly the committed CSV the
    page's table is made from."""
    folder = variant_dir(STEP, VARIANT, cpu_ok=False)
    with shared_trace(folder / "trace.json.gz") as tp:
        result = run_query(tp, load_query(name))
    assert result.rows, f"{name} shows no rows on the page"
    assert to_csv(result) == (folder / f"{name}.csv").read_text(), name


@pytest.mark.parametrize("name", TAUGHT)
def test_what_runs_in_the_perfetto_ui_as_it_is(name: str) -> None:
    """The page says the first five run in the Perfetto UI as they are (no guide module) and the
    last two need guide.windows inlined."""
    includes = re.findall(r"INCLUDE PERFETTO MODULE ([\w.]+);", load_query(name).sql)
    assert includes == (["guide.windows"] if name in WITH_MODULES else [])


def test_how_to_run_the_module_queries_in_the_ui_and_from_python() -> None:
    """The page: "The last query's block names those it shares with the one before and shows
    only the rest": the page prints each definition once, so own_gaps needs own_busy's run
    first. And ``open_trace`` is used as ``with open_trace(path) as tp``."""
    ways = re.findall(r"^- \*\*.+$", _page(PAGES[0]), re.M)
    # "Three ways, the first without a clone of the guide."
    assert len(ways) == 3 and "clone" not in ways[0] and all("clone" in w for w in ways[1:])
    busy, gaps = ({o.name for o in objects_used(load_query(n).sql)} for n in WITH_MODULES)
    assert busy & gaps and gaps - busy
    assert isinstance(open_trace(_trace()), contextlib.AbstractContextManager)


def _facts() -> dict[str, object]:
    return values(STEP, VARIANT, cpu_ok=False)["own_facts"]


def _trace() -> Path:
    return variant_dir(STEP, VARIANT, cpu_ok=False) / "trace.json.gz"


def test_claims_about_the_tables() -> None:
    facts = _facts()
    categories = {row["category"] for row in table(STEP, VARIANT, "own_tables", cpu_ok=False)}
    assert {"cpu_op", "cuda_runtime", "kernel"} <= categories
    # "The GPU's streams are threads too, named after the stream."
    names = {
        row["thread_names"].strip() for row in table(STEP, VARIANT, "own_tables", cpu_ok=False)
    }
    assert any(n.startswith("stream ") for n in names)
    # "The exception is Kineto's instant markers (Iteration Start, Record Window End), on a
    # global track with no thread: the query below ... leaves out those N of the trace's slices."
    shown = sum(int(row["slices"]) for row in table(STEP, VARIANT, "own_tables", cpu_ok=False))
    assert 0 < facts["off_thread_slices"] == facts["slices"] - shown
    off_thread = trace_rows(
        _trace(),
        "SELECT s.name, s.dur, t.type FROM slice AS s JOIN track AS t ON t.id = s.track_id "
        "WHERE s.track_id NOT IN (SELECT id FROM thread_track) ORDER BY s.ts",
    )
    assert len(off_thread) == facts["off_thread_slices"]
    assert [row["name"].split(":")[0] for row in off_thread] == [
        "Iteration Start",
        "Record Window End",
    ]
    assert all(row["dur"] == 0 and "global" in row["type"] for row in off_thread)
    assert facts["counters"] == 0 and facts["flows"] > 0
    # "flow holds the arrows from a launch to the GPU work it started (a training trace also has
    # arrows from a forward operator to its backward, both ends cpu_op)".
    ends = "JOIN slice AS a ON a.id = f.slice_out JOIN slice AS b ON b.id = f.slice_in"
    here = trace_rows(
        _trace(), f"SELECT DISTINCT a.category AS o, b.category AS i FROM flow AS f {ends}"
    )
    assert {row["o"] for row in here} == {"cuda_runtime", "cuda_driver"}
    assert {row["i"] for row in here} <= {"kernel", "gpu_memcpy", "gpu_memset"}
    fwd_bwd = trace_rows(
        variant_dir("train", "compiled", cpu_ok=False) / "trace.json.gz",
        f"SELECT COUNT(*) AS n, SUM(b.name GLOB '*Backward*') AS backward FROM flow AS f {ends} "
        "WHERE a.category = 'cpu_op' AND b.category = 'cpu_op'",
    )
    assert fwd_bwd[0]["n"] > 0 and fwd_bwd[0]["backward"] == fwd_bwd[0]["n"]
    assert facts["steps"] == len(table(STEP, VARIANT, "own_steps", cpu_ok=False))
    args = {row["key"]: row["value"] for row in table(STEP, VARIANT, "own_args", cpu_ok=False)}
    assert {"args.correlation", "args.grid[0]", "args.registers per thread", "args.stream"} <= {
        *args
    }
    # "est. achieved occupancy %, which reads zero on this GEMM" (the first kernel is the GEMM).
    assert float(args["args.est. achieved occupancy %"]) == 0
    first_kernel = trace_rows(
        _trace(), "SELECT name FROM slice WHERE category = 'kernel' ORDER BY ts LIMIT 1"
    )
    assert first_kernel[0]["name"].startswith("nvjet_")
    # "blocks per SM ... Kineto's own arithmetic": the grid's blocks over the GPU's SMs.
    blocks = int(args["args.grid[0]"]) * int(args["args.grid[1]"]) * int(args["args.grid[2]"])
    sms = capture_record(STEP, VARIANT, cpu_ok=False)["environment"]["gpu_sm_count"]
    assert float(args["args.blocks per SM"]) == pytest.approx(blocks / sms, abs=0.05)


def test_claims_about_the_steps_and_the_slowest_calls() -> None:
    facts = _facts()
    steps = table(STEP, VARIANT, "own_steps", cpu_ok=False)
    durations = [int(row["dur_ns"]) for row in steps]
    # "The first step is the longest", against the shortest.
    assert durations[0] == max(durations) == facts["first_step_ns"]
    assert min(durations) == facts["shortest_step_ns"]
    # "The code had already run before it, untraced and in the schedule's wait and warmup steps,
    # so this is not a first call's cost."
    record = capture_record(STEP, VARIANT, cpu_ok=False)
    wait, warmup = record["schedule"]["wait"], record["schedule"]["warmup"]
    assert record["settings"]["warmup"] > 0 and wait > 0 and warmup > 0
    assert steps[0]["step"] == f"ProfilerStep#{wait + warmup}"
    slowest = table(STEP, VARIANT, "own_slowest", cpu_ok=False)
    # "The slowest aten::mm is the one in the first step ... the GPU time of the work it launched
    # (its GEMM kernel and a memset) is close to every other call's."
    assert slowest[0]["step"] == steps[0]["step"]
    assert all(row["launched"] == "2" for row in slowest)
    launched = trace_rows(
        _trace(),
        "SELECT DISTINCT g.category FROM slice AS op "
        "JOIN slice AS r ON r.track_id = op.track_id AND r.ts >= op.ts AND r.ts < op.ts + op.dur "
        "JOIN flow AS f ON f.slice_out = r.id JOIN slice AS g ON g.id = f.slice_in "
        "WHERE op.name = 'aten::mm' ORDER BY 1",
    )
    assert [row["category"] for row in launched] == ["gpu_memset", "kernel"]
    gpu = [int(row["gpu_ns"]) for row in slowest]
    assert max(gpu) <= 1.05 * min(gpu)


def test_claims_about_the_launches() -> None:
    rows = table(STEP, VARIANT, "own_launch", cpu_ok=False)
    # "Here every link agrees" (1 where the two correlation ids are the same).
    assert all(row["same_correlation"] == "1" for row in rows)
    # "For each of the two kernels, the time from its launch to its start grows from one step to
    # the next."
    by_kernel: dict[str, list[int]] = {}
    for row in rows:
        by_kernel.setdefault(row["kernel"], []).append(int(row["launch_to_start_ns"]))
    assert len(by_kernel) == 2
    for waits in by_kernel.values():
        assert len(waits) > 1 and waits == sorted(waits) and waits[0] < waits[-1]
    # ... and it keeps growing over every step of the trace, not only the rows shown.
    every = trace_rows(
        _trace(),
        "SELECT k.name, k.ts - l.ts AS wait FROM flow AS f JOIN slice AS l ON l.id = f.slice_out "
        "JOIN slice AS k ON k.id = f.slice_in WHERE k.category = 'kernel' ORDER BY k.ts",
    )
    for name in {row["name"] for row in every}:
        waits = [row["wait"] for row in every if row["name"] == name]
        assert len(waits) == _facts()["steps"] and waits == sorted(waits), name


def test_claims_about_flows_the_importer_moved() -> None:
    """The page: "In the batch-1 decode trace of Part 4, every flow whose two ends disagree leaves a
    cudaLaunchKernelExC, the reduce kernels' launch call, and ends on a GEMM": the importer
    dropped the reduce kernel, and its flow landed on the GEMM it overlapped. Part 4's decode
    page says the same of the batch-1 trace: "Most of their launch calls keep their arrow in
    Perfetto, and it lands on the GEMM the dropped kernel overlapped"."""
    llm = values("llm", "eager_b1", cpu_ok=False)
    disagree = trace_rows(
        variant_dir("llm", "eager_b1", cpu_ok=False) / "trace.json.gz",
        "SELECT l.name AS launch, k.name AS kernel FROM flow AS f "
        "JOIN slice AS l ON l.id = f.slice_out JOIN slice AS k ON k.id = f.slice_in "
        "WHERE k.category = 'kernel' AND EXTRACT_ARG(l.arg_set_id, 'args.correlation') "
        "!= EXTRACT_ARG(k.arg_set_id, 'args.correlation')",
    )
    dropped = llm["trace_import"]["overlapping_slices_dropped"]
    assert dropped / 2 < len(disagree) <= dropped
    reduce_launch = llm["llm_decode"]["splitk_reduce_launch"]
    assert reduce_launch == llm["llm_decode"]["dropped_kernel_launch"] == "cudaLaunchKernelExC"
    assert {row["launch"] for row in disagree} == {reduce_launch}
    assert all(row["kernel"].startswith("nvjet_") for row in disagree)


def test_a_trace_without_steps() -> None:
    """The page: "Without steps, section 5 lists the calls with no step and section 6 has no window;
    guide_windows_loop then makes the whole trace one window": on a ROCm trace from another
    project, with no ProfilerStep#N. The stats query the page gives runs as written."""
    assert not query_rows(MI300X, "own_steps") and not query_rows(MI300X, "own_busy")
    slowest = query_rows(MI300X, "own_slowest")
    assert slowest and all(row["step"] is None for row in slowest)
    loop = trace_rows(
        MI300X, "INCLUDE PERFETTO MODULE guide.windows; SELECT location FROM guide_windows_loop"
    )
    assert loop == [{"location": "whole trace"}]
    text = _page(PAGES[0])
    stats_sql = re.search(r"`(SELECT value FROM stats WHERE name = '[\w]+')`", text)
    assert stats_sql, "the page's stats query"
    assert trace_rows(_trace(), stats_sql[1]) == [{"value": 0}]


def test_claims_about_busy_and_gaps() -> None:
    busy = table(STEP, VARIANT, "own_busy", cpu_ok=False)
    shares = [float(row["busy_pct"]) for row in busy]
    # "The first step has the lowest share": its GEMM starts late and runs on into the next step.
    assert shares[0] == min(shares) == _facts()["first_busy_pct"]
    trace = _trace()
    first_gemm_end, first_step_end = trace_rows(
        trace,
        "SELECT (SELECT ts + dur FROM slice WHERE category = 'kernel' ORDER BY ts LIMIT 1) AS k, "
        "(SELECT ts + dur FROM slice WHERE name GLOB 'ProfilerStep#*' ORDER BY ts LIMIT 1) AS s",
    )[0].values()
    assert first_gemm_end > first_step_end
    # "It launches its first GPU work after most of its window has passed ... In the later steps
    # ... what keeps it busy in a step's window was launched in earlier steps."
    per_step = trace_rows(
        trace,
        "INCLUDE PERFETTO MODULE guide.windows; "
        "SELECT st.step, st.ts, st.dur, MIN(l.ts) AS first_launch, MAX(l.ts) AS last_launch "
        "FROM guide_kineto_profiler_step AS st JOIN guide_kineto_launch_link AS ll "
        "JOIN slice AS l ON l.id = ll.launch_id JOIN guide_kineto_gpu_activity AS g "
        "ON g.id = ll.gpu_id AND g.ts < st.ts + st.dur AND g.ts + g.dur > st.ts "
        "GROUP BY st.step ORDER BY st.step",
    )
    first, *later = per_step
    assert first["first_launch"] - first["ts"] > first["dur"] / 2
    assert len(later) == _facts()["steps"] - 1
    assert all(row["last_launch"] < row["ts"] for row in later)
    causes = {row["cause"] for row in table(STEP, VARIANT, "own_gaps", cpu_ok=False)}
    assert {"host", "other"} <= causes
    # "Here every other gap is shorter than any kernel."
    longest_other, shortest_kernel = trace_rows(
        trace,
        "INCLUDE PERFETTO MODULE guide.windows; "
        "SELECT (SELECT MAX(dur) FROM guide_windows_gpu_gap WHERE cause = 'other') AS g, "
        "(SELECT MIN(dur) FROM slice WHERE category = 'kernel') AS k",
    )[0].values()
    assert longest_other < shortest_kernel


def test_the_route_for_a_reader_with_a_trace() -> None:
    """docs/own-trace.md: its doctor commands parse as the doctor's own options, the report's
    "cannot show" covers the four gaps it names (no GPU activity, no launch arrows, no shapes, no
    steps), and every finding has its "Guide:" link."""
    from generators.doctor import examine, render
    from generators.doctor.__main__ import build_parser

    text = _page(REPO / "docs" / "own-trace.md")
    commands = re.findall(r"^\s*\.venv/bin/python -m generators\.doctor (.+)$", text, re.M)
    assert len(commands) == 2
    for command in commands:
        args = build_parser().parse_args(command.split())
        assert args.traces == [Path("trace.json.gz")]
    assert "--format html -o report.html" in commands[1]
    source = Path(examine.__file__).read_text(encoding="utf-8")
    for kind in ("no-gpu", "no-flows", "no-shapes", "no-steps"):
        assert f'"{kind}"' in source, kind
    assert "Guide:" in Path(render.__file__).read_text(encoding="utf-8")
