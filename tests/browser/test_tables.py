"""Every table keeps its columns in view on a desktop, reads on a phone, and never breaks a word.

In a 1280 × 900 window, for every page of the built site: no table is wider than the column it
sits in (so no column hides behind a horizontal scroll bar), with every tab of a tab set selected
in turn so tables in hidden tabs are measured too; and table cells and the code inside them wrap
only at spaces and at the wrap points the build inserts (`<wbr>` after `_`, `::`, `.`, `/`), never
inside a word: their computed `word-break` and `overflow-wrap` are `normal`.

In a 390 × 844 window (a phone), both editions: no header's text takes more than
``MAX_HEADER_LINES`` lines (Japanese headers break between phrases, `auto-phrase`, never
inside a word such as フェーズ), no row is taller than ``MAX_ROW_PX``; a table wider than the screen
scrolls inside its frame, which says so (the ``pg-scrolls`` cue).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.pages import site_pages, visit

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
MAX_HEADER_LINES = 4
MAX_ROW_PX = 300
SLACK_PX = 1

# Every table on the page: select each tab of each tab set in turn, and measure the tables shown.
# (Tables shown by more than one tab are measured more than once.)
MEASURE_JS = """async () => {
  const measured = [];
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
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));
  for (const input of document.querySelectorAll('.tabbed-set > input')) {
    input.click();
    await frame();
    measure();
  }
  return measured;
}"""


def pages(site_dir: Path) -> list[str]:
    found = site_pages(site_dir, "<table>")
    assert len(found) > 5, found
    return found


def test_tables_fit_and_keep_words_whole(
    chromium: Browser,
    built_site: Path,
    site: str,
) -> None:
    problems: list[str] = []
    checked = 0
    for rel, page in visit(chromium, site, pages(built_site), DESKTOP):
        for table in page.evaluate(MEASURE_JS):
            checked += 1
            where = f"{rel} {table['caption']!r}"
            if table["over"] > SLACK_PX:
                problems.append(f"{where}: {table['over']} px wider than its column")
            for part in ("cell", "code"):
                if table[part] and table[part] != ["normal", "normal"]:
                    problems.append(f"{where}: {part} wraps inside words ({table[part]})")
    assert checked > 40, f"only {checked} tables measured"
    assert not problems, "\n".join(problems)


def test_tables_read_on_a_phone(
    chromium: Browser,
    built_site: Path,
    site: str,
) -> None:
    problems: list[str] = []
    checked = 0
    for rel, page in visit(chromium, site, pages(built_site), PHONE):
        # Resize observers mark the frames that scroll in the frame after layout.
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)))")
        for table in page.evaluate(MEASURE_JS):
            checked += 1
            where = f"{rel} {table['caption']!r}"
            for header, lines in table["headerLines"]:
                if lines > MAX_HEADER_LINES:
                    problems.append(f"{where}: header {header!r} takes {lines} lines")
            for row, height in table["rowHeights"]:
                if height > MAX_ROW_PX:
                    problems.append(f"{where}: row {row!r} is {height:.0f} px tall")
            if table["lang"] == "ja" and table["headerBreak"] not in (None, "auto-phrase"):
                problems.append(f"{where}: headers break inside words ({table['headerBreak']})")
            if table["scrolls"] and not table["cue"]:
                problems.append(f"{where}: scrolls sideways with no cue that it does")
    assert checked > 40, f"only {checked} tables measured"
    assert not problems, "\n".join(problems)
