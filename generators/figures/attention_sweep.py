"""Time per attention forward against sequence length, one line per implementation.

Data: rows of ``generators/queries/attention_sweep.sql`` (impl, seq, cpu_ns_per_fwd,
gpu_ns_per_fwd, ...). Two panels when the capture has GPU work (GPU time, CPU time), one (CPU
time) otherwise, sharing one time axis. Both axes are logarithmic; a dotted grey line of slope 2
marks how a cost that grows with seq² would rise, so a flat stretch (fixed overhead) stands out
against it.

The layout is fixed in inches at the page's width, so the labels at the lines' right ends can be
spread apart in points before drawing: lines that end close together (the CPU panel's) get
labels one above the other instead of on top of each other. The legend sits above the panels.
"""

from __future__ import annotations

import math

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from generators.figures import (
    CONTENT_WIDTH_IN,
    FigureContext,
    hardware_label,
    plain_text,
    top_legend,
)
from generators.units import format_duration_ns

#: A fixed colour and marker per implementation (Okabe-Ito), whatever subset a capture has.
STYLES = {
    "naive": ("#999999", "o"),
    "naive_inplace": ("#000000", "o"),
    "sdpa_math": ("#E69F00", "s"),
    "sdpa_efficient": ("#56B4E9", "^"),
    "sdpa_flash": ("#009E73", "D"),
    "sdpa_cudnn": ("#CC79A7", "v"),
}
HEIGHT_IN = 4.7
TOP_IN = 1.15  # title, legend and panel titles
BOTTOM_IN = 0.6  # tick labels and axis label
LEFT_IN = 0.8
END_LABELS_IN = 0.6  # right of each panel, for the labels at the lines' ends
RIGHT_IN = 0.1
TICK_PT = 9.0
LABEL_PT = 8.5
LABEL_GAP_PT = LABEL_PT * 1.2  # end labels at least this far apart vertically


def _spread(wanted: list[float], gap: float, low: float, high: float) -> list[float]:
    """Positions (points) near ``wanted`` (sorted), at least ``gap`` apart, within [low, high]."""
    placed: list[float] = []
    for y in wanted:
        placed.append(max(y, placed[-1] + gap) if placed else max(y, low))
    if placed and placed[-1] > high:  # pushed past the top: push back down from there
        placed[-1] = high
        for i in range(len(placed) - 2, -1, -1):
            placed[i] = min(placed[i], placed[i + 1] - gap)
    return placed


