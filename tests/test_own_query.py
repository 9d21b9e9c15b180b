"""The "Write your own query" page (docs/write-your-own-query.md): every query it teaches is a
file that runs on a committed trace, each result it shows is that run's artifact, and what its
prose says about the results holds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generators.derive import run_query, to_csv
from generators.queries import QUERIES_DIR, load_query
from generators.steps import STEPS
from tests.claims import REPO, needs_cuda, table, values, variant_dir
from tests.open_traces import shared_trace
from tests.sql_rows import trace_rows

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


def _facts() -> dict[str, object]:
    return values(STEP, VARIANT, cpu_ok=False)["own_facts"]


def test_claims_about_the_tables() -> None:
    facts = _facts()
    categories = {row["category"] for row in table(STEP, VARIANT, "own_tables", cpu_ok=False)}
    assert {"cpu_op", "cuda_runtime", "kernel"} <= categories
    # "The GPU's streams are threads too, named after the stream."
    names = {
        row["thread_names"].strip() for row in table(STEP, VARIANT, "own_tables", cpu_ok=False)
    }
    assert any(n.startswith("stream ") for n in names)
    assert facts["counters"] == 0 and facts["flows"] > 0
    assert facts["steps"] == len(table(STEP, VARIANT, "own_steps", cpu_ok=False))
    keys = {row["key"] for row in table(STEP, VARIANT, "own_args", cpu_ok=False)}
    assert {"args.correlation", "args.grid[0]", "args.registers per thread", "args.stream"} <= keys


def test_claims_about_the_steps_and_the_slowest_calls() -> None:
    facts = _facts()
    steps = table(STEP, VARIANT, "own_steps", cpu_ok=False)
    durations = [int(row["dur_ns"]) for row in steps]
    # "The first step is the longest", against the shortest.
    assert durations[0] == max(durations) == facts["first_step_ns"]
    assert min(durations) == facts["shortest_step_ns"]
    slowest = table(STEP, VARIANT, "own_slowest", cpu_ok=False)
    # "The slowest aten::mm is the one in the first step ... the GPU time of the work it launched
    # (its GEMM kernel and a memset) is close to every other call's."
    assert slowest[0]["step"] == steps[0]["step"]
    assert all(row["launched"] == "2" for row in slowest)
    trace = variant_dir(STEP, VARIANT, cpu_ok=False) / "trace.json.gz"
    launched = trace_rows(
        trace,
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


def test_claims_about_busy_and_gaps() -> None:
    busy = table(STEP, VARIANT, "own_busy", cpu_ok=False)
    shares = [float(row["busy_pct"]) for row in busy]
    # "The first step has the lowest share": its GEMM starts late and runs on into the next step.
    assert shares[0] == min(shares) == _facts()["first_busy_pct"]
    trace = variant_dir(STEP, VARIANT, cpu_ok=False) / "trace.json.gz"
    first_gemm_end, first_step_end = trace_rows(
        trace,
        "SELECT (SELECT ts + dur FROM slice WHERE category = 'kernel' ORDER BY ts LIMIT 1) AS k, "
        "(SELECT ts + dur FROM slice WHERE name GLOB 'ProfilerStep#*' ORDER BY ts LIMIT 1) AS s",
    )[0].values()
    assert first_gemm_end > first_step_end
    causes = {row["cause"] for row in table(STEP, VARIANT, "own_gaps", cpu_ok=False)}
    assert {"host", "other"} <= causes
