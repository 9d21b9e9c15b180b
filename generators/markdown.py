"""Markdown that the docs hooks write into pages."""

from __future__ import annotations

import re


def fenced(text: str, lang: str, indent: str = "", title: str = "") -> list[str]:
    """A fenced code block whose fence is longer than any backtick run inside ``text`` (so a
    trace's name or a query holding backticks cannot close it), as lines, each indented."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    head = f"{fence}{lang}" + (f' title="{title}"' if title else "")
    return [
        indent + head,
        *(indent + line if line else "" for line in text.splitlines()),
        indent + fence,
    ]
