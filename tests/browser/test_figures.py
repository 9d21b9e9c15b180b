"""Every figure is readable at the width the page shows it, on a desktop and on a phone.

For each page with a figure, in a 1280 × 900 window (a desktop: the content column is about
1000 px wide): each figure's smallest text, its font size scaled by the shown width over the
SVG's own width, is at least ``MIN_TEXT_PX`` CSS px; no figure is wider than its container; each
image is a link to its SVG, so that a tap opens it full size. In a 390 px window (a phone) the
smallest text still shows at ``MIN_PHONE_TEXT_PX`` or more: the figure keeps that width and
scrolls sideways inside a frame that fits the screen, and the frame says that it scrolls (the
``pg-scrolls`` cue). Figures inside tabs are checked with their tab selected.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.pages import site_pages, visit

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

MIN_TEXT_PX = 10.0
MIN_PHONE_TEXT_PX = 9.0
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
SLACK_PX = 1.0  # sub-pixel rounding of layout boxes

# For the index-th figure: select its tab if it is in one, load the image and its SVG, and
# measure. Font sizes are read from each <text>'s computed style inside the parsed SVG.
MEASURE_JS = """async (index) => {
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
  const text = await (await fetch(img.src)).text();
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


def figure_pages(site_dir: Path) -> list[str]:
    pages = site_pages(site_dir, 'class="pg-figure"')
    assert pages, "no page of the built site has a figure"
    return pages


def measure(page: Page) -> list[dict[str, Any]]:
    """Every figure of the loaded page, measured."""
    count = page.locator("figure.pg-figure").count()
    return [page.evaluate(MEASURE_JS, i) for i in range(count)]


def test_figures_are_readable_on_a_desktop(
    chromium: Browser,
    built_site: Path,
    site: str,
) -> None:
    problems: list[str] = []
    checked = 0
    for rel, page in visit(chromium, site, figure_pages(built_site), DESKTOP):
        for fig in measure(page):
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


def test_figures_are_readable_on_a_phone(
    chromium: Browser,
    built_site: Path,
    site: str,
) -> None:
    problems: list[str] = []
    checked = 0
    for rel, page in visit(chromium, site, figure_pages(built_site), PHONE):
        for fig in measure(page):
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
        overflow = page.evaluate(SETTLED_WIDTH_JS)
        if overflow > PHONE["width"] + SLACK_PX:
            problems.append(f"{rel}: the page is {overflow} px wide")
    assert checked, "no figure was measured"
    assert not problems, "\n".join(problems)
