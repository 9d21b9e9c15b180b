"""Traces opened once per test run and shared by every test that only reads them.

Importing a trace is the slow part of asking it anything (a 56 MB training trace takes seconds
in the WebAssembly engine); the answer to a read-only query does not depend on which test asks.
So the helpers that ask the committed traces (``tests/claims.py``, ``tests/sql_rows.py``,
the Part 5 claim tests) take an open trace from :data:`POOL` instead of opening their own.

The pool is bounded: it keeps at most :data:`MAX_JSON_BYTES` of trace JSON open (gzip's own
record of the size, as the doctor reads it) and closes the least recently asked trace to make
room. A trace whose engine has died (a test that stops every engine, or a query that crashed
it) is opened again on its next use. Tests that change what a trace holds, or test opening
itself, open their own with :func:`generators.tp.open_trace`.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generators.doctor.tuning import engine_options, json_bytes
from generators.tp import open_trace

#: Trace JSON kept open at once. The largest committed trace (an LLM decode on the GPU) is about
#: 131 MB of JSON and its engine holds about 1 GB; the six Part 5 GPU traces together are 224 MB.
MAX_JSON_BYTES = 480_000_000


@dataclass
class _Entry:
    tp: Any
    stack: contextlib.ExitStack
    size: int
    opens: int = 1


@dataclass
class TracePool:
    """Open traces keyed by path and options, least recently used closed first."""

    max_json_bytes: int = MAX_JSON_BYTES
    _open: OrderedDict[tuple[Any, ...], _Entry] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    #: How many times each trace was imported during the run (tests/test_open_traces.py).
    imports: dict[Path, int] = field(default_factory=dict)

    def get(self, path: Path | str, **options: Any) -> Any:
        """The open trace processor for ``path`` (opened with ``open_trace(path, **options)``;
        without options, as the doctor opens it: :func:`tuned`)."""
        path = Path(path).resolve()
        options = options or tuned(path)
        try:  # a file written again under the same name is another trace
            st = path.stat()
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None  # open_trace below says what is wrong with the path
        key = (path, stamp, tuple(sorted(options.items())))
        with self._lock:
            entry = self._open.get(key)
            if entry is not None and entry.tp.engine.alive():
                self._open.move_to_end(key)
                return entry.tp
            if entry is not None:  # its engine died: open it again
                self._close(key)
            size = json_bytes(path) or 0
            while self._open and self._used() + size > self.max_json_bytes:
                self._close(next(iter(self._open)))
            stack = contextlib.ExitStack()
            try:
                tp = stack.enter_context(open_trace(path, **options))
            except BaseException:
                stack.close()
                raise
            self._open[key] = _Entry(tp, stack, size)
            self.imports[path] = self.imports.get(path, 0) + 1
            return tp

    def discard(self, path: Path | str) -> None:
        """Close ``path``'s open traces: a query failed on them, and ``open_trace`` never reuses
        an engine that saw an error (its state may be half changed)."""
        path = Path(path).resolve()
        with self._lock:
            for key in [k for k in self._open if k[0] == path]:
                self._close(key)

    def _used(self) -> int:
        return sum(e.size for e in self._open.values())

    def _close(self, key: tuple[Any, ...]) -> None:
        entry = self._open.pop(key)
        with contextlib.suppress(Exception):
            entry.stack.close()

    def close(self) -> None:
        """Close every open trace (at the end of the run)."""
        with self._lock:
            while self._open:
                self._close(next(iter(self._open)))


def tuned(path: Path) -> dict[str, Any]:
    """How the pool opens a trace when a test names no options: the guide's pinned engine, as
    derive opens it, run the way the doctor runs it for the trace's size
    (:func:`generators.doctor.tuning.engine_options`: V8's baseline compiler alone and the 32-bit
    build for all but the largest traces). The answers are the same SQL's on the same engine
    (tests/test_tp_light.py holds the two ways to the same rows); the pool keeps dozens of
    engines open at once, and a small trace's engine started this way costs about a quarter of
    the CPU (half a second against two)."""
    return engine_options(path)


POOL = TracePool()


@contextlib.contextmanager
def shared_trace(path: Path | str, **options: Any) -> Iterator[Any]:
    """``with shared_trace(path) as tp:`` reads like ``open_trace`` but takes the pooled trace
    (left open for the next test): for tests that only ask a committed trace questions."""
    tp = POOL.get(path, **options)
    try:
        yield tp
    except BaseException:
        POOL.discard(path)
        raise
