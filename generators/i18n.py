"""The guide's two editions, English and Japanese: what code shared by derive and the site needs.

Translations sit beside what they translate (a query's ``question_ja`` and ``columns_ja``, a
detector's ``title_ja``, a figure's Japanese labels next to its English ones); this module only
names the languages and the files that differ per language.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import re
import sys
from collections.abc import Callable
from pathlib import Path

#: What a table shows when its query found nothing, in each language.
NO_ROWS = {
    "en": "The query found no rows in this trace.",
    "ja": "このトレースでは、クエリに該当する行がありませんでした。",
}

#: Table cells that are the guide's own words (a query's labels and categories), as the Japanese
#: edition shows them; the CSV keeps the English. A whole cell, or one item of a ``a; b`` list,
#: is replaced only when it is exactly one of these: names from a trace (operators, kernels,
#: ``memcpy``) and the workloads' own ``record_function`` labels are never touched, the labels
#: only glossed.
CELL_WORDS_JA = {
    "forward": "forward（順伝播）",
    "backward": "backward（逆伝播）",
    "optimizer": "optimizer（オプティマイザ）",
    "data": "data（データ読み込み）",
    "rest of the step": "ステップの残り",
    "prefill": "プリフィル",
    "decode": "デコード",
    "label start": "ラベルの開始",
    "label end": "ラベルの終了",
    "registers": "レジスタ",
    "warps": "ワープ",
    "shared memory": "共有メモリ",
    "GPU kernel": "GPU カーネル",
    "no": "いいえ",
    "yes": "はい",
    "other": "その他",
    "elementwise": "要素ごとの演算",
    "copy / cast": "コピー / 型変換",
    "copy, cast or concatenation": "コピー、型変換、連結",
    "GEMM, tensor cores": "GEMM、Tensor コア",
    "GEMM, fp32 on CUDA cores": "GEMM、CUDA コアでの fp32",
    "fp32 on CUDA cores (FMA)": "CUDA コアでの fp32（FMA）",
    "tf32 on tensor cores": "Tensor コアでの tf32",
    "bf16 on tensor cores": "Tensor コアでの bf16",
    "fp16 on tensor cores": "Tensor コアでの fp16",
    "cuDNN attention": "cuDNN アテンション",
    "cuDNN attention (generated)": "cuDNN attention（実行時に生成されたカーネル）",
    "mask (tril)": "マスク（tril）",
    "reduction": "リダクション",
    "reduction (mean, argmax)": "リダクション（mean、argmax）",
    "dropped by the trace processor": "トレースプロセッサが落としたもの",
    "attention": "アテンション",
    "elementwise and reductions": "要素ごとの演算とリダクション",
    "copies and fills": "コピーと fill（定数の書き込み）",
}

#: The kernel-name decoder's words (``guide_kernel_names_summary``: ``cuBLAS · GEMM · sm90 ·
#: tile 64x8 · fuses bias``) as the Japanese edition shows them, part by part: the kinds of work
#: below, and the ``tile``/``fuses`` prefixes (``DECODED_PREFIXES_JA``); libraries, architectures,
#: types, layouts and the fused operators' names stay as the name spells them.
DECODED_WORDS_JA = {
    "pointwise": "ポイントワイズ",
    "reduction": "リダクション",
    "persistent reduction": "永続リダクション",
    "GEMM template": "GEMM テンプレート",
    "fused loop (C++)": "融合ループ（C++）",
    "elementwise": "要素ごとの演算",
    "normalization": "正規化",
    "softmax": "ソフトマックス",
    "attention": "アテンション",
    "convolution": "畳み込み",
    "gated GELU": "ゲート付き GELU",
    "sort": "ソート",
    "unique by key": "キーごとの重複除去",
    "scan": "スキャン（累積和）",
}
#: A decoded part's English prefix and the Japanese it becomes, ``{}`` standing for the rest.
DECODED_PREFIXES_JA = {"tile ": "タイル {}", "fuses ": "{} を融合"}
#: How the decoder joins the parts of its line (``guide_kernel_names_summary``).
DECODED_SEPARATOR = " · "


@functools.cache
def _decoded_words(key: Callable[[str], str]) -> dict[str, str]:
    """The decoder's kinds of work by their English as ``key`` escapes it, built once per key."""
    return {key(en): ja for en, ja in DECODED_WORDS_JA.items()}


def decoded_part_in_japanese(
    part: str, word: Callable[[str], str] = str, key: Callable[[str], str] = str
) -> str:
    """One part of the kernel-name decoder's line in Japanese: a kind of work, or a
    ``tile``/``fuses`` part whose rest (a tile's size, the fused operators' names) is kept as the
    name spells it; any other part as it is. ``word`` wraps each Japanese word (a page keeps
    them whole), ``key`` is how ``part`` was escaped (a page's cells are HTML)."""
    words = _decoded_words(key)
    if part in words:
        return word(words[part])
    for prefix, japanese in DECODED_PREFIXES_JA.items():
        if part.startswith(prefix):
            before, _, after = japanese.partition("{}")
            rest = part.removeprefix(prefix)
            shown_before = word(before.rstrip()) + " " if before.strip() else ""
            shown_after = " " + word(after.lstrip()) if after.strip() else ""
            return f"{shown_before}{rest}{shown_after}"
    return part


