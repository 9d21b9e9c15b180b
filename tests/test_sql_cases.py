"""Data-driven SQL tests: each case in ``tests/sql_cases/`` run on its trace; rows compared exactly.

A case is a ``.sql`` file whose header names the trace it runs on, with the expected rows beside
it as a ``.csv`` of the same name (written exactly as ``make derive`` writes a table's CSV)::

    -- trace: mini:one_op_two_kernels.json        (tests/data/mini-traces/)
    -- what: the launch chain of one operator that launched two kernels
    INCLUDE PERFETTO MODULE guide.launch;
    SELECT ... ORDER BY ...;

A case may name several traces on its ``trace:`` line, separated by spaces
(``reference:a100-simple-add.json.gz reference:h100-bert-small-inference.json.gz``, from
``tests/data/reference-traces/``): it then runs on each, and its expected rows carry the trace's
file name in a first column ``trace``. That is how agreement cases run on the real traces: their
SQL computes one quantity two independent ways and the rows pin both.

The body is either SQL, or a single line ``-- query: <name>`` that runs
``generators/queries/<name>.sql`` as derive does. Rows must come out in a fixed order (say
ORDER BY), so the comparison is exact.

To write the expected files on purpose (a new case, or a definition changed knowingly), run
``pytest tests/test_sql_cases.py --update-expected`` and review the diff of the CSVs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from generators.derive import Rows, run_query, to_csv
from generators.queries import load_query
from generators.tp import open_trace
from tests.reference_traces import REFERENCE_TRACES

CASES = Path(__file__).resolve().parent / "sql_cases"
MINI_TRACES = Path(__file__).resolve().parent / "data" / "mini-traces"
TRACE_ROOTS = {"mini": MINI_TRACES, "reference": REFERENCE_TRACES}
HEADER = re.compile(r"^--\s*(trace|what|query):\s*(.+?)\s*$")

# Every public object of these modules has at least one exact-row case (checked below).
COVERED_MODULES = ("kineto", "launch", "windows", "occupancy", "traffic", "gemm", "kernel_names")


@dataclass(frozen=True)
class Case:
    path: Path
    traces: tuple[Path, ...]
    what: str
    sql: str
    #: The query file the case runs instead of its own SQL, if any.
    query: str | None

    @property
    def expected(self) -> Path:
        return self.path.with_suffix(".csv")

    @property
    def id(self) -> str:
        return self.path.relative_to(CASES).with_suffix("").as_posix()


def load_case(path: Path) -> Case:
    fields: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = HEADER.match(line)
        if match:
            fields[match[1]] = match[2]
        elif line.strip() and not line.startswith("--"):
            break
    where = path.relative_to(CASES)
    if "trace" not in fields or "what" not in fields:
        raise ValueError(f"{where}: the header needs '-- trace:' and '-- what:' lines")
    traces = []
    for item in fields["trace"].split():
        root, _, name = item.partition(":")
        if root not in TRACE_ROOTS or not name:
            raise ValueError(f"{where}: a trace is mini:<file> or reference:<file>, not {item!r}")
        trace = TRACE_ROOTS[root] / name
        if not trace.is_file():
            raise ValueError(f"{where}: no trace {trace.name} in {TRACE_ROOTS[root]}")
        traces.append(trace)
    query = fields.get("query")
    sql = load_query(query).sql if query else path.read_text(encoding="utf-8")
    return Case(path, tuple(traces), fields["what"], sql, query)


def all_cases() -> list[Case]:
    # Sorted by trace, so that consecutive cases reuse one loaded trace.
    cases = [load_case(p) for p in sorted(CASES.rglob("*.sql"))]
    return sorted(cases, key=lambda c: (str(c.traces[0]), c.id))


class _OneOpenTrace:
    """Keeps the last trace open between cases: a trace is loaded once per run of its cases."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self._path: Path | None = None
        self._tp: object = None

    def get(self, path: Path) -> object:
        if path != self._path:
            self.close()
            self._tp = self._stack.enter_context(open_trace(path))
            self._path = path
        return self._tp

    def close(self) -> None:
        self._stack.close()
        self._stack = ExitStack()
        self._path = None


@pytest.fixture(scope="module")
def traces() -> Iterator[_OneOpenTrace]:
    holder = _OneOpenTrace()
    yield holder
    holder.close()


def run_case(traces: _OneOpenTrace, case: Case) -> Rows:
    """The case's rows; on several traces, each trace's rows after a column naming it."""
    query = load_query(case.query) if case.query else _Inline(case.sql)
    if len(case.traces) == 1:
        return run_query(traces.get(case.traces[0]), query)  # type: ignore[arg-type]
    columns: list[str] = []
    rows: list[dict[str, object]] = []
    for trace in case.traces:
        result = run_query(traces.get(trace), query)  # type: ignore[arg-type]
        columns = ["trace", *result.columns]
        rows += [{"trace": trace.name, **row} for row in result.rows]
    return Rows(columns, rows)


@dataclass(frozen=True)
class _Inline:
    """What run_query needs of a query: its SQL."""

    sql: str


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c.id)
def test_case(case: Case, traces: _OneOpenTrace, request: pytest.FixtureRequest) -> None:
    actual = to_csv(run_case(traces, case))
    assert actual.count("\n") > 1, f"{case.id}: no rows; a case pins at least one row"
    update = request.config.getoption("--update-expected")
    if update and (not case.expected.exists() or case.expected.read_text() != actual):
        case.expected.write_text(actual, encoding="utf-8")
        return
    assert case.expected.exists(), (
        f"{case.expected.relative_to(CASES.parent)} is missing: write it with "
        "`pytest tests/test_sql_cases.py --update-expected` and review it"
    )
    expected = case.expected.read_text(encoding="utf-8")
    assert actual == expected, (
        f"{case.id} ({case.what}) differs from {case.expected.name}; if the "
        "change is on purpose, rerun with --update-expected and review the CSV diff"
    )


def test_every_expected_file_has_its_case() -> None:
    stale = [p for p in CASES.rglob("*.csv") if not p.with_suffix(".sql").exists()]
    assert not stale, f"expected rows without a case: {stale}"


def test_every_public_object_of_the_core_modules_has_a_case() -> None:
    """The building blocks every step and detector reuses are each pinned by exact rows."""
    used: set[str] = set()
    for case in all_cases():
        # Named by the case itself: an object only reached through another does not count.
        used |= set(re.findall(r"\bguide_[a-z0-9_]+", case.sql))
    sql_dir = Path(__file__).resolve().parents[1] / "generators" / "sql"
    missing = []
    for module in COVERED_MODULES:
        text = (sql_dir / f"{module}.sql").read_text(encoding="utf-8")
        for name in re.findall(
            r"CREATE PERFETTO (?:VIEW|TABLE|FUNCTION|MACRO)\s+(guide_[a-z0-9_]+)", text
        ):
            if name not in used:
                missing.append(f"{module}: {name}")
    assert not missing, "public objects with no case in tests/sql_cases/:\n" + "\n".join(missing)
