"""Every figure has a Japanese twin: words in Japanese, the same text sizes, a Japanese font.

The English figure ``<name>.svg`` and its twin ``<name>.ja.svg`` are drawn from the same rows;
the twin's titles, legends, axis labels and notes are Japanese, while names from the trace
(kernels, operators, labels), units and numbers stay as they are.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from generators import figures, i18n
from generators.figures import FigureContext, render_svg, text_width_pt
from generators.store import MANIFEST_FILE

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "artifacts"
DEVICE_SETS = sorted(p.name for p in ARTIFACTS.iterdir() if (p / MANIFEST_FILE).exists())
SVG_NS = "{http://www.w3.org/2000/svg}"
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # kana and kanji
#: Words of the English figures' own labels; none belongs in a Japanese figure.
ENGLISH_WORDS = (
    "one profiled step",
    "time since the step started",
    "slices",
    "unnamed",
    "each is named",
    "took ",
    "GPU idle",
    "launch → GPU work",
    "CPU thread",
    " stream ",
    "depth",
    "most time in",
    "who called whom",
    "each slice under",
    "the work each launch",
    "aten:: operator",
    "launch call",
    "GPU work it started",
    "per step",
    "self time",
    "axis not from 0",
    "median",
    "widest",
    "off scale",
    "step width",
    "rest of the step",
    "label start",
    "sequence length",
    "time per forward",
    "for comparison",
    "attn_fwd region",
    "busy time",
    "copies nothing",
    "Shaded",
    "strides",
    "weight W",
    "view made by",
    "decode step",
    "from this forward",
    "named:",
    "bars:",
    "peak ",
    "between phases",
    "allocated",
    "allocator events",
    "time from the first",
    "step #",
    "time per training step",
    "work launched",
    "phase by phase",
)


def manifest(device: str) -> dict:
    return json.loads((ARTIFACTS / device / MANIFEST_FILE).read_text())


def english_figures(device: str) -> list[str]:
    """The manifest's English figures, as paths inside the set."""
    twins = tuple(f".{lang}.svg" for lang in i18n.LANGUAGES if lang != "en")
    return sorted(
        rel
        for rel, entry in manifest(device)["files"].items()
        if entry["kind"] == "figure" and not rel.endswith(twins)
    )


def twin(rel: str, lang: str) -> str:
    folder, _, name = rel.rpartition("/")
    return f"{folder}/{i18n.figure_file(name, lang)}"


def texts(svg: bytes | str) -> list[tuple[str, float, str]]:
    """(text, font size in px, font-family) of every <text> element."""
    root = ET.fromstring(svg)
    out = []
    for node in root.iter(f"{SVG_NS}text"):
        style = dict(
            (k.strip(), v.strip())
            for k, _, v in (part.partition(":") for part in node.get("style", "").split(";"))
            if k.strip()
        )
        size = float(style["font-size"].removesuffix("px"))
        out.append(("".join(node.itertext()), size, style.get("font-family", "")))
    return out


def english_words_in(words: list[str]) -> list[str]:
    joined = "\n".join(words)
    return [w for w in ENGLISH_WORDS if w in joined]


@pytest.mark.parametrize("device", DEVICE_SETS)
def test_every_figure_has_a_twin_per_language(device: str) -> None:
    files = manifest(device)["files"]
    found = english_figures(device)
    assert found, f"{device}: no figure in the manifest"
    missing = [
        twin(rel, lang)
        for rel in found
        for lang in i18n.LANGUAGES
        if lang != "en" and twin(rel, lang) not in files
    ]
    assert not missing, f"{device}: figures without their twin: {', '.join(missing)}"
    for rel in found:
        for lang in i18n.LANGUAGES:
            assert files[twin(rel, lang)]["kind"] == "figure"
            assert (ARTIFACTS / device / twin(rel, lang)).is_file()


@pytest.mark.parametrize("device", DEVICE_SETS)
def test_japanese_figures_speak_japanese_at_the_english_sizes(device: str) -> None:
    root = ARTIFACTS / device
    all_english = [texts((root / rel).read_bytes()) for rel in english_figures(device)]
    smallest_english = min(size for found in all_english for _, size, _ in found)
    problems: list[str] = []
    for rel, english in zip(english_figures(device), all_english, strict=True):
        japanese = texts((root / twin(rel, "ja")).read_bytes())
        words = [text for text, _, _ in japanese]
        if not any(JAPANESE.search(text) for text in words):
            problems.append(f"{rel}: no Japanese text")
        if leftover := english_words_in(words):
            problems.append(f"{rel}: English words in the Japanese figure: {leftover}")
        # The twin keeps its English figure's sizes, so it reads as well at the page's width.
        ja_min = min(size for _, size, _ in japanese)
        en_min = min(size for _, size, _ in english)
        if ja_min < en_min or ja_min < smallest_english:
            problems.append(f"{rel}: Japanese text at {ja_min}px, smaller than the English")
        families = {family for _, _, family in japanese}
        if families != {figures.JA_SVG_FONT_FAMILY}:
            problems.append(f"{rel}: Japanese text in {families}")
        if {family for _, _, family in english} != {"'DejaVu Sans'"}:
            problems.append(f"{rel}: English text not in DejaVu Sans")
    assert not problems, "\n".join(problems)


def _timeline_rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [
        {
            "lane": "CPU thread 1",
            "depth": 0,
            "name": "ProfilerStep#2",
            "category": "user_annotation",
            "start_ns": 0,
            "dur_ns": 20_000,
            "id": 1,
            "launched_by": None,
        },
        {
            "lane": "CPU thread 1",
            "depth": 1,
            "name": "cudaLaunchKernel",
            "category": "cuda_runtime",
            "start_ns": 1_000,
            "dur_ns": 3_000,
            "id": 2,
            "launched_by": None,
        },
    ]
    rows += [
        {
            "lane": "GPU 0 stream 7",
            "depth": 0,
            "name": f"void kernel_{i}<float>(float*)",
            "category": "kernel",
            "start_ns": 5_000 + 4_000 * i,
            "dur_ns": 1_000 + 500 * i,
            "id": 10 + i,
            "launched_by": 2 if i == 0 else None,
        }
        for i in range(3)
    ]
    return rows


def test_japanese_render_is_deterministic_and_english_is_untouched() -> None:
    rows = _timeline_rows()
    en = FigureContext("s", "A step", "v", "cuda")
    ja = FigureContext("s", "あるステップ", "v", "cuda", lang="ja")
    first = render_svg("timeline", rows, ja)
    assert first == render_svg("timeline", rows, ja)
    english = render_svg("timeline", rows, en)
    # Drawing a Japanese figure leaves the English one's bytes as they were.
    assert english == render_svg("timeline", rows, en)
    words = [text for text, _, _ in texts(first)]
    assert any("スレッド" in w for w in words) and any("ストリーム" in w for w in words)
    assert not english_words_in(words)
    assert "IPAexGothic" not in english.decode()


def test_japanese_text_is_measured_in_the_japanese_font() -> None:
    # IPAexGothic's kana are one em wide; DejaVu Sans has none (its fallback box is narrower).
    assert text_width_pt("ステップ", 10, "ja") == pytest.approx(40, abs=0.5)
    # Latin text is measured in the font that draws it in each language.
    assert text_width_pt("aten::mm", 10, "ja") != text_width_pt("aten::mm", 10, "en")
    font = figures.japanese_font_file()
    assert font.name == "ipaexg.ttf" and font.parent.parent.name == "matplotlib_fontja"


def test_unknown_language_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        FigureContext("s", "t", "v", "cpu", lang="fr")
