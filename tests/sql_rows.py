"""Rows of SQL asked of a trace, as plain Python values: the one helper the SQL tests share."""

from __future__ import annotations

from pathlib import Path

from generators.derive import run_query
from generators.queries import load_query
from tests.open_traces import shared_trace


def rows(tp: object, sql: str) -> list[dict[str, object]]:
    """Rows of ``sql`` on an open trace (ints, floats, strings and None, never numpy scalars)."""
    result = tp.query(sql)  # type: ignore[attr-defined]
    columns = list(result.column_names)
    return [{c: _plain(getattr(row, c)) for c in columns} for row in result]


def _plain(value: object) -> object:
    return value.item() if hasattr(value, "item") else value


def trace_rows(trace: Path, sql: str) -> list[dict[str, object]]:
    """Rows of ``sql`` on the trace at ``trace`` (opened once per test run, shared)."""
    with shared_trace(trace) as tp:
        return rows(tp, sql)


def query_rows(trace: Path, name: str) -> list[dict[str, object]]:
    """Rows of the query file ``generators/queries/<name>.sql`` on a trace, as derive runs it."""
    with shared_trace(trace) as tp:
        return run_query(tp, load_query(name)).rows
