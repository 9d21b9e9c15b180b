"""The Japanese edition in a browser: its pages, its search, the switcher, its Perfetto buttons.

Built as ``make site`` builds it, in ``ja/`` under the English edition, whose copy of the
artifacts its pages use.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.perfetto_ui import STEP_TIMEOUT_MS, TRACE_READY_JS
from tests.browser.test_site import (
    FIRST_TRACE,
    RESULTS,
    guide_errors,
    nav_page_problems,
    open_guide,
)
from tests.browser.tour import BROKEN_IMAGES_JS, Tours

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Locator, Page

    from .conftest import ConsoleErrors

pytestmark = pytest.mark.browser

JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
PHONE = {"width": 390, "height": 844}


def test_japanese_first_trace_page_is_japanese_with_the_same_data(
    context: BrowserContext,
    site: str,
    console_errors: ConsoleErrors,
) -> None:
    english = open_guide(context, urljoin(site, FIRST_TRACE), console_errors, label="en")
    guide = open_guide(context, urljoin(site, "ja/" + FIRST_TRACE), console_errors, label="ja")
    page = guide.page
    assert page.evaluate("document.documentElement.lang") == "ja"
    assert JAPANESE.search(page.locator("article h1").first.inner_text())
    box = page.locator("details", has_text="これらの数値の出どころ").first
    assert box.is_visible()
    # The same numbers as the English page, in the same order.
    values = "el => el.map(e => e.textContent)"
    assert page.eval_on_selector_all(".pg-value", values) == english.page.eval_on_selector_all(
        ".pg-value", values
    )
    headers = page.eval_on_selector_all("article table thead th", values)
    # Words, not identifiers such as `dtype`, are Japanese.
    english_headers = [
        h for h in headers if not JAPANESE.search(h) and re.search(r"[A-Z][a-z]{2,}|\w \w", h)
    ]
    assert headers and not english_headers
    # Figures and traces come from the English edition's copy of the artifacts.
    broken = page.evaluate(BROKEN_IMAGES_JS)
    assert broken == []
    image = page.locator(".pg-figure img").first
    assert "/artifacts/" in image.evaluate("img => img.currentSrc")
    assert "/ja/artifacts/" not in image.evaluate("img => img.currentSrc")
    RESULTS.mkdir(exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(RESULTS / "site-ja-first-trace.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(RESULTS / "site-ja-first-trace-phone.png"))
    assert guide.non_local() == [] and english.non_local() == []
    assert guide_errors(console_errors, "ja") == []


def test_language_switcher_leads_to_the_same_page(
    context: BrowserContext,
    site: str,
    console_errors: ConsoleErrors,
) -> None:
    page = open_guide(context, urljoin(site, FIRST_TRACE), console_errors).page
    href = page.get_attribute('.md-select__link[hreflang="ja"]', "href")
    assert href and urlsplit(urljoin(page.url, href)).path == "/ja/" + FIRST_TRACE
    page.goto(urljoin(page.url, href))
    back = page.get_attribute('.md-select__link[hreflang="en"]', "href")
    assert back and urlsplit(urljoin(page.url, back)).path == "/" + FIRST_TRACE
    assert guide_errors(console_errors) == []


def _japanese_search_box(
    context: BrowserContext, site: str, console_errors: ConsoleErrors
) -> tuple[Page, Locator]:
    """The Japanese home page with its search box opened by the "/" shortcut."""
    page = open_guide(context, urljoin(site, "ja/"), console_errors).page
    page.keyboard.press("/")
    search = page.locator("input.md-search__input")
    search.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
    return page, search


def test_japanese_search_finds_japanese_words(
    context: BrowserContext,
    site: str,
    console_errors: ConsoleErrors,
) -> None:
    page, search = _japanese_search_box(context, site, console_errors)
    # Typed text that is not on a keyboard arrives as one input: a key press after it makes
    # Material's search (which listens to key events) run the query.
    search.fill("カーネル")
    search.press("End")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.md-search-result__item a')]"
        ".some(a => new URL(a.href).pathname.startsWith('/ja/part-'))",
        timeout=STEP_TIMEOUT_MS,
    )
    assert guide_errors(console_errors) == []


def test_japanese_perfetto_button_opens_the_english_editions_trace(
    context: BrowserContext,
    site: str,
    perfetto_ui: str,
    console_errors: ConsoleErrors,
) -> None:
    guide = open_guide(context, urljoin(site, "ja/" + FIRST_TRACE), console_errors)
    page = guide.page
    widget = ".pg-perfetto[data-time-start]"
    button = page.locator(f"{widget} .pg-perfetto__open").first
    assert JAPANESE.search(button.inner_text())
    with page.expect_popup(timeout=STEP_TIMEOUT_MS) as popup_info:
        button.click()
    perfetto = console_errors.watch(popup_info.value, "perfetto")
    page.wait_for_function(
        "sel => document.querySelector(sel).dataset.state === 'loaded'",
        arg=widget,
        timeout=STEP_TIMEOUT_MS,
    )
    assert JAPANESE.search(page.inner_text(f"{widget} .pg-perfetto__status"))
    perfetto.wait_for_function(TRACE_READY_JS, timeout=STEP_TIMEOUT_MS)
    traces = [url for url in guide.requested if url.endswith(".json.gz")]
    assert traces and all("/ja/" not in urlsplit(url).path for url in traces), traces
    assert guide.non_local() == []
    assert guide_errors(console_errors) == []


def test_every_japanese_nav_page_loads_cleanly(
    context: BrowserContext,
    site: str,
    console_errors: ConsoleErrors,
    tours: Tours,
) -> None:
    """Every page the Japanese nav links to, as loaded on the run's desktop tour of the site
    (tests/browser/tour.py): clean as the English pages, and titled in Japanese."""
    home = open_guide(context, urljoin(site, "ja/"), console_errors, label="home")
    hrefs: list[str] = home.page.eval_on_selector_all(
        ".md-sidebar--primary .md-nav--primary a.md-nav__link[href]",
        "links => links.map(a => a.href)",
    )
    japanese_root = urljoin(site, "ja/")
    pages = sorted({url.split("#", 1)[0] for url in hrefs if url.startswith(japanese_root)})
    assert urljoin(site, "ja/" + FIRST_TRACE) in pages, pages
    visits = tours.desktop()
    missing = [url for url in pages if url.removeprefix(site) not in visits]
    assert missing == [], "nav pages the tour did not visit"
    shown = [visits[url.removeprefix(site)] for url in pages]
    problems = nav_page_problems(shown)
    problems += [f"/{v.rel}: title not Japanese" for v in shown if not JAPANESE.search(v.title)]
    problems += [f"/ja/: request to {u}" for u in home.non_local()]
    problems += guide_errors(console_errors, "home")
    assert problems == []


# Compounds typed without spaces, as a Japanese reader types them, and the page that must come
# first. The search separator (mkdocs.ja.yml) cuts index and query at script boundaries alike;
# the glossary holds the loanwords readers type for the guide's terms (バックワード for 逆伝播).
COMPOUND_QUERIES = {
    "バイアス加算": "part-1/01-first-trace/",
    "カーネル起動": "part-1/03-dispatch-chain/",
    "フラッシュアテンション": "glossary/",
    "CUDAグラフ": "part-4/03-batch-and-cuda-graphs/",
    "KVキャッシュ": "part-4/03-batch-and-cuda-graphs/",
    "起動レイテンシ": "part-1/03-dispatch-chain/",
    "オーバーヘッド律速": "part-4/02-decode-step/",
    "再コンパイル": "check-your-trace/",
    # Where the guide first weighs the profiler's own cost against a step it slows.
    "プロファイラのオーバーヘッド": "part-4/02-decode-step/",
    "バックワード": "glossary/",
    "フォワード": "glossary/",
    "ギャップ": "glossary/",
    # The optimizer's page: its heading writes 最適化, the word Material's query makes of
    # 最適化器, and its front matter's search boost puts it before Part 5's first page, whose
    # title also names the optimizer.
    "最適化器": "part-5/02-optimizer-and-data/",
    "オプティマイザ": "part-5/02-optimizer-and-data/",
}


def test_japanese_search_finds_compound_words_typed_without_spaces(
    context: BrowserContext,
    site: str,
    console_errors: ConsoleErrors,
) -> None:
    page, search = _japanese_search_box(context, site, console_errors)
    first: dict[str, str | None] = {}
    for query in COMPOUND_QUERIES:
        search.fill(query)
        search.press("End")
        try:
            page.wait_for_function(
                "() => document.querySelector('.md-search-result__item a')",
                timeout=STEP_TIMEOUT_MS,
            )
            page.wait_for_timeout(300)  # the result list of the last key press settles
            href = page.eval_on_selector(".md-search-result__item a", "a => a.href")
            first[query] = urlsplit(href).path
        except PlaywrightTimeout:  # no result: recorded, reported below
            first[query] = None
    wrong = {q: p for q, p in first.items() if p != "/ja/" + COMPOUND_QUERIES[q]}
    assert wrong == {}
    assert guide_errors(console_errors) == []


def test_language_switcher_keeps_the_readers_place(
    context: BrowserContext,
    site: str,
    console_errors: ConsoleErrors,
) -> None:
    page = open_guide(context, urljoin(site, "glossary/#gap"), console_errors).page
    # Once the theme has read the other edition's sitemap its own handler is armed too: the
    # switch must keep the place then as well.
    page.wait_for_load_state("networkidle")
    page.click(".md-header__option .md-select > button")
    page.click('.md-select__link[hreflang="ja"]')
    page.wait_for_url("**/ja/glossary/**", timeout=STEP_TIMEOUT_MS)
    assert urlsplit(page.url).path == "/ja/glossary/"
    assert urlsplit(page.url).fragment == "gap"
    assert guide_errors(console_errors) == []
