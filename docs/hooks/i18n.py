"""The Japanese edition's hook (mkdocs.ja.yml lists it first): what differs from the English build.

- The edition is built into ``ja/`` under the English one, so its ``site_url`` gains ``ja/``.
- Stylesheets, scripts and downloads live once, in the English ``docs/``: they are added to this
  build's files.
- A notebook's headings keep the English notebook's anchors: the notebook renderer makes ids from
  ASCII words only, so Japanese headings would get none (and the search index, sections that all
  point at the page's top, which breaks Material's search).
- Artifacts are published once, by the English build; this edition's pages link to that copy
  (``extra.artifacts_edition`` names where it sits, relative to this edition's root). ``mkdocs
  serve`` serves this edition alone, so there it publishes its own copy.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from markdown.extensions.toc import slugify
from mkdocs.structure.files import File, Files

REPO_ROOT = Path(__file__).resolve().parents[2]
ENGLISH_DOCS = REPO_ROOT / "docs"
# Files every edition uses, kept once in the English docs folder.
SHARED_ASSETS = ("stylesheets", "javascripts", "downloads")

if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

_serving = False


def on_startup(command: str, dirty: bool) -> None:
    global _serving
    _serving = command == "serve"


def on_config(config):  # type: ignore[no-untyped-def]
    site_url = config.get("site_url") or ""
    if site_url and not site_url.rstrip("/").endswith("/ja"):
        config["site_url"] = site_url.rstrip("/") + "/ja/"
    # Where the English edition publishes the artifacts, relative to this edition's root.
    config["extra"]["artifacts_edition"] = None if _serving else ".."
    return config


def on_files(files: Files, config) -> Files:  # type: ignore[no-untyped-def]
    for folder in SHARED_ASSETS:
        for path in sorted((ENGLISH_DOCS / folder).rglob("*")):
            if path.is_file():
                rel = path.relative_to(ENGLISH_DOCS).as_posix()
                files.append(File.generated(config, rel, abs_src_path=str(path)))
    return files


_HEADING = re.compile(r'<h([1-6]) id="([^"]*)">(.*?)</h\1>', re.S)


def _english_notebook_anchors(name: str) -> list[str]:
    """The anchors of the English notebook's headings, in order."""
    notebook = json.loads((ENGLISH_DOCS / "notebooks" / name).read_text(encoding="utf-8"))
    anchors = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for line in "".join(cell["source"]).splitlines():
            match = re.match(r"^#{1,6}\s+(.*?)\s*#*$", line)
            if match:
                anchors.append(slugify(match[1], "-"))
    return anchors


def on_page_content(html: str, page, config, files) -> str:  # type: ignore[no-untyped-def]
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    anchors = iter(_english_notebook_anchors(Path(page.file.src_uri).name))
    given: list[str] = []

    def anchored(match: re.Match[str]) -> str:
        anchor = next(anchors, None)
        if anchor is None:
            return match[0]
        given.append(anchor)
        inner = match[3].replace(f'href="#{match[2]}"', f'href="#{anchor}"')
        return f'<h{match[1]} id="{anchor}">{inner}</h{match[1]}>'

    html = _HEADING.sub(anchored, html)
    # The page's table of contents was made from the same headings, in the same order, with ids
    # of its own (``_1``, ``_2``, ... for Japanese words): point it at the ids just given.
    entries = _toc_entries(page.toc)
    if len(entries) == len(given):
        for entry, anchor in zip(entries, given, strict=True):
            entry.id = anchor
    return html


def _toc_entries(items) -> list:  # type: ignore[no-untyped-def]
    """The entries of a table of contents, in document order."""
    out = []
    for item in items or ():
        out += [item, *_toc_entries(item.children)]
    return out
