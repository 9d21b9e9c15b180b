"""The Japanese edition stays in step with the English one.

Every English page has a Japanese page with the same placeholders (the same tables, values,
figures and buttons, in the same order), the same heading anchors, the same code and the same
link targets; each Japanese page records the revision of the English page it translates, and a
test fails as soon as the English page changes after it. Because the placeholders are the same
and the Japanese page translates the current English page, the claim tests that check the
English prose against the artifacts cover what the Japanese page says as well.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from generators import i18n
from generators.queries import QUERIES_DIR, load_query
from tests.test_site import hook

REPO = Path(__file__).resolve().parents[1]
DOCS, DOCS_JA = REPO / "docs", REPO / "docs-ja"
#: Placeholder arguments that are prose for the reader, translated with the page.
PROSE_ARGUMENTS = ("alt", "label", "caption", "whole")
ENGLISH_PAGES = sorted(
    p.relative_to(DOCS).as_posix()
    for p in DOCS.rglob("*.md")
    if not {"hooks", "includes", "overrides"} & set(p.relative_to(DOCS).parts)
)
JAPANESE_PAGES = [p.relative_to(DOCS_JA).as_posix() for p in i18n.translated_pages()]
FENCE = re.compile(r"^[ \t]*(```+|~~~+).*?^[ \t]*\1[ \t]*$", re.S | re.M)
HEADING = re.compile(r"^(#{2,6}) (.*?)\s*$", re.M)


def _load_yaml(path: Path) -> dict:
    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml uses !ENV tags; their values do not matter here.
    Loader.add_constructor("!ENV", lambda loader, node: None)
    return yaml.load(path.read_text(), Loader=Loader)


def _outside_code(text: str) -> str:
    return FENCE.sub("", text)


def _headings(text: str) -> list[tuple[int, str | None]]:
    """(level, explicit id) of every h2-h6 heading outside code blocks."""
    found = []
    for hashes, title in HEADING.findall(_outside_code(text)):
        match = re.search(r"\{\s*#([\w-]+)\s*\}$", title)
        found.append((len(hashes), match[1] if match else None))
    return found


def _placeholders(text: str) -> list[tuple[str, tuple, dict]]:
    calls = [
        (call.func, call.args, {k: v for k, v in call.kwargs.items() if k not in PROSE_ARGUMENTS})
        for _, call in hook.parse_calls(text)
    ]
    doctor = re.findall(r"\{\{\s*(doctor_[a-z_]+\(.*?\))\s*\}\}", text, re.S)
    return calls + [(d, (), {}) for d in doctor]


def _code_blocks(text: str) -> list[str]:
    return [m.group(0).strip() for m in FENCE.finditer(text)]


#: An admonition, collapsed block or content tab opening: ``!!! tip "..."``, ``??? note``, ``===``.
BLOCK = re.compile(r"^([ \t]*)(!!!|\?\?\?\+?|===)[ \t]*([a-z-]*)", re.M)


def _blocks(text: str) -> list[tuple[str, str, str]]:
    """(indentation, marker, kind) of every admonition, fold and tab: what is shut or open."""
    return BLOCK.findall(_outside_code(text))


def _link_targets(text: str) -> list[str]:
    return sorted(re.findall(r"\]\(([^)\s]+)", _outside_code(text)))


def test_every_page_has_its_translation_and_nothing_else() -> None:
    assert JAPANESE_PAGES == ENGLISH_PAGES
    for rel in i18n.JAPANESE_ONLY:
        assert (DOCS_JA / rel).exists()


@pytest.mark.parametrize("rel", ENGLISH_PAGES)
def test_translation_is_of_the_current_english_page(rel: str) -> None:
    reason = i18n.stale(DOCS_JA / rel)
    assert reason is None, reason


@pytest.mark.parametrize("rel", ENGLISH_PAGES)
def test_same_placeholders_headings_code_and_links(rel: str) -> None:
    english, japanese = (DOCS / rel).read_text(), (DOCS_JA / rel).read_text()
    assert _placeholders(japanese) == _placeholders(english), "placeholders differ"
    assert _headings(japanese) == _headings(english), "headings or their ids differ"
    assert all(anchor for _, anchor in _headings(english)), "every heading needs an explicit id"
    assert _code_blocks(japanese) == _code_blocks(english), "code blocks differ"
    assert _link_targets(japanese) == _link_targets(english), "link targets differ"
    assert _blocks(japanese) == _blocks(english), "boxes, folds or tabs differ"


#: Runs of English words a Japanese page may keep: names of things a reader searches for.
ENGLISH_KEPT = re.compile(
    r"Profiling in PyTorch|Holistic Trace Analysis|Attention is all you profile|"
    r"Nsight (?:Systems|Compute)|Material for MkDocs|"
    # Expansions of the abbreviations a reader meets in the English literature and kernel names.
    r"time to first token|time per output token|fused multi-head attention"
)


@pytest.mark.parametrize("rel", ENGLISH_PAGES)
def test_japanese_pages_have_no_english_sentences(rel: str) -> None:
    """No run of four English words outside code, placeholders, links, ids and HTML tags."""
    text = _outside_code((DOCS_JA / rel).read_text())
    text = i18n._FRONT_MATTER.sub("", text)
    for pattern in (
        r"\{\{.*?\}\}",  # placeholders
        r"`[^`]*`",  # inline code
        r"\]\([^)]*\)",  # link targets
        r"\{[^}]*\}",  # attribute lists and heading ids
        r"<[^>]+>",  # HTML tags and their attributes
        r"https?://\S+",
    ):
        text = re.sub(pattern, " ", text, flags=re.S)
    text = ENGLISH_KEPT.sub(" ", text)
    runs = re.findall(r"\b[A-Za-z][a-z']+(?:[ ,-]+[A-Za-z][a-z']+){3,}\b", text)
    assert not runs, f"docs-ja/{rel} keeps English prose: {runs[:5]}"


def test_abbreviations_explain_the_same_terms() -> None:
    def terms(path: Path) -> list[str]:
        return re.findall(r"^\*\[([^\]]+)\]:", path.read_text(), re.M)

    english = terms(DOCS / "includes" / "abbreviations.md")
    japanese_file = DOCS_JA / "includes" / "abbreviations.md"
    assert terms(japanese_file) == english
    assert japanese_file.read_text() != (DOCS / "includes" / "abbreviations.md").read_text()


@pytest.mark.parametrize("notebook", sorted(p.name for p in (DOCS / "notebooks").glob("*.ipynb")))
def test_notebooks_share_their_code_and_translate_their_text(notebook: str) -> None:
    english = json.loads((DOCS / "notebooks" / notebook).read_text())
    japanese = json.loads((DOCS_JA / "notebooks" / notebook).read_text())
    assert [c["cell_type"] for c in japanese["cells"]] == [c["cell_type"] for c in english["cells"]]
    for en_cell, ja_cell in zip(english["cells"], japanese["cells"], strict=True):
        if en_cell["cell_type"] == "code":
            assert ja_cell == en_cell, "code cells are the same in both editions"
        else:
            assert "".join(ja_cell["source"]) != "".join(en_cell["source"]), "untranslated cell"
            assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", "".join(ja_cell["source"]))


def test_each_edition_caches_its_notebooks_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """mkdocs-jupyter deletes every cached notebook its own build did not use: editions sharing a
    cache folder would delete each other's after every build, and fail (deleting a file the other
    build just deleted) when built at once, as the test run's background builds are."""
    from mkdocs.config import load_config

    monkeypatch.delenv("PROFILING_GUIDE_NOTEBOOK_CACHE", raising=False)
    monkeypatch.chdir(REPO)
    folders = [
        load_config(str(REPO / name)).plugins["mkdocs-jupyter"].config["cache_dir"]
        for name in ("mkdocs.yml", "mkdocs.ja.yml")
    ]
    assert folders == [".cache/mkdocs-jupyter/en", ".cache/mkdocs-jupyter/ja"]


