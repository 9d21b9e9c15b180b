"""The "Open in Perfetto" button (docs/javascripts/perfetto.js) against a local Perfetto UI.

A harness page (tests/data/browser/harness.html) carries the widget markup the site
build emits; it is served together with the script, the stylesheet and a small real
Kineto trace from one origin, and the Perfetto UI from another.
"""

from __future__ import annotations

import shutil
import time
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.perfetto_ui import (
    STEP_TIMEOUT_MS,
    TOLERANCE_NS,
    TRACE_READY_JS,
    VISIBLE_WINDOW_JS,
)
from tests.reference_traces import A100_ADD

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

    from tests.serving import StaticServer

    from .conftest import ConsoleErrors

pytestmark = pytest.mark.browser

REPO_ROOT = Path(__file__).resolve().parents[2]
HARNESS = REPO_ROOT / "tests" / "data" / "browser" / "harness.html"
SCRIPT = REPO_ROOT / "docs" / "javascripts" / "perfetto.js"
STYLESHEET = REPO_ROOT / "docs" / "stylesheets" / "perfetto.css"
REFERENCE_TRACE = A100_ADD
RESULTS = REPO_ROOT / "test-results"

TRACE_NAME = "a100-simple-add.trace.json.gz"
MISSING_NAME = "no-such-trace.trace.json.gz"
# Must match data-time-start / data-time-end of #focused in the harness.
FOCUS_START = Decimal("1694040010.0955")
FOCUS_END = Decimal("1694040010.0975")


TRACK_TITLES_JS = "els => els.map(e => e.textContent.trim())"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, static_server: StaticServer, perfetto_ui: str):
    """Base URL of the served harness folder (harness page, script, stylesheet, trace)."""
    if not REFERENCE_TRACE.is_file():
        pytest.fail(f"reference trace not found: {REFERENCE_TRACE}")
    folder = tmp_path_factory.mktemp("harness")
    (folder / "traces").mkdir()
    shutil.copyfile(REFERENCE_TRACE, folder / "traces" / TRACE_NAME)
    shutil.copyfile(SCRIPT, folder / SCRIPT.name)
    shutil.copyfile(STYLESHEET, folder / STYLESHEET.name)
    page = HARNESS.read_text(encoding="utf-8").replace("__PERFETTO_ORIGIN__", perfetto_ui)
    (folder / HARNESS.name).write_text(page, encoding="utf-8")
    return static_server(folder)


def open_harness(
    context: BrowserContext, site: str, console: ConsoleErrors, init_script: str | None = None
) -> Page:
    page = console.watch(context.new_page(), "harness")
    if init_script:
        page.add_init_script(init_script)
    page.goto(f"{site}/{HARNESS.name}")
    return page


def wait_for_state(page: Page, widget: str, state: str) -> None:
    page.wait_for_function(
        "([sel, state]) => document.querySelector(sel).dataset.state === state",
        arg=[widget, state],
        timeout=STEP_TIMEOUT_MS,
    )


def status_text(page: Page, widget: str) -> str:
    return page.inner_text(f"{widget} .pg-perfetto__status")


def click_and_catch_popup(page: Page, selector: str, console: ConsoleErrors) -> Page:
    with page.expect_popup(timeout=STEP_TIMEOUT_MS) as popup_info:
        page.click(selector)
    return console.watch(popup_info.value, "perfetto")


def wait_for_trace(perfetto: Page) -> None:
    perfetto.wait_for_function(TRACE_READY_JS, timeout=STEP_TIMEOUT_MS)


def visible_window_ns(perfetto: Page) -> tuple[int, int]:
    span: dict[str, Any] = perfetto.evaluate(VISIBLE_WINDOW_JS)
    start = int(span["integral"]) + round(span["fractional"])
    return start, start + round(span["duration"])


def test_button_loads_trace_and_focuses_window(
    context: BrowserContext, site: str, console_errors: ConsoleErrors
) -> None:
    page = open_harness(context, site, console_errors)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))

    started = time.monotonic()
    perfetto = click_and_catch_popup(page, "#focused .pg-perfetto__open", console_errors)
    # The focus window and the expand-everything command travel in the UI's address.
    assert "/#!/viewer?visStart=1694040010095500000&visEnd=1694040010097500000&" in perfetto.url
    assert "startupCommands=" in perfetto.url
    wait_for_state(page, "#focused", "loaded")
    assert "simple_add · a100 (CUDA)" in status_text(page, "#focused")

    wait_for_trace(perfetto)
    expected = (int(FOCUS_START * 10**9), int(FOCUS_END * 10**9))
    deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
    visible = visible_window_ns(perfetto)
    while any(abs(a - b) > TOLERANCE_NS for a, b in zip(visible, expected, strict=True)):
        if time.monotonic() > deadline:
            break
        perfetto.wait_for_timeout(100)
        visible = visible_window_ns(perfetto)
    assert all(abs(a - b) <= TOLERANCE_NS for a, b in zip(visible, expected, strict=True)), (
        f"visible window {visible} ns, requested {expected} ns"
    )
    elapsed = time.monotonic() - started

    # The UI drew tracks: the CPU process, and the GPU stream, whose group the startup
    # command expanded (it opens collapsed otherwise): the reader clicks nothing.
    perfetto.wait_for_selector(".pf-track__title", timeout=STEP_TIMEOUT_MS)
    titles = perfetto.eval_on_selector_all(".pf-track__title", TRACK_TITLES_JS)
    assert any("493459" in t for t in titles), titles
    perfetto.wait_for_function(
        """() => [...document.querySelectorAll('.pf-track__title')]
                   .some(e => /stream 7/.test(e.textContent))""",
        timeout=STEP_TIMEOUT_MS,
    )
    title = perfetto.evaluate("window.app.trace.traceInfo.traceTitle")
    assert "simple_add" in title

    RESULTS.mkdir(exist_ok=True)
    perfetto.wait_for_timeout(300)  # let the canvas repaint after expanding
    perfetto.screenshot(path=str(RESULTS / "perfetto-button-loaded.png"))

    # The harness page only ever talked to its own origin.
    assert requested and all(url.startswith(f"{site}/") for url in requested), requested
    assert console_errors.unexpected() == []
    assert elapsed < 15, f"click to focused trace took {elapsed:.1f} s"


