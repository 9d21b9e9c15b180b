"""Independent pieces of work (one trace each) spread over a few worker processes.

Deriving the artifacts opens every committed trace twice (its tables, then the doctor's report for
the gallery); each trace is independent of the others and most of the time is the trace
processor's, a process of its own. Two workers on a two-core machine nearly halve the wait.

Workers are started fresh (``spawn``), not forked: the parent may hold engine processes, threads
and open files that a forked child must not inherit. Results come back in the order of the
inputs, whatever order they finish in, so that what is written from them is the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from multiprocessing import get_context
from typing import TypeVar

from generators import env

T = TypeVar("T")
R = TypeVar("R")


def worker_count(pieces: int) -> int:
    """How many workers for ``pieces`` pieces of work: ``PROFILING_GUIDE_JOBS`` when set, else
    one per CPU this process may use, at most two (each piece runs an engine beside Python)."""
    chosen = env.JOBS.get()
    if chosen:
        try:
            n = int(chosen)
        except ValueError:
            raise ValueError(f"{env.JOBS.name} must be a whole number, not {chosen!r}") from None
        if n < 1:
            raise ValueError(f"{env.JOBS.name} must be 1 or more, not {n}")
    else:
        n = min(2, len(os.sched_getaffinity(0)))
    return max(1, min(n, pieces))


def run_each(
    work: Callable[[T], R],
    items: Iterable[T],
    *,
    weight: Callable[[T], float] | None = None,
    done: Callable[[T], None] | None = None,
) -> Iterator[R]:
    """``work(item)`` for every item, in worker processes when more than one is worth it; yields
    the results in the order of ``items``. ``work`` must be a module-level function and items and
    results picklable. ``weight``: an item's expected cost; the heaviest start first, so that no
    worker is left with a long piece at the end. ``done(item)`` is called as each piece finishes
    (for progress). When a piece raises, the pieces not yet started are cancelled, those already
    running are waited for, and the first exception is raised here.
    """
    todo = list(items)
    workers = worker_count(len(todo))
    if workers == 1:
        for item in todo:
            result = work(item)
            if done is not None:
                done(item)
            yield result
        return
    order = sorted(range(len(todo)), key=lambda i: -weight(todo[i])) if weight else range(len(todo))
    results: dict[int, R] = {}
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        futures: dict[Future[R], int] = {pool.submit(work, todo[i]): i for i in order}
        pending = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    i = futures[future]
                    results[i] = future.result()  # raises the piece's own exception
                    if done is not None:
                        done(todo[i])
        except BaseException:
            for future in pending:
                future.cancel()
            raise
    for i in range(len(todo)):
        yield results[i]