def test_japanese_config_inherits_everything_but_its_own_pages() -> None:
    english, japanese = _load_yaml(REPO / "mkdocs.yml"), _load_yaml(REPO / "mkdocs.ja.yml")
    assert japanese["INHERIT"] == "mkdocs.yml"
    assert japanese["theme"]["language"] == "ja"
    search = next(p["search"] for p in japanese["plugins"] if isinstance(p, dict) and "search" in p)
    assert search["lang"] == "ja"
    # Cuts at script boundaries, so that a compound typed without spaces is split as the index is
    # (tests/browser/test_japanese.py types such compounds into the search box).
    separator = re.compile(search["separator"])
    assert separator.split("バイアス加算") == ["バイアス", "加算"]
    assert separator.split("CUDAグラフ") == ["CUDA", "グラフ"]

    # Lists are not merged by INHERIT: the extensions must be the English list, bar the
    # abbreviations file every page appends.
    def extensions(config: dict) -> list:
        out = []
        for ext in config["markdown_extensions"]:
            if isinstance(ext, dict) and "toc" in ext:
                ext = {"toc": {k: v for k, v in ext["toc"].items() if k != "permalink_title"}}
            if isinstance(ext, dict) and "pymdownx.snippets" in ext:
                options = dict(ext["pymdownx.snippets"])
                options.pop("auto_append")
                ext = {"pymdownx.snippets": options}
            out.append(ext)
        return out

    assert extensions(japanese) == extensions(english)

    # The palette as in English, with its toggles' names translated.
    def palette(config: dict) -> list:
        return [{**p, "toggle": {"icon": p["toggle"]["icon"]}} for p in config["theme"]["palette"]]

    assert palette(japanese) == palette(english)
    assert set(japanese["hooks"]) == {*english["hooks"], "docs/hooks/i18n.py"}

    def nav_files(nav: list) -> list[str]:
        files = []
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            files += nav_files(value) if isinstance(value, list) else [value]
        return files

    japanese_nav = [f for f in nav_files(japanese["nav"]) if f not in i18n.JAPANESE_ONLY]
    assert japanese_nav == nav_files(english["nav"])


