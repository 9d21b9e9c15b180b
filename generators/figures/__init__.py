"""Figures: one module per figure, each a function from query rows to a matplotlib Figure.

``generators/figures/<name>.py`` defines ``draw(rows, context) -> Figure``. This package renders
it to SVG with settings that make the bytes depend only on the data: a fixed hash salt for
element ids, no date or creator metadata, text kept as text (``svg.fonttype = none``, so no font
outlines from whatever fonts a machine has) and the metrics of fonts that ship with the pinned
packages: DejaVu Sans (matplotlib's own) for English, IPAexGothic (``matplotlib-fontja``) for
Japanese, never a font the machine happens to have.

Each figure is drawn once per language of the guide (``generators.i18n.LANGUAGES``): a module
writes each label as ``context.t("English", "日本語")``, the two side by side where it is used.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib import font_manager
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.legend import Legend

from generators.i18n import LANGUAGES

STYLE = {
    "svg.hashsalt": "profiling-guide",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 11,
    "text.usetex": False,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
}

#: The Japanese figures' font, from the pinned ``matplotlib-fontja`` wheel (IPA Font License).
JA_FONT = "IPAexGothic"
JA_FONT_PACKAGE, JA_FONT_FILE = "matplotlib_fontja", "fonts/ipaexg.ttf"
#: The fonts each language's figures are laid out with, in fallback order: a glyph the first
#: lacks (µ, ≤ in IPAexGothic) is measured in the next, so layout never depends on the machine.
FONT_FAMILIES = {"en": ("DejaVu Sans",), "ja": (JA_FONT, "DejaVu Sans")}
#: What a Japanese SVG asks the browser for instead: the layout font first, then the Japanese
#: fonts that macOS, Windows and Linux desktops carry. An SVG shown as an image loads no fonts
#: of its own, so the browser picks the first of these it has.
JA_SVG_FONT_FAMILY = (
    "'IPAexGothic', 'Hiragino Sans', 'Hiragino Kaku Gothic ProN', 'Noto Sans CJK JP', "
    "'Noto Sans JP', 'Yu Gothic', 'Meiryo', sans-serif"
)

#: One colour per Kineto category, shared by every figure (colour-blind-safe Okabe-Ito palette).
CATEGORY_COLORS = {
    "user_annotation": "#999999",
    "cpu_op": "#56B4E9",
    "cuda_runtime": "#E69F00",
    "cuda_driver": "#D55E00",
    "kernel": "#009E73",
    "gpu_memcpy": "#CC79A7",
    "gpu_memset": "#F0E442",
}
OTHER_COLOR = "#BBBBBB"


@dataclass(frozen=True)
class FigureContext:
    step: str
    step_title: str
    variant: str
    device: str
    environment: dict[str, object] = field(default_factory=dict)
    #: The language the figure's words are written in; ``step_title`` is already in it.
    lang: str = "en"

    def __post_init__(self) -> None:
        if self.lang not in LANGUAGES:
            raise ValueError(f"unknown language {self.lang!r} (known: {', '.join(LANGUAGES)})")

    def t(self, en: str, ja: str) -> str:
        """The figure's language's text of a label: ``context.t("step width", "ステップの幅")``."""
        return ja if self.lang == "ja" else en

    @property
    def hardware(self) -> str:
        env = self.environment
        return str(env.get("gpu") or env.get("cpu_model") or self.device)


def plain_text(text: str) -> str:
    """Text safe for matplotlib: '$' would start mathtext in a kernel or operator name."""
    return text.replace("$", r"\$")


def short_kernel_name(name: str, limit: int = 40) -> str:
    """A readable label for a long C++ kernel name: drop template arguments and parameters."""
    simplified = name.removeprefix("void ")
    # Collapse balanced <...> and (...) groups from the inside out.
    previous = None
    while previous != simplified:
        previous = simplified
        simplified = re.sub(r"<[^<>]*>", "\x00", simplified)
        simplified = re.sub(r"\([^()]*\)", "", simplified)
    simplified = re.sub("\x00+", "<…>", simplified)
    if len(simplified) > limit:
        simplified = simplified[: limit - 1] + "…"
    return simplified


@functools.cache
def japanese_font_file() -> Path:
    """The pinned IPAexGothic file, registered with matplotlib's font manager (once).

    The package is located, not imported: importing it would switch every figure's font. Its
    entries go first in the font list, so that a copy of the font installed on the machine
    (perhaps another version, with other metrics) is never the one measured.
    """
    spec = importlib.util.find_spec(JA_FONT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            f"Japanese figures need the {JA_FONT_PACKAGE} package: "
            "pip install -r requirements/site.txt"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / JA_FONT_FILE
    manager = font_manager.fontManager
    manager.addfont(path)
    ours = [e for e in manager.ttflist if Path(e.fname) == path]
    manager.ttflist = ours + [e for e in manager.ttflist if Path(e.fname) != path]
    found = font_manager.findfont(
        font_manager.FontProperties(family=JA_FONT), fallback_to_default=False
    )
    if Path(found) != path:
        raise RuntimeError(f"{JA_FONT} resolves to {found}, not to the pinned {path}")
    return path


def font_families(lang: str) -> tuple[str, ...]:
    """The fonts a figure in ``lang`` is laid out with (registering the Japanese one)."""
    if lang == "ja":
        japanese_font_file()
    return FONT_FAMILIES[lang]


def render_svg(name: str, rows: list[dict[str, object]], context: FigureContext) -> bytes:
    module = importlib.import_module(f"generators.figures.{name}")
    style = {**STYLE, "font.family": list(font_families(context.lang))}
    with plt.rc_context(style):
        fig: Figure = module.draw(rows, context)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
    svg = buffer.getvalue()
    if context.lang == "ja":
        # matplotlib writes the layout fonts; a browser should look for a Japanese font it has.
        written = "font-family: " + ", ".join(repr(f) for f in FONT_FAMILIES["ja"])
        if written.encode() not in svg:
            raise RuntimeError(f"{name}: no text in {FONT_FAMILIES['ja']} in the Japanese SVG")
        svg = svg.replace(written.encode(), f"font-family: {JA_SVG_FONT_FAMILY}".encode())
    return svg


#: Width of the page's content column in inches (about 750 px): figures drawn this wide show
#: 1 pt of font size as about 1.33 px, so 8 pt text reads at about 10.7 px.
CONTENT_WIDTH_IN = 7.8


def hardware_label(context: FigureContext) -> str:
    """'CPU · AMD EPYC' / 'CUDA · NVIDIA H100 …': the device kind and the hardware, for titles."""
    kind = "CPU" if context.device == "cpu" else context.device.upper()
    hardware = plain_text(context.hardware)
    return kind if hardware.lower() == context.device.lower() else f"{kind} · {hardware}"


def text_width_pt(text: str, size: float, lang: str = "en") -> float:
    """Width of ``text`` in points at font ``size``, in the fonts of ``lang``'s figures."""
    return _text_width_pt(text, size, font_families(lang))


