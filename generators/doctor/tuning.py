"""How the doctor runs its engine for a trace of a given size (:func:`engine_options`).

Imports only the standard library's ``os`` and ``stat`` and :mod:`generators.tp_launch`, so that
``python -m generators.doctor`` can choose, and start, its engine before importing anything
else; ``benchmarks/`` uses it too.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from generators import tp_launch

#: Traces up to this size on disk open in the 32-bit WebAssembly build, which runs the doctor
#: some 10 % faster than the memory64 one. Its heap stops at 4 GiB; the engine's grows by about
#: 2.4 bytes per byte of JSON, some 35 per byte of a gzipped trace.
WASM32_MAX_TRACE_BYTES = 32 << 20

#: Traces that hold at least this much JSON open with V8's own tier-up: the doctor then runs for
#: seconds, and the optimising compiler (a fifth of a second of CPU for each of SQLite's large
#: functions, in background threads) ends it sooner; below it, the baseline compiler's code alone
#: does. Measured by benchmarks/doctor_tuning.py.
TIER_UP_MIN_JSON_BYTES = 24 << 20


def engine_options(path: str | os.PathLike[str]) -> dict[str, Any]:
    """How the doctor opens the trace at ``path``, for a command that should answer in about a
    second.

    The WebAssembly engine runs without V8's dynamic tier-up, whose compiler threads would
    mostly compete with the work for CPU (``tier_up``), except for a trace so large that the
    command takes seconds anyway; in its 32-bit build for a trace that fits it (``wasm``); with
    the trace processor's default ftrace setting, which spares it a second start-up instance
    (``ftrace_raw``; no Kineto trace holds ftrace); and with the guide's pinned engine unless
    the environment names another (``engine``, :func:`generators.tp_launch.pinned_engine`, as
    derive does).
    """
    disk_bytes = trace_bytes(path)
    options: dict[str, Any] = {"engine": tp_launch.pinned_engine()}
    small = disk_bytes is not None and disk_bytes <= WASM32_MAX_TRACE_BYTES
    return options | {
        "ftrace_raw": True,
        "tier_up": (json_bytes(path) or 0) >= TIER_UP_MIN_JSON_BYTES,
        "wasm": "32" if small else None,
    }


def trace_bytes(path: str | os.PathLike[str]) -> int | None:
    """The size of the file at ``path``, or None."""
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def json_bytes(path: str | os.PathLike[str]) -> int | None:
    """About how many bytes of JSON the trace at ``path`` holds: a gzip file's own record of its
    uncompressed size (modulo 4 GiB, as gzip keeps it: a larger trace may read as smaller, never
    as smaller than the file), else the file's size. None when it is not a file that can be read
    (a pipe is not opened here: reading it would take what the trace processor should read)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return None
        with open(path, "rb") as f:
            if f.read(2) != b"\x1f\x8b":
                return st.st_size
            f.seek(-4, os.SEEK_END)
            return max(int.from_bytes(f.read(4), "little"), st.st_size)
    except OSError:
        return None


def tuning_label(options: dict[str, Any]) -> str:
    """A name for the compilation tuning in :func:`engine_options`'s answer."""
    return "V8 tier-up" if options["tier_up"] else "baseline only"
