"""Every lesson page gives its answer first and keeps its main line short, in both editions.

A lesson page (every page of a part but its cheatsheet) opens with an "In short" box: the lesson
in a few words, with its key numbers as placeholders from the artifacts. What an expert wants and
a newcomer can skip sits in collapsed blocks, so that the prose a reader meets unfolded stays
under a limit (``tests/prose.py`` says what counts). The last page of each part ends with
questions whose answers are one click away.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import prose

REPO = Path(__file__).resolve().parents[1]
EDITIONS = {"en": REPO / "docs", "ja": REPO / "docs-ja"}
LESSON_PAGES = sorted(
    p.relative_to(EDITIONS["en"]).as_posix()
    for p in EDITIONS["en"].glob("part-*/*.md")
    if "cheatsheet" not in p.name
)
#: Each part's last page, where its "check yourself" questions are.
LAST_PAGES = sorted(
    max(p.relative_to(EDITIONS["en"]).as_posix() for p in part.glob("*.md"))
    for part in EDITIONS["en"].glob("part-*")
)
IN_SHORT_TITLE = {"en": "In short", "ja": "要点"}
#: The limits on prose met unfolded: English words, and Japanese characters (a Japanese page
#: runs about 2.5 characters per English word of the page it translates).
MAX_VISIBLE = {"en": 1500, "ja": 3750}
MAX_IN_SHORT = {"en": 60, "ja": 150}
CHECK_YOURSELF = re.compile(r"^## .*\{ #check-yourself \}\s*$", re.M)
QUESTION = re.compile(r"^\?\?\? question \"[^\"]+\"\n((?:\n|    .*\n)+)", re.M)
H1 = re.compile(r"^# .+\n", re.M)
PLACEHOLDER = re.compile(r"\{\{\s*(value|setting)\(")


def _page(lang: str, rel: str) -> str:
    return (EDITIONS[lang] / rel).read_text(encoding="utf-8")


def _in_short(lang: str, text: str) -> str | None:
    """The body of the box that opens the page, if it is an "In short" box."""
    title = H1.search(text)
    assert title, "the page has no title"
    rest = text[title.end() :].lstrip("\n")
    opening = f'!!! abstract "{IN_SHORT_TITLE[lang]}"\n'
    if not rest.startswith(opening):
        return None
    body = re.match(r"((?:\n|    .*\n)+)", rest[len(opening) :])
    return body[1] if body else ""


@pytest.mark.parametrize("lang", EDITIONS)
@pytest.mark.parametrize("rel", LESSON_PAGES)
def test_lesson_page_opens_with_in_short(lang: str, rel: str) -> None:
    body = _in_short(lang, _page(lang, rel))
    assert body is not None, (
        f'{lang}:{rel} must open, right under its title, with !!! abstract "{IN_SHORT_TITLE[lang]}"'
    )
    assert PLACEHOLDER.search(body), f"{lang}:{rel}: the In short box cites no artifact's number"
    measure = prose.visible_words if lang == "en" else prose.visible_japanese_characters
    assert measure(body) <= MAX_IN_SHORT[lang], f"{lang}:{rel}: the In short box is too long"


@pytest.mark.parametrize("lang", EDITIONS)
@pytest.mark.parametrize("rel", LESSON_PAGES)
def test_lesson_page_prose_unfolded_stays_short(lang: str, rel: str) -> None:
    text = _page(lang, rel)
    measure = prose.visible_words if lang == "en" else prose.visible_japanese_characters
    assert measure(text) <= MAX_VISIBLE[lang], (
        f"{lang}:{rel} shows {measure(text)} {'words' if lang == 'en' else 'characters'} of prose "
        f"unfolded (at most {MAX_VISIBLE[lang]}): fold the detail a newcomer can skip"
    )


@pytest.mark.parametrize("lang", EDITIONS)
@pytest.mark.parametrize("rel", LAST_PAGES)
def test_each_part_ends_with_questions_answered_one_click_away(lang: str, rel: str) -> None:
    text = _page(lang, rel)
    heading = CHECK_YOURSELF.search(text)
    assert heading, f"{lang}:{rel} has no check-yourself section"
    answers = QUESTION.findall(text[heading.end() :])
    assert 2 <= len(answers) <= 3, f"{lang}:{rel}: two or three questions, {len(answers)} found"
    for answer in answers:
        assert "{{" in answer or "](" in answer, (
            f"{lang}:{rel}: every answer cites the guide's data (a placeholder or a link)"
        )


def test_visible_prose_skips_what_a_reader_must_unfold() -> None:
    page = "\n".join(
        [
            "# Title",
            "one two three",
            '??? note "Going deeper"',
            "    hidden words here",
            "",
            "    more hidden",
            '=== "CUDA"',
            "    first tab words",
            '=== "CPU"',
            "    second tab hidden",
            "after the tabs",
            "| a table | row |",
            "```python",
            "code is not prose",
            "```",
            '{{ value("s", "v", "k") }} end',
        ]
    )
    shown = "Title one two three first tab words after the tabs end"
    assert prose.visible_words(page) == len(shown.split(" "))
