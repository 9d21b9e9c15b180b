"""The guide's two editions, English and Japanese: what code shared by derive and the site needs.

Translations sit beside what they translate (a query's ``question_ja`` and ``columns_ja``, a
detector's ``title_ja``, a figure's Japanese labels next to its English ones); this module only
names the languages and the files that differ per language.
"""

from __future__ import annotations

#: What a table shows when its query found nothing, in each language.
NO_ROWS = {
    "en": "The query found no rows in this trace.",
    "ja": "このトレースでは、クエリに該当する行がありませんでした。",
}

#: English first: the edition every other one is translated from.
LANGUAGES = ("en", "ja")


def figure_file(svg_name: str, lang: str) -> str:
    """A figure's file in one language: ``timeline.svg`` (English), ``timeline.ja.svg``."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r} (known: {', '.join(LANGUAGES)})")
    if lang == "en":
        return svg_name
    stem = svg_name.removesuffix(".svg")
    return f"{stem}.{lang}.svg"