def _panel(
    ax: Axes,
    rows: list[dict[str, object]],
    column: str,
    title: str,
    y_range: tuple[float, float],
    height_pt: float,
    context: FigureContext,
) -> None:
    impls = sorted(
        {str(r["impl"]) for r in rows},
        key=lambda i: list(STYLES).index(i) if i in STYLES else len(STYLES),
    )
    seqs = sorted({int(r["seq"]) for r in rows})  # type: ignore[call-overload]
    lo, hi = y_range
    ends: list[tuple[float, float, str, str]] = []
    for impl in impls:
        points = sorted(
            (int(r["seq"]), float(r[column]))  # type: ignore[call-overload, arg-type]
            for r in rows
            if r["impl"] == impl and r[column] not in (None, "", 0)
        )
        if not points:
            continue
        colour, marker = STYLES.get(impl, ("#BBBBBB", "o"))
        xs, ys = zip(*points, strict=True)
        ax.plot(xs, ys, marker=marker, ms=5, color=colour, label=plain_text(impl))
        ends.append((ys[-1], xs[-1], colour, format_duration_ns(ys[-1])))

    # Each line's last value at its right end, spread apart in points on the fixed axes.
    def to_pt(y: float) -> float:
        return (math.log10(y) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * height_pt

    ends.sort()
    spread = _spread([to_pt(y) for y, *_ in ends], LABEL_GAP_PT, LABEL_PT / 2, height_pt)
    for (y, x, colour, text), at in zip(ends, spread, strict=True):
        ax.annotate(
            text,
            (x, y),
            textcoords="offset points",
            xytext=(7, at - to_pt(y)),
            fontsize=LABEL_PT,
            color=colour,
            va="center",
            annotation_clip=False,
        )
    all_y = [float(r[column]) for r in rows if r[column] not in (None, "", 0)]  # type: ignore[arg-type]
    if all_y:
        # Reference slope: cost proportional to seq², anchored at the smallest time and cut
        # where it leaves the axis, so that it does not stretch it.
        x0, y0 = seqs[0], min(all_y)
        x1 = min(float(seqs[-1]), x0 * math.sqrt(hi / y0))
        ax.plot(
            [x0, x1],
            [y0, y0 * (x1 / x0) ** 2],
            linestyle=":",
            color="#777777",
            lw=1.2,
            label=context.t("∝ seq² (for comparison)", "∝ seq²（比較用）"),
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    ax.set_xlim(seqs[0] / 1.25, seqs[-1] * 1.25)
    ax.set_xticks(seqs, [str(s) for s in seqs])
    ax.minorticks_off()
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_duration_ns(v)))
    ax.tick_params(labelsize=TICK_PT)
    ax.set_xlabel(context.t("sequence length", "系列長"), fontsize=TICK_PT)
    ax.set_title(title, loc="left", fontsize=9.5)
    ax.grid(True, which="major", color="#DDDDDD", lw=0.5)
    ax.spines[["top", "right"]].set_visible(False)


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no sweep forwards in the trace")
    has_gpu = any(r.get("gpu_ns_per_fwd") not in (None, "", 0) for r in rows)
    panels = [("cpu_ns_per_fwd", context.t("CPU: the attn_fwd region", "CPU: attn_fwd の区間"))]
    if has_gpu:
        panels.insert(
            0,
            ("gpu_ns_per_fwd", context.t("GPU: busy time of its work", "GPU: その処理の稼働時間")),
        )
    values = [
        float(r[c])  # type: ignore[arg-type]
        for r in rows
        for c, _ in panels
        if r[c] not in (None, "", 0)
    ]
    # One time axis for both panels, so that CPU and GPU time compare at a glance: where a
    # line sits higher in the CPU panel than in the GPU panel, the CPU is the bottleneck.
    y_range = (min(values) / 1.6, max(values) * 1.6)
    fig = Figure(figsize=(CONTENT_WIDTH_IN, HEIGHT_IN))
    panel_w = (CONTENT_WIDTH_IN - LEFT_IN - RIGHT_IN) / len(panels) - END_LABELS_IN
    axes_h = HEIGHT_IN - TOP_IN - BOTTOM_IN
    axes: list[Axes] = []
    for i, (column, title) in enumerate(panels):
        left = LEFT_IN + i * (panel_w + END_LABELS_IN)
        ax = fig.add_axes(
            (
                left / CONTENT_WIDTH_IN,
                BOTTOM_IN / HEIGHT_IN,
                panel_w / CONTENT_WIDTH_IN,
                axes_h / HEIGHT_IN,
            ),
            sharey=axes[0] if axes else None,
        )
        _panel(ax, rows, column, title, y_range, axes_h * 72, context)
        if i:
            ax.tick_params(labelleft=False)
        else:
            ax.set_ylabel(
                context.t("time per forward", "順伝播 1 回あたりの時間"), fontsize=TICK_PT
            )
        axes.append(ax)
    fig.text(
        0.1 / CONTENT_WIDTH_IN,
        1 - 0.08 / HEIGHT_IN,
        context.t(
            f"{plain_text(context.step_title)} — forward time vs sequence length on "
            f"{hardware_label(context)}",
            f"{plain_text(context.step_title)} — {hardware_label(context)} での系列長と順伝播時間",
        ),
        fontsize=10.5,
        va="top",
    )
    handles, labels = axes[0].get_legend_handles_labels()
    top_legend(
        fig,
        HEIGHT_IN,
        handles=handles,
        labels=labels,
        ncols=4,
        top_in=0.34,
        fontsize=LABEL_PT,
        columnspacing=1.5,
    )
    return fig