@functools.lru_cache(maxsize=8192)
def _text_width_pt(text: str, size: float, families: tuple[str, ...]) -> float:
    from matplotlib.backends.backend_agg import RendererAgg

    renderer = RendererAgg(10, 10, 72)
    width, _, _ = renderer.get_text_width_height_descent(
        text, font_manager.FontProperties(family=list(families), size=size), ismath=False
    )
    return float(width)


def top_legend(
    fig: Figure,
    height_in: float,
    *,
    ncols: int,
    handles: Sequence[Artist] | None = None,
    labels: Sequence[str] | None = None,
    top_in: float = 0.36,
    fontsize: float = 8.5,
    **options: object,
) -> Legend:
    """One band of legend entries above the plot, under the title, aligned with its left edge.

    ``top_in`` is the distance from the figure's top to the band (inches), so the band stays put
    whatever the figure's height. Without ``handles`` the legend collects the figure's labelled
    artists, as ``Figure.legend`` does. Other ``options`` go to ``Figure.legend``.
    """
    given: dict[str, object] = {}
    if handles is not None:
        given["handles"] = list(handles)
    if labels is not None:
        given["labels"] = list(labels)
    return fig.legend(
        **given,
        fontsize=fontsize,
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(0.05 / CONTENT_WIDTH_IN, 1 - top_in / height_in),
        ncols=ncols,
        borderaxespad=0,
        **options,  # type: ignore[arg-type]
    )
