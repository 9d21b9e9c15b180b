"""The built site in a browser: the first step's page, search, "Open in Perfetto", the nav.

The site is built once per test run (``built_site``, tests/serving.py: its Perfetto buttons
pointed at a local Perfetto UI) and served from 127.0.0.1; every request to another host is refused
and, on the guide's pages, recorded as a failure.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import pytest

from tests.browser.perfetto_ui import (
    STEP_TIMEOUT_MS,
    TOLERANCE_NS,
    TRACE_READY_JS,
    VISIBLE_WINDOW_JS,
)
from tests.browser.tour import PageVisit, Tours

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page, Request

    from .conftest import ConsoleErrors

pytestmark = pytest.mark.browser

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS = REPO_ROOT / "test-results"

FIRST_TRACE = "part-1/01-first-trace/"

LOCAL_PREFIX = re.compile(r"^(?:https?|wss?)://127\.0\.0\.1[:/]")

# ------------------------------------------------------------------------ fixtures


# ------------------------------------------------------------------------ helpers


@dataclass
class GuidePage:
    """A page of the guide, with every request it made."""

    page: Page
    requested: list[str] = field(default_factory=list)

    def non_local(self) -> list[str]:
        return non_local(self.requested)


def non_local(requested: list[str]) -> list[str]:
    """The requests of ``requested`` to other hosts (data: and blob: URLs never leave the
    browser)."""
    return [
        url
        for url in requested
        if not LOCAL_PREFIX.match(url) and not url.startswith(("data:", "blob:"))
    ]


def open_guide(
    context: BrowserContext, url: str, console: ConsoleErrors, label: str = "guide"
) -> GuidePage:
    page = console.watch(context.new_page(), label)
    guide = GuidePage(page)

    def record(request: Request) -> None:
        guide.requested.append(request.url)

    page.on("request", record)
    page.goto(url, wait_until="load")
    return guide


def guide_errors(console: ConsoleErrors, label: str = "guide") -> list[str]:
    """Console errors of the guide's own pages: none is expected, so nothing is allowed."""
    return [m for m in console.unexpected(allowed=()) if m.startswith(f"[{label}]")]


def focus_window_ns(page: Page, widget: str) -> tuple[int, int]:
    start = page.get_attribute(widget, "data-time-start")
    end = page.get_attribute(widget, "data-time-end")
    assert start and end, "the widget has no focus window"
    return int(Decimal(start) * 10**9), int(Decimal(end) * 10**9)


def visible_window_ns(perfetto: Page) -> tuple[int, int]:
    span: dict[str, Any] = perfetto.evaluate(VISIBLE_WINDOW_JS)
    start = int(span["integral"]) + round(span["fractional"])
    return start, start + round(span["duration"])


def wait_for_window(perfetto: Page, expected: tuple[int, int]) -> tuple[int, int]:
    """The visible window once it matches ``expected`` (or the last one seen)."""
    deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
    visible = visible_window_ns(perfetto)
    while any(abs(a - b) > TOLERANCE_NS for a, b in zip(visible, expected, strict=True)):
        if time.monotonic() > deadline:
            break
        perfetto.wait_for_timeout(100)
        visible = visible_window_ns(perfetto)
    return visible


# ------------------------------------------------------------------------ tests


