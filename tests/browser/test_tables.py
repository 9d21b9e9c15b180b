"""Every table keeps its columns in view on a desktop, reads on a phone, and never breaks a word.

In a 1280 × 900 window, for every page of the built site: no table is wider than the column it
sits in (so no column hides behind a horizontal scroll bar), with every folded section opened and
every tab of a tab set selected in turn so tables in hidden tabs are measured too; and table cells
and the code inside them wrap only at spaces and at the wrap points the build inserts (`<wbr>`
after `_`, `::`, `.`, `/`), never inside a word: their computed `word-break` and `overflow-wrap`
are `normal`.

In a 390 × 844 window (a phone), both editions: no header's text takes more than
``MAX_HEADER_LINES`` lines (Japanese headers break between phrases, `auto-phrase`, never
inside a word such as フェーズ), no row is taller than ``MAX_ROW_PX``; a table wider than the screen
scrolls inside its frame, which says so (the ``pg-scrolls`` cue).

Each page is measured on the run's one tour of the site at each width (tests/browser/tour.py).
"""

from __future__ import annotations

import pytest

from tests.browser.tour import PageVisit, Tours

# The tour of the site is taken once per worker: its tests share one (tests/browser/tour.py).
pytestmark = pytest.mark.browser

MAX_HEADER_LINES = 4
MAX_ROW_PX = 300
SLACK_PX = 1


def table_pages(visits: dict[str, PageVisit]) -> list[PageVisit]:
    found = [visit for visit in visits.values() if visit.tables]
    assert len(found) > 5, [visit.rel for visit in found]
    return found


def test_tables_fit_and_keep_words_whole(tours: Tours) -> None:
    problems: list[str] = []
    checked = 0
    for visit in table_pages(tours.desktop()):
        rel = visit.rel
        for table in visit.tables:
            checked += 1
            where = f"{rel} {table['caption']!r}"
            if table["over"] > SLACK_PX:
                problems.append(f"{where}: {table['over']} px wider than its column")
            for part in ("cell", "code"):
                if table[part] and table[part] != ["normal", "normal"]:
                    problems.append(f"{where}: {part} wraps inside words ({table[part]})")
    assert checked > 40, f"only {checked} tables measured"
    assert not problems, "\n".join(problems)


def test_tables_read_on_a_phone(tours: Tours) -> None:
    problems: list[str] = []
    checked = 0
    for visit in table_pages(tours.phone()):
        rel = visit.rel
        for table in visit.tables:
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
