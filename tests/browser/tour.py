"""One tour of the built site, shared by the layout and page-load checks.

Every page of both editions is loaded once in a desktop window and measured; every page with a
table or a figure is then measured again with the window resized to a phone's (the page's scripts
measure their frames again on a resize, as on a rotated tablet), which costs a layout, not a
second load. Everything the browser checks need is measured on that one visit: the console
errors and uncaught exceptions, the requests made, broken images and the title (on a desktop),
every table (each folded section opened, each tab of a tab set selected in turn) and every figure
(its smallest text at the width shown, its frame), and on a phone the page's settled width.
``tests/browser/test_tables.py``, ``test_figures.py`` and the nav-page checks of ``test_site.py``
and ``test_japanese.py`` assert on the results: each page is laid out once per width instead of
once per check. A few pages are also loaded afresh in a phone's window, and a test compares what
they show with the resized pages (``test_tables.py``), so that the shortcut is checked, not
assumed.

The browser window refuses every request to another host, as the ``context`` fixture does (the
guide's pages must work from 127.0.0.1 alone), and records it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import pytest

from tests.browser.perfetto_ui import NON_LOCAL
from tests.browser.search_index import index_once

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page, Route

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

# Loads every image (lazy ones too) and returns the sources of those that fail.
BROKEN_IMAGES_JS = """async () => {
  const images = [...document.querySelectorAll('img')];
  const broken = await Promise.all(images.map(async (img) => {
    img.loading = 'eager';
    const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 5000));
    const decoded = img.decode().then(() => 'ok', () => 'error');
    const outcome = await Promise.race([decoded, timeout]);
    return outcome === 'ok' && img.naturalWidth > 0 ? null : `${img.src} (${outcome})`;
  }));
  return broken.filter((entry) => entry !== null);
}"""

# Every table on the page: select each tab of each tab set in turn, and measure the tables shown.
# (Tables shown by more than one tab are measured more than once.)
TABLES_JS = """async () => {
  const measured = [];
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));
  // Tables in a folded section are measured as a reader sees them: with the section open (not
  // the folds inside a table's cells, such as a kernel's full name, opened only on purpose).
  const folded = [...document.querySelectorAll('.md-typeset details:not([open])')]
    .filter((details) => !details.closest('table'));
  // Each tab set starts on its first tab, as the page loads (a page measured before at another
  // width was left on its last ones), so that tables are measured in the same order.
  const firstTabs = [...document.querySelectorAll('.tabbed-set > input:first-child')]
    .filter((input) => !input.checked);
  firstTabs.forEach((input) => input.click());
  if (folded.length || firstTabs.length) {
    folded.forEach((details) => { details.open = true; });
    await frame();
  }
  const measure = () => {
    for (const table of document.querySelectorAll('.md-typeset table:not(.highlighttable)')) {
      if (!table.offsetParent) continue;  // in a hidden tab: measured when its tab is selected
      const box = table.closest('.md-typeset__scrollwrap') || table.parentElement;
      const cell = table.querySelector('td');
      const code = table.querySelector('td code');
      const style = (el) =>
        el ? [getComputedStyle(el).wordBreak, getComputedStyle(el).overflowWrap] : null;
      const lines = [...table.querySelectorAll('thead th')].map((th) => {
        const range = document.createRange();
        range.selectNodeContents(th);
        const lineHeight = parseFloat(getComputedStyle(th).lineHeight);
        const lines = Math.round(range.getBoundingClientRect().height / lineHeight);
        return [th.textContent.trim(), lines];
      });
      measured.push({
        headerLines: lines,
        rowHeights: [...table.querySelectorAll('tbody tr')].map(
          (tr) => [tr.textContent.trim().slice(0, 50), tr.getBoundingClientRect().height]),
        scrolls: box.scrollWidth > box.clientWidth + 1,
        cue: box.classList.contains('pg-scrolls'),
        headerBreak: style(table.querySelector('th'))?.[0],
        lang: document.documentElement.lang,
        caption: (table.closest('section')?.querySelector('.pg-caption')?.textContent
                  || table.rows[0].textContent).trim().slice(0, 70),
        over: table.scrollWidth - box.clientWidth,
        cell: style(cell),
        code: style(code),
      });
    }
  };
  measure();
  // A table just shown is measured by the page's resize observer before the next frame.
  for (const input of document.querySelectorAll('.tabbed-set > input')) {
    input.click();
    await frame();
    measure();
  }
  return measured;
}"""

# For the index-th figure: select its tab if it is in one, load the image and measure it; with
# withText, also fetch its SVG and read each <text>'s font size from its style.
FIGURE_JS = """async ([index, withText]) => {
  const figure = document.querySelectorAll('figure.pg-figure')[index];
  const block = figure.closest('.tabbed-block');
  if (block) {
    const set = block.closest('.tabbed-set');
    const blocks = [...block.parentElement.children];
    set.querySelectorAll(':scope > input')[blocks.indexOf(block)].click();
  }
  const img = figure.querySelector('img');
  img.loading = 'eager';
  await img.decode();
  const shown = img.getBoundingClientRect().width;
  const text = withText ? await (await fetch(img.src)).text() : '<svg/>';
  const svg = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
  const viewBox = (svg.getAttribute('viewBox') || '').trim().split(/[\\s,]+/).map(Number);
  const sizes = [];
  for (const node of svg.querySelectorAll('text')) {
    const style = node.getAttribute('style') || '';
    const match = /font-size:\\s*([0-9.]+)px/.exec(style) || /font:[^;]*?([0-9.]+)px/.exec(style);
    const size = match ? Number(match[1]) : Number(node.getAttribute('font-size'));
    if (size) sizes.push({size, text: node.textContent});
  }
  const link = img.parentElement.closest('a');
  // A frame just shown (its tab selected) is measured by the page's resize observer next frame.
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const frame = figure.querySelector('.pg-figure__scroll');
  return {
    frameRight: frame ? frame.getBoundingClientRect().right : null,
    frameScrolls: frame ? frame.scrollWidth > frame.clientWidth + 1 : false,
    frameCue: frame ? frame.classList.contains('pg-scrolls') : false,
    src: img.getAttribute('src'),
    resolved: img.src,
    shown,
    container: figure.getBoundingClientRect().width,
    viewBoxWidth: viewBox[2],
    sizes,
    link: link ? link.href : null,
    right: img.getBoundingClientRect().right,
  };
}"""

# The page's width once its layout has settled: fonts loaded, then the same width for ten frames
# in a row (a tab just clicked by MEASURE_JS slides its content in; on a busy machine that takes
# longer). A page that stays too wide is still reported; one caught mid-transition is not.
SETTLED_WIDTH_JS = """async () => {
  await document.fonts.ready;
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const deadline = performance.now() + 5000;
  let width = document.documentElement.scrollWidth, same = 0;
  while (same < 10 && performance.now() < deadline) {
    await frame();
    const now = document.documentElement.scrollWidth;
    same = now === width ? same + 1 : 0;
    width = now;
  }
  return width;
}"""


@dataclass
class PageVisit:
    """What one page showed in one window."""

    #: The page's URL relative to the site's root, e.g. ``ja/part-1/01-first-trace/``.
    rel: str
    title: str = ""
    errors: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)
    broken_images: list[str] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    #: The page's settled width (measured in the phone window only).
    width: int | None = None


def tour_pages(site_dir: Path, *, laid_out: bool = False) -> list[str]:
    """Every page of the built site (both editions), in file order; ``laid_out``: only those with
    a table or a figure (what the phone's layout checks measure)."""
    return [
        path.parent.relative_to(site_dir).as_posix().removeprefix(".") + "/"
        for path in sorted(site_dir.rglob("index.html"))
        if not laid_out or any(m in path.read_text(encoding="utf-8") for m in LAID_OUT)
    ]


#: What a page holds for the phone's layout checks to measure.
LAID_OUT = ("<table>", 'class="pg-figure"')


#: A layout measured on a page resized to a phone's window must be the one a page loaded in a
#: phone's window gets: the first pages of each edition with something to lay out are also loaded
#: afresh in a phone's window, and the two measurements compared (:meth:`Tours.phone_fresh`).
FRESH_PHONE_PAGES_PER_EDITION = 2

#: Waits for the frame after the next layout (resize observers have run by then).
NEXT_FRAME_JS = "() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)))"


def _measure_layout(page: Page, visit: PageVisit, figure_text: list[dict[str, Any]] | None) -> None:
    """Tables and figures as the page shows them at its current width. ``figure_text``: the
    figures' text sizes measured before on the same page (they do not depend on the width), so
    that each SVG is fetched and parsed once per page."""
    visit.tables = page.evaluate(TABLES_JS)
    count = page.locator("figure.pg-figure").count()
    visit.figures = [page.evaluate(FIGURE_JS, [i, figure_text is None]) for i in range(count)]
    if figure_text is not None:
        for figure, known in zip(visit.figures, figure_text, strict=True):
            figure.update({key: known[key] for key in FIGURE_TEXT_KEYS})


#: What FIGURE_JS reads from the SVG itself rather than from the page's layout.
FIGURE_TEXT_KEYS = ("viewBoxWidth", "sizes")


def _phone_layout(page: Page, visit: PageVisit, desktop: PageVisit | None) -> None:
    """The phone's measurements of the page shown: tables, figures and the settled width."""
    page.evaluate(NEXT_FRAME_JS)
    _measure_layout(page, visit, desktop.figures if desktop else None)
    visit.width = page.evaluate(SETTLED_WIDTH_JS)


def _window(
    chromium: Browser, site: str, site_dir: Path, viewport: dict[str, int]
) -> BrowserContext:
    """A fresh window of size ``viewport`` that refuses every request to another host."""
    context = chromium.new_context(viewport=viewport)  # type: ignore[arg-type]

    def refuse(route: Route) -> None:
        route.abort("blockedbyclient")

    context.route(NON_LOCAL, refuse)
    index_once(context, site, site_dir)
    return context


def take_tour(
    chromium: Browser,
    site: str,
    site_dir: Path,
    pages: list[str],
    phone_pages: frozenset[str] = frozenset(),
) -> tuple[dict[str, PageVisit], dict[str, PageVisit]]:
    """Each page loaded in turn in one tab of a fresh desktop window and measured there; each of
    ``phone_pages`` then measured again with the window resized to a phone's, as a resized
    window or a rotated tablet shows it (the page's scripts measure again on a resize), before
    the next page loads. Returns the desktop visits and the phone visits (each edition's search
    index built on its first page only: tests/browser/search_index.py)."""
    context = _window(chromium, site, site_dir, DESKTOP)
    desktop: dict[str, PageVisit] = {}
    phone: dict[str, PageVisit] = {}
    try:
        page = context.new_page()
        current: list[PageVisit] = []
        page.on(
            "console",
            lambda m: current[-1].errors.append(m.text) if m.type == "error" and current else None,
        )
        page.on("pageerror", lambda e: current[-1].errors.append(f"uncaught: {e}"))
        page.on("request", lambda r: current[-1].requested.append(r.url) if current else None)
        for rel in pages:
            visit = PageVisit(rel.removeprefix("/"))
            current.append(visit)
            page.set_viewport_size(DESKTOP)  # type: ignore[arg-type]
            page.goto(urljoin(site, visit.rel), wait_until="load")
            visit.broken_images = page.evaluate(BROKEN_IMAGES_JS)
            _measure_layout(page, visit, None)
            title = page.locator("article h1").first
            visit.title = title.inner_text() if title.count() else ""
            desktop[visit.rel] = visit
            if rel in phone_pages:
                narrow = PageVisit(visit.rel, title=visit.title)
                current.append(narrow)
                page.set_viewport_size(PHONE)  # type: ignore[arg-type]
                _phone_layout(page, narrow, visit)
                phone[narrow.rel] = narrow
    finally:
        context.close()
    return desktop, phone


def fresh_phone_visits(
    chromium: Browser, site: str, site_dir: Path, pages: list[str]
) -> dict[str, PageVisit]:
    """``pages`` each loaded afresh in a phone's window and measured as :func:`take_tour` does."""
    context = _window(chromium, site, site_dir, PHONE)
    visits: dict[str, PageVisit] = {}
    try:
        page = context.new_page()
        for rel in pages:
            visit = PageVisit(rel.removeprefix("/"))
            page.goto(urljoin(site, visit.rel), wait_until="load")
            _phone_layout(page, visit, None)
            visits[visit.rel] = visit
    finally:
        context.close()
    return visits


class Tours:
    """The tour of the built site, taken on first use and kept for the whole run."""

    def __init__(self, chromium: Browser, site: str, site_dir: Path) -> None:
        self._chromium, self._site, self._site_dir = chromium, site, site_dir
        self._taken: tuple[dict[str, PageVisit], dict[str, PageVisit]] | None = None
        self._fresh: dict[str, PageVisit] | None = None

    def _tour(self) -> tuple[dict[str, PageVisit], dict[str, PageVisit]]:
        if self._taken is None:
            pages = tour_pages(self._site_dir)
            laid_out = frozenset(tour_pages(self._site_dir, laid_out=True))
            self._taken = take_tour(self._chromium, self._site, self._site_dir, pages, laid_out)
        return self._taken

    def desktop(self) -> dict[str, PageVisit]:
        return self._tour()[0]

    def phone(self) -> dict[str, PageVisit]:
        """The pages with a table or a figure, resized to a phone's window."""
        return self._tour()[1]

    def phone_fresh(self) -> dict[str, PageVisit]:
        """The first of the phone tour's pages loaded afresh in a phone's window
        (:data:`FRESH_PHONE_PAGES_PER_EDITION` of each edition)."""
        if self._fresh is None:
            measured = list(self.phone())
            sample = [rel for rel in measured if not rel.startswith("ja/")][
                :FRESH_PHONE_PAGES_PER_EDITION
            ] + [rel for rel in measured if rel.startswith("ja/")][:FRESH_PHONE_PAGES_PER_EDITION]
            self._fresh = fresh_phone_visits(self._chromium, self._site, self._site_dir, sample)
        return self._fresh


@pytest.fixture(scope="session")
def tours(chromium: Browser, site: str, built_site: Path) -> Tours:
    return Tours(chromium, site, built_site)