def test_blocked_popup_offers_a_retry(
    context: BrowserContext, site: str, console_errors: ConsoleErrors
) -> None:
    # A pop-up blocker makes window.open return null.
    block_popups = "window.__realOpen = window.open; window.open = function () { return null; };"
    page = open_harness(context, site, console_errors, init_script=block_popups)
    opened: list[Page] = []
    page.on("popup", lambda popup: opened.append(popup))

    page.click("#focused .pg-perfetto__open")
    wait_for_state(page, "#focused", "blocked")
    status = page.locator("#focused .pg-perfetto__status")
    assert status.is_visible()
    assert "blocked" in status.inner_text()
    retry = page.locator("#focused .pg-perfetto__retry")
    assert retry.is_visible()
    assert opened == []

    page.evaluate("() => { window.open = window.__realOpen; }")
    perfetto = click_and_catch_popup(page, "#focused .pg-perfetto__retry", console_errors)
    wait_for_state(page, "#focused", "loaded")
    wait_for_trace(perfetto)
    assert page.locator("#focused .pg-perfetto__retry").count() == 0
    assert console_errors.unexpected() == []


def test_missing_trace_names_the_file(
    context: BrowserContext, site: str, console_errors: ConsoleErrors
) -> None:
    page = open_harness(context, site, console_errors)
    # Swap in a fresh copy of the widget after load, as instant navigation does with
    # the page content: the click handler must still apply.
    page.eval_on_selector("#missing", "el => { el.outerHTML = el.outerHTML; }")
    perfetto = click_and_catch_popup(page, "#missing .pg-perfetto__open", console_errors)
    wait_for_state(page, "#missing", "error")
    message = status_text(page, "#missing")
    assert MISSING_NAME in message
    assert "not found" in message
    assert page.locator("#missing .pg-perfetto__status").is_visible()
    # The empty Perfetto window is closed so the reader sees the message.
    deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
    while not perfetto.is_closed() and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert perfetto.is_closed()
    noise = [m for m in console_errors.unexpected() if "[harness]" in m]
    assert all("404" in m for m in noise), noise


def test_kernel_name_stays_text(
    context: BrowserContext, site: str, console_errors: ConsoleErrors
) -> None:
    page = open_harness(context, site, console_errors)
    raw_title = page.get_attribute("#markup", "data-title")
    assert raw_title is not None
    assert "<img" in raw_title
    assert "(anonymous namespace)" in raw_title

    perfetto = click_and_catch_popup(page, "#markup .pg-perfetto__open", console_errors)
    wait_for_state(page, "#markup", "loaded")
    assert raw_title in status_text(page, "#markup")
    assert page.locator(".pg-perfetto img").count() == 0

    wait_for_trace(perfetto)
    ui_title = perfetto.evaluate("window.app.trace.traceInfo.traceTitle")
    assert "anonymous namespace" in ui_title
    assert "add_kernel" in ui_title
    assert "anonymous namespace" in perfetto.title()
    perfetto.wait_for_timeout(200)
    for target in (page, perfetto):
        assert target.evaluate("window.__injected") is None
    assert perfetto.locator("img[src='x']").count() == 0
    assert console_errors.unexpected() == []


def test_file_url_explains_serving(chromium: Browser, tmp_path: Path) -> None:
    for source in (HARNESS, SCRIPT, STYLESHEET):
        shutil.copyfile(source, tmp_path / source.name)
    context = chromium.new_context()
    try:
        page = context.new_page()
        opened: list[Page] = []
        page.on("popup", lambda popup: opened.append(popup))
        page.goto((tmp_path / HARNESS.name).as_uri())
        page.click("#focused .pg-perfetto__open")
        wait_for_state(page, "#focused", "error")
        assert "make serve" in status_text(page, "#focused")
        assert opened == []
    finally:
        context.close()
