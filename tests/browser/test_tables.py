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

Each page is measured on the run's one tour of the site (tests/browser/tour.py), on a phone with
the desktop window resized; the last test checks that a page loaded in a phone's window shows the
same.
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


#: Layout measurements may differ by this much between a resized page and a fresh load (px):
#: sub-pixel rounding of the same layout.
SAME_LAYOUT_PX = 1


def _close(a: object, b: object) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(a - b) <= SAME_LAYOUT_PX
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return a == b


def test_a_page_resized_to_a_phone_lays_out_as_one_loaded_there(tours: Tours) -> None:
    """The phone checks above measure pages resized from a desktop window to a phone's
    (tests/browser/tour.py). A few pages of each edition, loaded afresh in a phone's window,
    show the same tables (header lines, row heights, scrolling and its cue), the same figures
    (width shown, frame, cue) and the same page width."""
    fresh = tours.phone_fresh()
    resized = tours.phone()
    assert len(fresh) >= 4 and any(rel.startswith("ja/") for rel in fresh), list(fresh)
    problems: list[str] = []
    for rel, loaded in fresh.items():
        shown = resized[rel]
        assert loaded.tables or loaded.figures, f"{rel}: nothing measured"
        if not _close(loaded.tables, shown.tables):
            problems.append(f"{rel}: tables {loaded.tables} loaded, {shown.tables} resized")
        layout = [{k: v for k, v in f.items() if k != "sizes"} for f in loaded.figures]
        layout_resized = [{k: v for k, v in f.items() if k != "sizes"} for f in shown.figures]
        if not _close(layout, layout_resized):
            problems.append(f"{rel}: figures {layout} loaded, {layout_resized} resized")
        if loaded.width != shown.width:
            problems.append(f"{rel}: {loaded.width} px wide loaded, {shown.width} px resized")
    assert not problems, "\n".join(problems)
