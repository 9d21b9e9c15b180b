"""The Japanese edition's hook (mkdocs.ja.yml lists it first): what differs from the English build.

- The edition is built into ``ja/`` under the English one, so its ``site_url`` gains ``ja/``.
- Stylesheets and scripts live once, in the English ``docs/``: they are added to this build's files.
- Artifacts are published once, by the English build; this edition's pages link to that copy
  (``extra.artifacts_edition`` names where it sits, relative to this edition's root). ``mkdocs
  serve`` serves this edition alone, so there it publishes its own copy.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

REPO_ROOT = Path(__file__).resolve().parents[2]
ENGLISH_DOCS = REPO_ROOT / "docs"
# Files every edition uses, kept once in the English docs folder.
SHARED_ASSETS = ("stylesheets", "javascripts")

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
