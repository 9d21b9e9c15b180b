"""Every figure is readable at the width the page shows it, on a desktop and on a phone.

For each page with a figure, in a 1280 × 900 window (a desktop: the content column is about
1000 px wide): each figure's smallest text, its font size scaled by the shown width over the
SVG's own width, is at least ``MIN_TEXT_PX`` CSS px; no figure is wider than its container; each
image is a link to its SVG, so that a tap opens it full size. In a 390 px window (a phone) the
smallest text still shows at ``MIN_PHONE_TEXT_PX`` or more: the figure keeps that width and
scrolls sideways inside a frame that fits the screen, and the frame says that it scrolls (the
``pg-scrolls`` cue). Figures inside tabs are checked with their tab selected.

Each page is measured on the run's one tour of the site at each width (tests/browser/tour.py).
"""

from __future__ import annotations

import pytest

from tests.browser.tour import PHONE, PageVisit, Tours

# The tour of the site is taken once per worker: its tests share one (tests/browser/tour.py).
pytestmark = pytest.mark.browser

MIN_TEXT_PX = 10.0
MIN_PHONE_TEXT_PX = 9.0
SLACK_PX = 1.0  # sub-pixel rounding of layout boxes


def figure_pages(visits: dict[str, PageVisit]) -> list[PageVisit]:
    pages = [visit for visit in visits.values() if visit.figures]
    assert pages, "no page of the built site has a figure"
    return pages


def test_figures_are_readable_on_a_desktop(tours: Tours) -> None:
    problems: list[str] = []
    checked = 0
    for visit in figure_pages(tours.desktop()):
        rel = visit.rel
        for fig in visit.figures:
            checked += 1
            where = f"{rel} {fig['src']}"
            if fig["shown"] <= 0 or not fig["viewBoxWidth"]:
                problems.append(f"{where}: not shown, or its SVG has no viewBox")
                continue
            if fig["shown"] > fig["container"] + SLACK_PX:
                problems.append(
                    f"{where}: {fig['shown']:.0f} px wide in a {fig['container']:.0f} px column"
                )
            scale = fig["shown"] / fig["viewBoxWidth"]
            smallest = min(fig["sizes"], key=lambda s: s["size"])
            px = smallest["size"] * scale
            if px < MIN_TEXT_PX:
                problems.append(
                    f"{where}: text {smallest['text']!r} shows at {px:.1f} px "
                    f"(< {MIN_TEXT_PX} px) at {fig['shown']:.0f} px wide"
                )
            if fig["link"] != fig["resolved"]:
                problems.append(f"{where}: the image links to {fig['link']}, not to its SVG")
    assert checked, "no figure was measured"
    assert not problems, "\n".join(problems)


def test_figures_are_readable_on_a_phone(tours: Tours) -> None:
    problems: list[str] = []
    checked = 0
    for visit in figure_pages(tours.phone()):
        rel = visit.rel
        for fig in visit.figures:
            checked += 1
            where = f"{rel} {fig['src']}"
            if fig["shown"] <= 0 or fig["frameRight"] is None:
                problems.append(f"{where}: not shown, or not in a scrolling frame")
                continue
            if fig["frameRight"] > PHONE["width"] + SLACK_PX:
                problems.append(
                    f"{where}: its frame's right edge at {fig['frameRight']:.0f} px on a "
                    f"{PHONE['width']} px screen"
                )
            smallest = min(fig["sizes"], key=lambda s: s["size"])
            px = smallest["size"] * fig["shown"] / fig["viewBoxWidth"]
            if px < MIN_PHONE_TEXT_PX:
                problems.append(
                    f"{where}: text {smallest['text']!r} shows at {px:.1f} px "
                    f"(< {MIN_PHONE_TEXT_PX} px) at {fig['shown']:.0f} px wide"
                )
            if fig["frameScrolls"] and not fig["frameCue"]:
                problems.append(f"{where}: scrolls sideways with no cue that it does")
        # Nothing on the page scrolls sideways because of a figure.
        if visit.width is None or visit.width > PHONE["width"] + SLACK_PX:
            problems.append(f"{rel}: the page is {visit.width} px wide")
    assert checked, "no figure was measured"
    assert not problems, "\n".join(problems)
