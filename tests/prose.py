"""How much prose a reader meets on a page before unfolding anything.

A lesson page keeps its main line short and moves expert detail into collapsed blocks
(``??? kind "Going deeper: ..."``). This module measures what stays visible: the page's
Markdown without its front matter, code blocks, tables, placeholders, HTML comments, collapsed
blocks, and every content tab but the first of its group (a reader sees one tab at a time).
"""

from __future__ import annotations

import re

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_FENCE = re.compile(r"^([ \t]*)(```+|~~~+).*?^[ \t]*\2[ \t]*$", re.S | re.M)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}", re.S)
_TAG = re.compile(r"<[^>]+>")
_ATTRIBUTES = re.compile(r"\{[:#.][^}]*\}")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
#: A collapsed block (``???``, not the open ``???+``) or a content tab, at any indentation.
_BLOCK_START = re.compile(r"^(?P<indent>[ \t]*)(?P<kind>\?\?\?(?!\+)|===)\s")
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff01-\uff9f]")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’_.:-]*")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def visible_markdown(text: str) -> str:
    """The page's prose as it reads with every collapsed block shut and first tabs shown."""
    text = _FRONT_MATTER.sub("", text)
    text = _FENCE.sub("", text)
    text = _COMMENT.sub("", text)
    kept: list[str] = []
    skip_deeper_than: int | None = None
    previous_tab_indent: int | None = None  # indentation of the tab group being read
    for line in text.splitlines():
        if skip_deeper_than is not None:
            if not line.strip() or _indent(line) > skip_deeper_than:
                continue
            skip_deeper_than = None
        match = _BLOCK_START.match(line)
        if match:
            indent = len(match["indent"].expandtabs(4))
            if match["kind"] == "???":
                skip_deeper_than = indent
                continue
            if previous_tab_indent == indent:  # a second tab of the same group: hidden
                skip_deeper_than = indent
                continue
            previous_tab_indent = indent
            continue
        ends_group = previous_tab_indent is not None and _indent(line) <= previous_tab_indent
        if line.strip() and ends_group:
            previous_tab_indent = None  # the group has ended
        if line.lstrip().startswith("|") or line.lstrip().startswith("--8<--"):
            continue
        kept.append(line)
    prose = "\n".join(kept)
    for pattern in (_PLACEHOLDER, _TAG, _ATTRIBUTES, _LINK_TARGET):
        prose = pattern.sub(" ", prose)
    return prose


def visible_words(text: str) -> int:
    """English words a reader meets unfolded (inline code counts: it is read too)."""
    return len(_WORD.findall(visible_markdown(text).replace("`", " ")))


def visible_japanese_characters(text: str) -> int:
    """Kana, kanji and full-width characters a reader meets unfolded."""
    return len(_JAPANESE.findall(visible_markdown(text)))
