"""Walking the built site page by page: the loop the layout checks share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


def site_pages(site_dir: Path, marker: str) -> list[str]:
    """The built site's pages (URLs relative to its root, e.g. ``part-1/01-first-trace/``) whose
    HTML contains ``marker``, in file order."""
    return [
        path.parent.relative_to(site_dir).as_posix() + "/"
        for path in sorted(site_dir.rglob("index.html"))
        if marker in path.read_text(encoding="utf-8")
    ]


def visit(
    chromium: Browser, site: str, pages: list[str], viewport: dict[str, int]
) -> Iterator[tuple[str, Page]]:
    """Each page loaded in turn in one tab of a fresh browser window of size ``viewport``.

    The window is closed when the loop ends, also when it ends with an exception.
    """
    context = chromium.new_context(viewport=viewport)  # type: ignore[arg-type]
    try:
        page = context.new_page()
        for rel in pages:
            page.goto(urljoin(site, rel), wait_until="load")
            yield rel, page
    finally:
        context.close()
