"""Each edition's search index built once per browser window, not once per page.

Material's search builds its index from the edition's whole ``search/search_index.json`` in a
web worker on every page load: on two cores about 0.6 s of CPU per page, nearly as much as
laying the page out, and always the same index for the same edition. A window that visits many
pages (the tours, the hand-off checks) gets the real index on the first page of each edition
that asks for it, so a broken index still shows as a console error there, and on later pages an
index with the same configuration and no documents. Searching itself is checked against the
real index in tests/browser/test_japanese.py, on the first page that test loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Route

INDEX_GLOB = "**/search/search_index.json"


def index_once(context: BrowserContext, site: str, site_dir: Path) -> None:
    """Route ``context``'s requests for the search index of the site served at ``site`` (built
    in ``site_dir``): the real file the first time each edition asks, an empty index after."""
    served: set[str] = set()

    def handle(route: Route) -> None:
        url = route.request.url.split("?", 1)[0]
        if not url.startswith(site) or url not in served:
            served.add(url)
            route.fallback()
            return
        config = json.loads((site_dir / url.removeprefix(site)).read_text(encoding="utf-8"))
        empty = {"config": config["config"], "docs": []}
        route.fulfill(status=200, content_type="application/json", body=json.dumps(empty))

    context.route(INDEX_GLOB, handle)
