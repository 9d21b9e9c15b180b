"""Fixtures for tests that drive headless Chromium through Playwright.

- ``chromium``: one Playwright browser for the whole session (Debian's chromium, since
  Playwright's own browser download is not available everywhere the tests run).
- ``static_server``, ``perfetto_ui`` and ``built_site`` (tests/serving.py, through the top
  conftest): folders served on 127.0.0.1, the local Perfetto UI, the site built once.
- ``console_errors``: collects console errors and uncaught exceptions of pages.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from generators.perfetto_ui import TRACE_PROCESSOR_PORT
from tests.browser.perfetto_ui import NON_LOCAL
from tests.browser.search_index import index_once
from tests.browser.tour import tours  # noqa: F401 (a fixture)
from tests.serving import StaticServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page, Playwright, Route

# The browser the tests run: Debian's headless build of Chromium, the same engine without the
# desktop browser's own pages and services, which a headless window of the full browser still
# runs (about a fifth less CPU for the same tour of the site: benchmarks/browser_cpu.md). The
# full browser stands in where the headless build could not be installed (make test says so),
# and makes the one check the headless build cannot: after a tap, the headless build moves its
# emulated mouse to the top-left corner, which ends a hover a phone would keep (a tap's tooltip).
FULL_CHROMIUM_PATH = Path("/usr/bin/chromium")
HEADLESS_SHELL_PATH = Path("/usr/bin/chromium-headless-shell")
CHROMIUM_PATH = HEADLESS_SHELL_PATH if HEADLESS_SHELL_PATH.exists() else FULL_CHROMIUM_PATH
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # WebAssembly with V8's baseline compiler alone, as the doctor runs its engine for all but the
    # largest traces (generators/doctor/tuning.py): the Perfetto UI then starts on a small trace in
    # about 3 s instead of about 5 on two cores (its 11 MB trace processor is not compiled a
    # second time by the optimising tier), and the in-browser doctor's page likewise. The code
    # that runs is the same; only the largest trace loads a little slower.
    "--js-flags=--liftoff-only",
]
# Console errors the local Perfetto UI prints on every start; harmless for these tests.
PERFETTO_NOISE = (
    re.compile(r"Content Security Policy|Unrecognized.*directive", re.IGNORECASE),
    re.compile(rf"127\.0\.0\.1:{TRACE_PROCESSOR_PORT}|ERR_CONNECTION_REFUSED"),
    re.compile(r"live_?reload|status of 404", re.IGNORECASE),
    re.compile(r"document not ready", re.IGNORECASE),
    # Its requests to other hosts, refused by the tests or by the lack of a network.
    re.compile(r"ERR_BLOCKED_BY_CLIENT|ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED"),
)


@pytest.fixture(scope="session")
def site(built_site: Path, static_server: StaticServer) -> str:
    """Base URL of the served site, with a trailing slash."""
    return static_server(built_site) + "/"


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    """Playwright's driver, once per run (the browsers below are launched from it)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


def _launched(playwright: Playwright, executable: Path) -> Iterator[Browser]:
    if not executable.exists():
        pytest.fail(
            f"{executable} is missing: run `make test`, which installs Chromium "
            "before running the browser tests"
        )
    browser = playwright.chromium.launch(
        executable_path=str(executable), args=CHROMIUM_ARGS, headless=True
    )
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="session")
def chromium(playwright: Playwright) -> Iterator[Browser]:
    """A headless Chromium (Playwright ``Browser``); each launch gets a fresh profile."""
    yield from _launched(playwright, CHROMIUM_PATH)


@pytest.fixture(scope="session")
def full_chromium(playwright: Playwright) -> Iterator[Browser]:
    """The full Chromium, headless, for the test that needs it (see ``FULL_CHROMIUM_PATH``)."""
    yield from _launched(playwright, FULL_CHROMIUM_PATH)


@pytest.fixture
def context(browser_context: BrowserContext, request: pytest.FixtureRequest) -> BrowserContext:
    """A fresh context that refuses every request off this machine (the guide's pages and the
    Perfetto UI must work from 127.0.0.1 alone). For a test that reads the built site, each
    edition's search index is built on the first page that asks for it only
    (tests/browser/search_index.py)."""

    def refuse(route: Route) -> None:
        route.abort("blockedbyclient")

    browser_context.route(NON_LOCAL, refuse)
    if "site" in request.fixturenames:
        index_once(
            browser_context, request.getfixturevalue("site"), request.getfixturevalue("built_site")
        )
    return browser_context


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