def test_every_query_has_its_japanese_caption_and_titles() -> None:
    for path in sorted(QUERIES_DIR.glob("*.sql")):
        query = load_query(path.stem)
        assert query.question_ja, f"{path.name}: no '-- question_ja:'"
        if query.column_titles:
            assert query.column_titles_ja, f"{path.name}: no '-- columns_ja:'"


def test_stale_translation_names_the_diff_to_translate(tmp_path: Path, monkeypatch) -> None:
    english, japanese = tmp_path / "docs", tmp_path / "docs-ja"
    (english / "part-9").mkdir(parents=True)
    (japanese / "part-9").mkdir(parents=True)
    (english / "part-9" / "page.md").write_text("# Title\n\nOld text.\n")
    page = japanese / "part-9" / "page.md"
    page.write_text("---\ntranslation_of: part-9/page.md\n---\n# 題\n\n古い文。\n")
    monkeypatch.setattr(i18n, "ENGLISH_DOCS", english)
    monkeypatch.setattr(i18n, "JAPANESE_DOCS", japanese)
    assert "records no 'translated_from'" in (i18n.stale(page) or "")
    i18n.stamp(page)
    assert i18n.stale(page) is None
    assert page.read_text().endswith("# 題\n\n古い文。\n")
    old = i18n.blob_id((english / "part-9" / "page.md").read_bytes())
    (english / "part-9" / "page.md").write_text("# Title\n\nNew text.\n")
    reason = i18n.stale(page) or ""
    assert f"git diff {old[:12]}" in reason and "stamp docs-ja/part-9/page.md" in reason
    page.write_text("# no front matter\n")
    with pytest.raises(i18n.TranslationError, match=r"translation_of: part-9/page\.md"):
        i18n.stale(page)


def test_stamp_keeps_the_pages_own_front_matter(tmp_path: Path, monkeypatch) -> None:
    english, japanese = tmp_path / "docs", tmp_path / "docs-ja"
    english.mkdir()
    japanese.mkdir()
    (english / "page.md").write_text("# Title\n")
    page = japanese / "page.md"
    page.write_text(
        "---\ntranslation_of: page.md\ntranslated_from: 0\nsearch:\n  boost: 2\n---\n# 題\n"
    )
    monkeypatch.setattr(i18n, "ENGLISH_DOCS", english)
    monkeypatch.setattr(i18n, "JAPANESE_DOCS", japanese)
    i18n.stamp(page)
    current = i18n.blob_id(b"# Title\n")
    assert page.read_text() == (
        f"---\ntranslation_of: page.md\ntranslated_from: {current}\n"
        "search:\n  boost: 2\n---\n# 題\n"
    )
    assert i18n.stale(page) is None


def test_blob_id_is_gits() -> None:
    # `printf 'hello\n' | git hash-object --stdin`
    assert i18n.blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_stamping_a_page_that_is_not_there_is_a_clear_error(capsys) -> None:
    assert i18n.main(["stamp", "no-such-page.md"]) == 2
    assert "no-such-page.md: no such page" in capsys.readouterr().err
