"""Figures: one module per figure, each a function from query rows to a matplotlib Figure.

``generators/figures/<name>.py`` defines ``draw(rows, context) -> Figure``. This package renders
it to SVG with settings that make the bytes depend only on the data: a fixed hash salt for
element ids, no date or creator metadata, text kept as text (``svg.fonttype = none``, so no font
outlines from whatever fonts a machine has) and the DejaVu Sans metrics that ship with matplotlib.
"""

from __future__ import annotations

import functools
import importlib
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.legend import Legend

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


def render_svg(name: str, rows: list[dict[str, object]], context: FigureContext) -> bytes:
    module = importlib.import_module(f"generators.figures.{name}")
    with plt.rc_context(STYLE):
        fig: Figure = module.draw(rows, context)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
    return buffer.getvalue()


#: Width of the page's content column in inches (about 750 px): figures drawn this wide show
#: 1 pt of font size as about 1.33 px, so 8 pt text reads at about 10.7 px.
CONTENT_WIDTH_IN = 7.8


def hardware_label(context: FigureContext) -> str:
    """'CPU · AMD EPYC' / 'CUDA · NVIDIA H100 …': the device kind and the hardware, for titles."""
    kind = "CPU" if context.device == "cpu" else context.device.upper()
    hardware = plain_text(context.hardware)
    return kind if hardware.lower() == context.device.lower() else f"{kind} · {hardware}"


@functools.lru_cache(maxsize=4096)
def text_width_pt(text: str, size: float) -> float:
    """Width of ``text`` in points at font ``size``, from the bundled DejaVu Sans metrics."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    renderer = RendererAgg(10, 10, 72)
    width, _, _ = renderer.get_text_width_height_descent(
        text, FontProperties(family="DejaVu Sans", size=size), ismath=False
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