def decoded_in_japanese(line: str) -> str:
    """The decoder's whole line (``cuBLAS · GEMM · tile 128x64``) in Japanese, as plain text."""
    return DECODED_SEPARATOR.join(
        decoded_part_in_japanese(p) for p in line.split(DECODED_SEPARATOR)
    )


#: English first: the edition every other one is translated from.
LANGUAGES = ("en", "ja")


def translated(lang: str, en: str, ja: str) -> str:
    """A text in ``lang``: each Japanese text is written beside its English where it is used."""
    return ja if lang == "ja" else en


def edition_language(config: dict) -> str:
    """The language a MkDocs build is for: its theme's language ("ja" in mkdocs.ja.yml)."""
    try:
        language = str(config["theme"]["language"] or "en")
    except (KeyError, TypeError):
        return "en"
    return "ja" if language.startswith("ja") else "en"


def figure_file(svg_name: str, lang: str) -> str:
    """A figure's file in one language: ``timeline.svg`` (English), ``timeline.ja.svg``."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r} (known: {', '.join(LANGUAGES)})")
    if lang == "en":
        return svg_name
    stem = svg_name.removesuffix(".svg")
    return f"{stem}.{lang}.svg"


# -- translated pages ----------------------------------------------------------------------------
# Each page of the Japanese edition (docs-ja/<path>) names the English page it translates and the
# revision of that page it was translated from, in its front matter:
#
#     ---
#     translation_of: part-1/01-first-trace.md
#     translated_from: <git blob id of docs/part-1/01-first-trace.md when it was translated>
#     ---
#
# A test fails when the English page has changed since; `python -m generators.i18n status`
# lists such pages with the command that shows what to translate, and `stamp` records a page as
# translated from the English page as it is now.

REPO_ROOT = Path(__file__).resolve().parents[1]
ENGLISH_DOCS = REPO_ROOT / "docs"
JAPANESE_DOCS = REPO_ROOT / "docs-ja"
#: Pages only the Japanese edition has (the translation's own conventions).
JAPANESE_ONLY = ("terms.md",)
_FRONT_MATTER = re.compile(r"\A---\n(?P<body>.*?)\n---\n", re.S)


class TranslationError(ValueError):
    """A translated page whose front matter is missing or names no English page."""


def blob_id(data: bytes) -> str:
    """Git's object id of a file with these bytes (what `git hash-object FILE` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def front_matter(text: str) -> dict[str, str]:
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}
    fields = {}
    for line in match["body"].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


def translated_pages() -> list[Path]:
    """Every page of the Japanese edition that translates an English one."""
    return sorted(
        p
        for p in JAPANESE_DOCS.rglob("*.md")
        if "includes" not in p.relative_to(JAPANESE_DOCS).parts
        and p.relative_to(JAPANESE_DOCS).as_posix() not in JAPANESE_ONLY
    )


def source_of(page: Path) -> tuple[Path, str | None]:
    """The English page a Japanese page translates, and the revision it was translated from."""
    fields = front_matter(page.read_text(encoding="utf-8"))
    rel = page.relative_to(JAPANESE_DOCS).as_posix()
    if fields.get("translation_of") != rel:
        raise TranslationError(
            f"docs-ja/{rel}: its front matter must start with 'translation_of: {rel}'"
        )
    return ENGLISH_DOCS / rel, fields.get("translated_from")


def stale(page: Path) -> str | None:
    """Why a Japanese page is out of step with its English page (None: it is not)."""
    english, revision = source_of(page)
    rel = page.relative_to(JAPANESE_DOCS).as_posix()
    if not english.exists():
        return f"docs-ja/{rel} translates docs/{rel}, which no longer exists"
    current = blob_id(english.read_bytes())
    if revision == current:
        return None
    if not revision:
        return f"docs-ja/{rel} records no 'translated_from' revision: translate, then stamp it"
    return (
        f"docs/{rel} has changed since docs-ja/{rel} was translated: "
        f"`git diff {revision[:12]} {current[:12]}` shows what to translate; then "
        f"`python -m generators.i18n stamp docs-ja/{rel}`"
    )


def stamp(page: Path) -> None:
    """Record ``page`` as translated from its English page as it is now."""
    text = page.read_text(encoding="utf-8")
    english, _ = source_of(page)
    rel = page.relative_to(JAPANESE_DOCS).as_posix()
    match = _FRONT_MATTER.match(text)
    # The page's own settings (a search boost) stay below the translation record.
    own = [
        line
        for line in (match["body"].splitlines() if match else [])
        if not line.startswith(("translation_of:", "translated_from:"))
    ]
    revision = blob_id(english.read_bytes())
    header = "\n".join(
        ["---", f"translation_of: {rel}", f"translated_from: {revision}", *own, "---", ""]
    )
    body = _FRONT_MATTER.sub("", text, count=1)
    page.write_text(header + body, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m generators.i18n", description="The Japanese edition's translation records."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("status", help="list Japanese pages whose English page changed since")
    stamp_cmd = sub.add_parser("stamp", help="record pages as translated from today's English")
    stamp_cmd.add_argument("pages", nargs="+", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "stamp":
            for page in args.pages:
                if not page.is_file():
                    raise TranslationError(f"{page}: no such page (name the Japanese page's path)")
                stamp(page.resolve())
                print(f"stamped {page}")
            return 0
        problems = [reason for page in translated_pages() if (reason := stale(page))]
    except TranslationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(problems) or "every Japanese page is up to date with its English page")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