def test_first_trace_page_renders(
    context: BrowserContext, site: str, console_errors: ConsoleErrors
) -> None:
    guide = open_guide(context, urljoin(site, FIRST_TRACE), console_errors)
    page = guide.page

    heading = page.locator("article h1").first
    assert "Your first trace" in heading.inner_text()

    # The provenance box sits near the top, before the first section, folded (depth one
    # click down).
    provenance = page.locator("details", has_text="Where these numbers come from").first
    assert provenance.is_visible()
    assert "torch" in (provenance.text_content() or "")
    first_h2_y = page.locator("article h2").first.bounding_box()
    box_y = provenance.bounding_box()
    assert first_h2_y and box_y and box_y["y"] < first_h2_y["y"]

    rows = page.locator("article table tbody tr")
    assert rows.count() > 0
    assert page.locator("article table td", has_text=re.compile(r"^\s*aten::mm\s*$")).count() > 0

    image = page.locator(".pg-figure img").first
    image.scroll_into_view_if_needed()
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0",
        arg=image.element_handle(),
        timeout=STEP_TIMEOUT_MS,
    )
    alt = image.get_attribute("alt") or ""
    assert alt.strip(), "the figure has no alt text"
    src = image.evaluate("img => img.currentSrc")
    response = page.request.get(src)
    assert response.ok
    assert response.headers.get("content-type", "").startswith("image/svg+xml"), src

    code = page.locator("article pre code", has_text="def matmul_add")
    assert code.count() > 0, "the workload source is not on the page"

    RESULTS.mkdir(exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")  # keep the sticky header at the top of the shot
    page.screenshot(path=str(RESULTS / "site-first-trace.png"), full_page=True)

    assert guide.non_local() == []
    assert guide_errors(console_errors) == []


def test_search_finds_the_workload(
    context: BrowserContext, site: str, console_errors: ConsoleErrors
) -> None:
    guide = open_guide(context, site, console_errors)
    page = guide.page
    page.keyboard.press("/")
    search = page.locator("input.md-search__input")
    search.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
    # Typed key by key: Material's search reacts to key events, not to a filled value.
    # Results appear once the search worker has loaded the index.
    search.press_sequentially("matmul_add")
    page.wait_for_function(
        """path => [...document.querySelectorAll('.md-search-result__item a')]
                     .some(a => new URL(a.href).pathname.endsWith(path))""",
        arg=f"/{FIRST_TRACE}",
        timeout=STEP_TIMEOUT_MS,
    )
    link = page.locator(f'.md-search-result__item a[href*="{FIRST_TRACE}"]').first
    assert link.is_visible()
    link.click()
    page.wait_for_url(re.compile(re.escape(FIRST_TRACE)), timeout=STEP_TIMEOUT_MS)
    page.locator("article h1", has_text="Your first trace").wait_for(timeout=STEP_TIMEOUT_MS)

    assert guide.non_local() == []
    assert guide_errors(console_errors) == []


#: From the click to the focused window, the Perfetto UI's first start included (it compiles its
#: WebAssembly): a few seconds on a reader's machine; the bound allows for this test sharing two
#: cores with other work (``make test TEST_WORKERS=2``, the background derive), and still catches a
#: hang or a stall.
CLICK_TO_TRACE_S = 30


def test_open_in_perfetto_draws_the_trace(
    context: BrowserContext, site: str, perfetto_ui: str, console_errors: ConsoleErrors
) -> None:
    guide = open_guide(context, urljoin(site, FIRST_TRACE), console_errors)
    page = guide.page
    widget = ".pg-perfetto[data-time-start]"
    assert page.get_attribute(widget, "data-perfetto-origin") == perfetto_ui
    expected = focus_window_ns(page, widget)

    started = time.monotonic()
    with page.expect_popup(timeout=STEP_TIMEOUT_MS) as popup_info:
        page.click(f"{widget} .pg-perfetto__open")
    perfetto = console_errors.watch(popup_info.value, "perfetto")
    assert perfetto.url.startswith(perfetto_ui)
    page.wait_for_function(
        "sel => document.querySelector(sel).dataset.state === 'loaded'",
        arg=widget,
        timeout=STEP_TIMEOUT_MS,
    )
    assert "matmul_add" in page.inner_text(f"{widget} .pg-perfetto__status")

    perfetto.wait_for_function(TRACE_READY_JS, timeout=STEP_TIMEOUT_MS)
    visible = wait_for_window(perfetto, expected)
    assert all(abs(a - b) <= TOLERANCE_NS for a, b in zip(visible, expected, strict=True)), (
        f"visible window {visible} ns, focus window {expected} ns"
    )
    elapsed = time.monotonic() - started

    perfetto.wait_for_selector(".pf-track__title", timeout=STEP_TIMEOUT_MS)
    titles = perfetto.eval_on_selector_all(".pf-track__title", "els => els.map(e => e.textContent)")
    assert any(title.strip() for title in titles), titles
    assert "matmul_add" in perfetto.evaluate("window.app.trace.traceInfo.traceTitle")
    # The startup command expanded every process: the GPU stream's track is drawn without a
    # click (its group opens collapsed otherwise).
    perfetto.wait_for_function(
        "() => [...document.querySelectorAll('.pf-track__title')]"
        ".some(e => /stream/.test(e.textContent))",
        timeout=STEP_TIMEOUT_MS,
    )

    RESULTS.mkdir(exist_ok=True)
    perfetto.wait_for_timeout(300)  # let the canvas paint the focused window
    perfetto.screenshot(path=str(RESULTS / "site-perfetto.png"))

    # The guide page fetched the trace itself, and nothing from other hosts.
    assert any(url.endswith(".json.gz") for url in guide.requested), guide.requested
    assert guide.non_local() == []
    assert guide_errors(console_errors) == []
    assert elapsed < CLICK_TO_TRACE_S, f"click to focused trace took {elapsed:.1f} s"


def nav_page_problems(visits: list[PageVisit]) -> list[str]:
    """What went wrong on each page of the tour: broken images, requests to other hosts,
    console errors (none is expected on the guide's pages, so nothing is allowed)."""
    problems: list[str] = []
    for visit in visits:
        label = "/" + visit.rel
        problems += [f"{label}: broken image {src}" for src in visit.broken_images]
        problems += [f"{label}: request to {u}" for u in non_local(visit.requested)]
        problems += [f"{label}: {message}" for message in visit.errors]
    return problems


def test_every_nav_page_loads_cleanly(
    context: BrowserContext, site: str, console_errors: ConsoleErrors, tours: Tours
) -> None:
    """Every page the nav links to, as loaded on the run's desktop tour of the site
    (tests/browser/tour.py): no broken image, no request to another host, no console error."""
    home = open_guide(context, site, console_errors, label="home")
    hrefs: list[str] = home.page.eval_on_selector_all(
        ".md-sidebar--primary .md-nav--primary a.md-nav__link[href]",
        "links => links.map(a => a.href)",
    )
    pages = sorted({url.split("#", 1)[0] for url in hrefs if url.startswith(site)})
    assert urljoin(site, FIRST_TRACE) in pages, pages
    assert len(pages) >= 2, pages

    visits = tours.desktop()
    missing = [url for url in pages if url.removeprefix(site) not in visits]
    assert missing == [], "nav pages the tour did not visit"
    problems = nav_page_problems([visits[url.removeprefix(site)] for url in pages])
    problems += [f"/: request to {u}" for u in home.non_local()]
    problems += guide_errors(console_errors, "home")
    assert problems == []


@pytest.mark.parametrize("edition", ["", "ja/"])
def test_a_tap_on_an_abbreviation_shows_its_explanation(
    full_chromium: Browser,
    site: str,
    edition: str,
) -> None:
    """The glossary promises "hover over (or tap)": on a touch screen a tap opens the tooltip.
    In the full browser: the headless build ends the tap's hover at once (tests/browser/conftest.py
    ``FULL_CHROMIUM_PATH``)."""
    phone = full_chromium.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    try:
        page = phone.new_page()
        page.goto(urljoin(site, edition + "part-1/02-cpu-and-gpu-lanes/"), wait_until="load")
        abbr = page.locator("article abbr[title]").first
        explanation = abbr.get_attribute("title")
        assert explanation
        abbr.scroll_into_view_if_needed()
        abbr.tap()
        tooltip = page.locator(".md-tooltip2--active")
        tooltip.wait_for(state="visible", timeout=5000)
        assert tooltip.inner_text().strip() == explanation
    finally:
        phone.close()
