"""The published site lives under a sub-path (a GitHub Pages project site): every page, the 404
page included, must load its styles, scripts and images from under that sub-path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests import background
from tests.browser.perfetto_ui import NON_LOCAL
from tests.serving import build_editions, built_in_background

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Response, Route

    from tests.serving import StaticServer

    from .conftest import ConsoleErrors

pytestmark = pytest.mark.browser

REPO_ROOT = Path(__file__).resolve().parents[2]
SUB_PATH = background.SUB_PATH
PAGES = ("404.html", "", "part-1/01-first-trace/", "glossary/", "ja/", "ja/part-1/01-first-trace/")


@pytest.fixture(scope="module")
def sub_path_site(tmp_path_factory: pytest.TempPathFactory, static_server: StaticServer) -> str:
    """The site built for ``http://127.0.0.1:PORT/guide/`` and served there: built in the
    background as the run began (tests/background.py), or here where no process started that."""
    job = background.sub_path_job()
    host = os.environ.get(background.SUB_PATH_ORIGIN)
    if job.folder.exists() and host:
        built_in_background(job)
        return f"{host}/{SUB_PATH}/"
    root = tmp_path_factory.mktemp("host")
    base = static_server(root)  # the server reads files as they are asked for
    site_url = f"{base}/{SUB_PATH}/"
    build_editions(root / SUB_PATH, PROFILING_GUIDE_SITE_URL=site_url)
    return site_url


@pytest.mark.parametrize("page_path", PAGES)
def test_pages_work_under_a_sub_path(
    browser_context: BrowserContext,
    sub_path_site: str,
    console_errors: ConsoleErrors,
    page_path: str,
) -> None:
    def refuse(route: Route) -> None:
        route.abort("blockedbyclient")

    browser_context.route(NON_LOCAL, refuse)
    page = console_errors.watch(browser_context.new_page(), page_path or "home")
    failed: list[str] = []

    def record(response: Response) -> None:
        if response.status >= 400 and not response.url.endswith(page_path or "/"):
            failed.append(f"{response.status} {response.url}")

    page.on("response", record)
    page.goto(sub_path_site + page_path, wait_until="load")
    assert failed == []
    # Material's stylesheet applied (the header is a fixed bar), and its script ran (search).
    assert page.eval_on_selector(".md-header", "e => getComputedStyle(e).position") == "sticky"
    assert page.locator(".md-search__input").count() == 1
    links = page.eval_on_selector_all(".md-nav__link[href]", "links => links.map(a => a.href)")
    assert links and all(link.startswith(sub_path_site) for link in links), links[:5]
