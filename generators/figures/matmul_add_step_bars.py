"""Per-step widths as bars: the time before the first aten:: operator, then the rest of the step.

Data: rows of ``generators/queries/steps.sql`` (step, dur_ns, label_ns, first_op_delay_ns, ...).
A cold run and a warmed-up run drawn with this figure put side by side show why the first
profiled step is often the widest.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from generators.figures import CONTENT_WIDTH_IN, FigureContext, hardware_label, plain_text
from generators.units import format_duration_ns

DELAY_COLOR = "#D55E00"
REST_COLOR = "#56B4E9"


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no profiled steps")
    steps = [int(r["step"]) for r in rows]  # type: ignore[arg-type]
    dur = [float(r["dur_ns"]) for r in rows]  # type: ignore[arg-type]
    delay = [float(r["first_op_delay_ns"] or 0) for r in rows]  # type: ignore[arg-type]
    scale, unit = (1e3, "µs") if max(dur) < 5e6 else (1e6, "ms")
    fig = Figure(figsize=(CONTENT_WIDTH_IN, 3.4))
    # Fixed margins (inches): title and legend above the plot, tick labels below.
    ax = fig.add_axes((0.8 / CONTENT_WIDTH_IN, 0.55 / 3.4, 6.8 / CONTENT_WIDTH_IN, 2.15 / 3.4))
    x = list(range(len(steps)))
    ax.bar(x, [d / scale for d in delay], color=DELAY_COLOR, width=0.7)
    ax.bar(
        x,
        [(t - d) / scale for t, d in zip(dur, delay, strict=True)],
        bottom=[d / scale for d in delay],
        color=REST_COLOR,
        width=0.7,
    )
    widest = max(range(len(dur)), key=dur.__getitem__)
    # Above the bar's top, centred on it (kept inside the axes at either end).
    ha = "left" if widest == 0 and len(x) > 3 else "right" if widest == len(x) - 1 else "center"
    ax.annotate(
        f"widest: {format_duration_ns(dur[widest])}",
        xy=(widest + {"left": -0.35, "right": 0.35, "center": 0.0}[ha], dur[widest] / scale),
        xytext=(0, 3),
        textcoords="offset points",
        ha=ha,
        va="bottom",
        fontsize=8.5,
    )
    ax.set_xticks(x, [f"#{s}" for s in steps], fontsize=8 if len(steps) > 10 else 9)
    ax.tick_params(axis="y", labelsize=9)
    ax.set_xlabel("ProfilerStep", fontsize=9)
    ax.set_ylabel(f"step width ({unit})", fontsize=9)
    ax.set_xlim(-0.6, len(x) - 0.4)
    ax.set_ylim(0, max(dur) / scale * 1.18)
    ax.spines[["top", "right"]].set_visible(False)
    fig.text(
        0.1 / CONTENT_WIDTH_IN,
        1 - 0.08 / 3.4,
        f"{plain_text(context.step_title)} — {plain_text(context.variant)}: "
        f"width of each profiled step on {hardware_label(context)}",
        fontsize=10.5,
        va="top",
    )
    fig.legend(
        handles=[
            Patch(color=DELAY_COLOR, label="label start → first aten:: operator"),
            Patch(color=REST_COLOR, label="rest of the step"),
        ],
        fontsize=8.5,
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(0.05 / CONTENT_WIDTH_IN, 1 - 0.36 / 3.4),
        ncols=2,
        borderaxespad=0,
    )
    return fig
