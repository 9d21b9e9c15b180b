"""Every environment variable the project reads is listed, with its purpose, in generators/env.py.

One prefix for ours (``PROFILING_GUIDE_``), and only a few well-known ones of other programs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from generators import env

REPO = Path(__file__).resolve().parents[1]
OURS = {var.name: var for var in env.ALL}

# The ways a file here reads or sets a variable by name.
READS = (
    re.compile(r"""environ(?:\.get|\.setdefault|\.pop)?\s*[\(\[]\s*["']([A-Z][A-Z0-9_]*)["']"""),
    re.compile(r"""getenv\(\s*["']([A-Z][A-Z0-9_]*)["']"""),
    re.compile(r"""(?:setenv|delenv)\(\s*["']([A-Z][A-Z0-9_]*)["']"""),
    re.compile(r"""!ENV \[\s*([A-Z][A-Z0-9_]*)"""),  # mkdocs.yml
)
SOURCES = ("*.py", "*.mjs", "*.js", "*.yml", "*.yaml", "Makefile")


def _tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *patterns],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [REPO / p for p in out if (REPO / p).is_file()]


def _sources() -> list[Path]:
    return _tracked(*SOURCES, *(f"**/{p}" for p in SOURCES))


def test_every_variable_read_is_listed() -> None:
    unknown = []
    for path in _sources():
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in READS:
            for name in pattern.findall(text):
                if name not in OURS and name not in env.OTHERS:
                    unknown.append(f"{path.relative_to(REPO)}: {name}")
    assert not unknown, "read but not listed in generators/env.py:\n" + "\n".join(unknown)


def test_every_prefixed_name_is_listed() -> None:
    """A mistyped or retired name anywhere (code, docs, workflows) fails here."""
    found = []
    for path in _tracked("*.py", "*.md", "*.yml", "*.mjs", "Makefile", "**/Makefile"):
        text = path.read_text(encoding="utf-8", errors="replace")
        for name in re.findall(rf"\b{env.PREFIX}[A-Z0-9_]+", text):
            if name not in OURS:
                found.append(f"{path.relative_to(REPO)}: {name}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("var", env.ALL, ids=lambda v: v.name)
def test_each_variable_is_ours_documented_and_read(var: env.EnvVar) -> None:
    assert var.name.startswith(env.PREFIX)
    assert var.doc.strip()
    text = (REPO / var.read_by).read_text(encoding="utf-8")
    attribute = next(k for k, v in vars(env).items() if v is var)
    assert var.name in text or f"env.{attribute}" in text or attribute in text, var.read_by


def test_names_are_unique() -> None:
    assert len(OURS) == len(env.ALL)
