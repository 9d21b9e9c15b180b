"""One decode step of the LLM: the CPU thread above, the GPU stream below, on one time axis.

Data: rows of ``generators/queries/llm_decode_timeline.sql`` (the columns of the generic
``timeline`` query, for the decode step in the middle of the first profiled ``generate`` call).
Drawn by the generic timeline figure, with a title that says which step it is.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from generators.figures import FigureContext, plain_text, timeline
from generators.units import format_duration_ns


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    fig = timeline.draw(rows, context)
    end_ns = max(float(r["start_ns"]) + float(r["dur_ns"]) for r in rows)  # type: ignore[arg-type]
    kernels = sum(1 for r in rows if r["category"] == "kernel")
    title = (
        f"One decode step ({context.variant}) on {plain_text(context.hardware)}: "
        f"{format_duration_ns(end_ns)} from this forward's start to the next"
    )
    if kernels:
        title += f", {kernels} kernels"
    fig.axes[0].set_title(title, loc="left")
    return fig
