"""Per-step widths as bars: the time before the first aten:: operator, then the rest of the step.

Data: rows of ``generators/queries/steps.sql`` (step, dur_ns, label_ns, first_op_delay_ns, ...).
A cold run and a warmed-up run drawn with this figure put side by side show why the first
profiled step is often the widest.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from generators.figures import FigureContext, plain_text
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
    fig = Figure(figsize=(8, 3.2))
    ax = fig.add_subplot()
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
    ax.annotate(
        f"widest: {format_duration_ns(dur[widest])}",
        xy=(widest, dur[widest] / scale),
        xytext=(8, -4),
        textcoords="offset points",
        ha="left",
        fontsize=8,
    )
    ax.set_xticks(x, [f"#{s}" for s in steps], fontsize=7 if len(steps) > 10 else 9)
    ax.set_xlabel("ProfilerStep")
    ax.set_ylabel(f"step width ({unit})")
    ax.set_ylim(0, max(dur) / scale * 1.15)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(
        f"{context.variant}: width of each profiled step on {plain_text(context.hardware)}",
        loc="left",
        fontsize=10,
    )
    ax.legend(
        handles=[
            Patch(color=DELAY_COLOR, label="label start → first aten:: operator"),
            Patch(color=REST_COLOR, label="rest of the step"),
        ],
        fontsize=7,
        frameon=False,
        loc="upper right",
    )
    fig.tight_layout()
    return fig
