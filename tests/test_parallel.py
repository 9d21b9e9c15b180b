"""Pieces of work spread over worker processes (generators/parallel.py): results in the order of
the inputs, the first failure raised as itself, the number of workers as asked."""

from __future__ import annotations

import os

import pytest

from generators import parallel
from generators.tp import TraceOpenError


def _square_after(item: tuple[int, float]) -> int:
    import time

    n, delay = item
    time.sleep(delay)
    return n * n


def _fail_on_three(n: int) -> int:
    if n == 3:
        raise TraceOpenError("/traces/three.json.gz", "truncated")
    return n


def test_results_come_in_input_order_whatever_finishes_first(monkeypatch) -> None:
    monkeypatch.setenv("PROFILING_GUIDE_JOBS", "2")
    # The first piece is the slowest, so it is not the first to finish.
    items = [(1, 0.3), (2, 0.0), (3, 0.1), (4, 0.0)]
    finished: list[int] = []
    got = list(
        parallel.run_each(
            _square_after, items, weight=lambda i: i[1], done=lambda i: finished.append(i[0])
        )
    )
    assert got == [1, 4, 9, 16]
    assert sorted(finished) == [1, 2, 3, 4]


def test_a_failing_piece_raises_its_own_error_from_a_worker(monkeypatch) -> None:
    monkeypatch.setenv("PROFILING_GUIDE_JOBS", "2")
    with pytest.raises(TraceOpenError, match=r"three\.json\.gz: truncated") as err:
        list(parallel.run_each(_fail_on_three, [1, 2, 3, 4]))
    assert err.value.reason == "truncated"  # pickled back whole, not as a bare message


def test_one_worker_runs_in_this_process(monkeypatch) -> None:
    monkeypatch.setenv("PROFILING_GUIDE_JOBS", "1")
    pids = list(parallel.run_each(_pid, [1, 2]))
    assert pids == [os.getpid(), os.getpid()]


def _pid(_: int) -> int:
    return os.getpid()


@pytest.mark.parametrize(
    ("value", "pieces", "expected"), [("", 5, None), ("3", 5, 3), ("3", 2, 2), ("1", 9, 1)]
)
def test_worker_count(monkeypatch, value: str, pieces: int, expected: int | None) -> None:
    monkeypatch.setenv("PROFILING_GUIDE_JOBS", value)
    cpus = len(os.sched_getaffinity(0))
    assert parallel.worker_count(pieces) == (expected or min(2, cpus, pieces))


@pytest.mark.parametrize("value", ["two", "0", "-1"])
def test_a_bad_worker_count_is_refused_by_name(monkeypatch, value: str) -> None:
    monkeypatch.setenv("PROFILING_GUIDE_JOBS", value)
    with pytest.raises(ValueError, match="PROFILING_GUIDE_JOBS"):
        parallel.worker_count(4)
