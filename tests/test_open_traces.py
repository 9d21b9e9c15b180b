"""The pool of traces the read-only tests share (tests/open_traces.py): each trace imported once,
opened again when its engine has died or a query failed on it, the oldest closed to make room."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generators.tp import close_engines
from tests.open_traces import TracePool, shared_trace
from tests.reference_traces import A100_ADD, H100_BERT

COUNT_KERNELS = "SELECT COUNT(*) AS n FROM slice WHERE category = 'kernel'"


def _count(tp: object) -> int:
    return next(iter(tp.query(COUNT_KERNELS))).n  # type: ignore[attr-defined]


def test_a_trace_is_imported_once_and_again_after_its_engine_died() -> None:
    pool = TracePool()
    try:
        first = pool.get(A100_ADD)
        assert pool.get(A100_ADD) is first and pool.imports[A100_ADD.resolve()] == 1
        assert _count(first) == 79
        close_engines()  # as the engine tests do: the pooled engine is gone
        again = pool.get(A100_ADD)
        assert again is not first and _count(again) == 79
        assert pool.imports[A100_ADD.resolve()] == 2
    finally:
        pool.close()


def test_the_least_recently_asked_trace_makes_room() -> None:
    pool = TracePool(max_json_bytes=1)  # room for one trace at a time
    try:
        pool.get(A100_ADD)
        pool.get(H100_BERT)
        pool.get(A100_ADD)
        assert pool.imports == {A100_ADD.resolve(): 2, H100_BERT.resolve(): 1}
    finally:
        pool.close()


def test_a_file_written_again_is_another_trace(tmp_path: Path) -> None:
    pool = TracePool()
    path = tmp_path / "trace.json.gz"
    try:
        shutil.copyfile(A100_ADD, path)
        first = pool.get(path)
        shutil.copyfile(H100_BERT, path)
        assert pool.get(path) is not first
    finally:
        pool.close()


def test_a_failed_query_drops_the_trace_from_the_pool() -> None:
    from tests.open_traces import POOL

    with shared_trace(A100_ADD) as tp:
        before = tp
    with pytest.raises(Exception, match="no_such_table"), shared_trace(A100_ADD) as tp:
        tp.query("SELECT * FROM no_such_table")
    with shared_trace(A100_ADD) as tp:
        assert tp is not before
        assert _count(tp) == 79
    assert POOL.imports[A100_ADD.resolve()] >= 2
