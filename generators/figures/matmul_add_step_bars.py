"""Per-step widths as bars: the time before the first aten:: operator, then the rest of the step.

Data: rows of ``generators/queries/steps.sql`` (step, dur_ns, label_ns, first_op_delay_ns, ...).
A cold run and a warmed-up run drawn with this figure put side by side show why the first
profiled step is often the widest.

A dashed line marks the median step (the lower middle value, as the values queries define it).
When one step is many times wider than all the others (the profiler's start-up in the first
step), a linear axis up to it would flatten every other bar to nothing: the axis then fits the
other steps, and the widest bar is cut with a break mark and labelled with its width.
"""

from __future__ import annotations

import statistics

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from generators.figures import (
    CONTENT_WIDTH_IN,
    FigureContext,
    hardware_label,
    plain_text,
    top_legend,
)
from generators.units import format_duration_ns

DELAY_COLOR = "#D55E00"
REST_COLOR = "#56B4E9"
MEDIAN_COLOR = "#333333"
HEIGHT_IN = 3.4
#: The widest step goes off scale when it is more than this many times the next widest.
OFF_SCALE_RATIO = 6.0


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no profiled steps")
    steps = [int(r["step"]) for r in rows]  # type: ignore[arg-type]
    dur = [float(r["dur_ns"]) for r in rows]  # type: ignore[arg-type]
    delay = [float(r["first_op_delay_ns"] or 0) for r in rows]  # type: ignore[arg-type]
    widest = max(range(len(dur)), key=dur.__getitem__)
    others = [d for i, d in enumerate(dur) if i != widest]
    off_scale = bool(others) and dur[widest] > OFF_SCALE_RATIO * max(others)
    top_ns = max(others) if off_scale else dur[widest]
    scale, unit = (1e3, "µs") if top_ns < 5e6 else (1e6, "ms")
    y_top = top_ns / scale * (1.3 if off_scale else 1.18)
    median = statistics.median_low(dur)

    fig = Figure(figsize=(CONTENT_WIDTH_IN, HEIGHT_IN))
    # Fixed margins (inches): title and legend above the plot, tick labels below.
    ax = fig.add_axes(
        (0.8 / CONTENT_WIDTH_IN, 0.55 / HEIGHT_IN, 6.8 / CONTENT_WIDTH_IN, 2.1 / HEIGHT_IN)
    )
    x = list(range(len(steps)))
    ax.bar(x, [d / scale for d in delay], color=DELAY_COLOR, width=0.7)
    ax.bar(
        x,
        [(t - d) / scale for t, d in zip(dur, delay, strict=True)],
        bottom=[d / scale for d in delay],
        color=REST_COLOR,
        width=0.7,
    )
    ax.axhline(median / scale, color=MEDIAN_COLOR, ls="--", lw=1, zorder=3)
    # The widest bar's label: above its top, or, off scale, above the axis's top where it is cut.
    ha = "left" if widest == 0 and len(x) > 3 else "right" if widest == len(x) - 1 else "center"
    widest_ns = format_duration_ns(dur[widest])
    label = context.t(f"widest: {widest_ns}", f"最長: {widest_ns}")
    if off_scale:
        text = context.t(
            f"#{steps[widest]}: {widest_ns}, off scale",
            f"#{steps[widest]}: {widest_ns}（軸の範囲外）",
        )
        on_right = widest < len(x) / 2  # the label goes on the side with more room
        label = f"← {text}" if on_right else f"{text} →"
        # Two white slashes across the bar: the axis is broken there.
        for dy in (0.9, 0.94):
            ax.plot(
                [widest - 0.45, widest + 0.45],
                [y_top * (dy - 0.03), y_top * (dy + 0.03)],
                color="white",
                lw=2.5,
                clip_on=False,
                zorder=4,
            )
    if off_scale:  # beside the break, where the other bars are lower
        ax.annotate(
            label,
            xy=(widest + (0.45 if on_right else -0.45), y_top * 0.92),
            xytext=(4 if on_right else -4, 0),
            textcoords="offset points",
            ha="left" if on_right else "right",
            va="center",
            fontsize=8.5,
            bbox={"boxstyle": "square,pad=0.15", "fc": "white", "ec": "none"},
            zorder=5,
        )
    else:
        ax.annotate(
            label,
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
    ax.set_ylabel(context.t(f"step width ({unit})", f"ステップの幅（{unit}）"), fontsize=9)
    ax.set_xlim(-0.6, len(x) - 0.4)
    ax.set_ylim(0, y_top)
    ax.spines[["top", "right"]].set_visible(False)
    fig.text(
        0.1 / CONTENT_WIDTH_IN,
        1 - 0.08 / HEIGHT_IN,
        context.t(
            f"{plain_text(context.step_title)} — {plain_text(context.variant)}: "
            f"width of each profiled step on {hardware_label(context)}",
            f"{plain_text(context.step_title)} — {plain_text(context.variant)}: "
            f"{hardware_label(context)} でのプロファイル対象ステップごとの幅",
        ),
        fontsize=10.5,
        va="top",
    )
    top_legend(
        fig,
        HEIGHT_IN,
        handles=[
            Patch(
                color=DELAY_COLOR,
                label=context.t(
                    "label start → first aten:: operator", "ラベルの開始 → 最初の aten:: 演算子"
                ),
            ),
            Patch(color=REST_COLOR, label=context.t("rest of the step", "ステップの残り")),
            Line2D(
                [],
                [],
                color=MEDIAN_COLOR,
                ls="--",
                lw=1,
                label=context.t("median step ", "ステップの中央値 ") + format_duration_ns(median),
            ),
        ],
        ncols=3,
    )
    return fig
