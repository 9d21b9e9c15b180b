"""Every table keeps its columns in view on a desktop, and never breaks a word to do it.

In a 1280 × 900 window, for every page of the built site: no table is wider than the column it
sits in (so no column hides behind a horizontal scroll bar), with every tab of a tab set selected
in turn so tables in hidden tabs are measured too; and table cells and the code inside them wrap
only at spaces and at the wrap points the build inserts (`<wbr>` after `_`, `::`, `.`, `/`), never
inside a word: their computed `word-break` and `overflow-wrap` are `normal`.
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
SLACK_PX = 1

# Every table on the page: select each tab of each tab set in turn, and measure the tables shown.
MEASURE_JS = """() => {
  const measured = [];
  const measure = () => {
    for (const table of document.querySelectorAll('.md-typeset table:not(.highlighttable)')) {
      if (!table.offsetParent) continue;  // in a hidden tab: measured when its tab is selected
      const box = table.closest('.md-typeset__scrollwrap') || table.parentElement;
      const cell = table.querySelector('td');
      const code = table.querySelector('td code');
      const style = (el) =>
        el ? [getComputedStyle(el).wordBreak, getComputedStyle(el).overflowWrap] : null;
      measured.push({
        caption: (table.closest('section')?.querySelector('.pg-caption')?.textContent
                  || table.rows[0].textContent).trim().slice(0, 70),
        over: table.scrollWidth - box.clientWidth,
        cell: style(cell),
        code: style(code),
      });
    }
  };
  measure();
  for (const input of document.querySelectorAll('.tabbed-set > input')) {
    input.click();
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
