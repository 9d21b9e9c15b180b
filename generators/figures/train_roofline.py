"""A training step's GPU work on the GPU's roofline: one point per kind of work and phase.

Data: rows of ``generators/queries/train_roofline.sql`` (phase, kind, math, flop_per_byte,
achieved_tflops, kernel_ns, counted_pct, peak_tflops, peak_bytes_per_s). Both axes are
logarithmic: arithmetic intensity (FLOP per byte moved) across, the rate achieved (TFLOP/s) up.
The roofs are the datasheet's: the memory bandwidth's slope, and a flat roof for each kind of
math the points are held to, meeting at that math's ridge point. A point's area grows with its
share of the step's kernel time (its counted part), above a small visible minimum. Work with no
floating-point operations (copies, fills) has no place on these axes; the table beside the
figure gives its bandwidth.
"""

from __future__ import annotations

import math

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from generators.figures import CONTENT_WIDTH_IN, FigureContext, hardware_label, plain_text

HEIGHT_IN = 4.6
#: The smallest point's area (pt²): work with a tiny share of the time stays visible.
MIN_AREA = 12
X_RANGE = (0.02, 10000.0)
Y_RANGE = (0.005, 3000.0)
#: One colour per kind of work (Okabe-Ito), one marker per phase.
KIND_COLORS = {
    "GEMM": "#0072B2",
    "attention": "#D55E00",
    "elementwise and reductions": "#009E73",
    "optimizer": "#CC79A7",
}
PHASE_MARKERS = {"forward": "o", "backward": "^", "optimizer": "s"}
KIND_JA = {
    "GEMM": "GEMM",
    "attention": "アテンション",
    "elementwise and reductions": "要素ごとの演算とリダクション",
    "optimizer": "オプティマイザ",
}
PHASE_JA = {"forward": "順伝播", "backward": "逆伝播", "optimizer": "オプティマイザ"}
MATH_JA = {"bf16": "bf16", "fp32": "fp32"}


def _number(value: object) -> float | None:
    if value in (None, ""):
        return None
    number = float(value)  # type: ignore[arg-type]
    return number if math.isfinite(number) else None


def _decade(value: float, _position: object) -> str:
    """A power of ten as a plain number: 0.01, 0.1, 1, 10, 1,000."""
    return f"{value:,.0f}" if value >= 1 else f"{value:.{round(-math.log10(value))}f}"


def _points(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """The rows that have a place on the axes: counted work and bytes, a rate above zero."""
    points = []
    for r in rows:
        x, y = _number(r.get("flop_per_byte")), _number(r.get("achieved_tflops"))
        if x and y and x > 0 and y > 0:
            counted = (_number(r.get("kernel_ns")) or 0) * (_number(r.get("counted_pct")) or 0)
            points.append({**r, "x": x, "y": y, "time": counted / 100})
    return points


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    points = _points(rows)
    if not points:
        raise ValueError(f"{context.step}/{context.variant}: no work with counted FLOPs and bytes")
    bandwidth = next(_number(r.get("peak_bytes_per_s")) for r in rows)
    if not bandwidth:
        raise ValueError(f"{context.step}/{context.variant}: the GPU's bandwidth is not known")
    roofs = sorted(
        {
            (str(r["math"]), peak)
            for r in points
            if r.get("math") and (peak := _number(r.get("peak_tflops")))
        },
        key=lambda item: -item[1],
    )

    fig = Figure(figsize=(CONTENT_WIDTH_IN, HEIGHT_IN))
    ax = fig.add_axes(
        (0.75 / CONTENT_WIDTH_IN, 0.55 / HEIGHT_IN, 4.55 / CONTENT_WIDTH_IN, 3.45 / HEIGHT_IN)
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*X_RANGE)
    ax.set_ylim(*Y_RANGE)

    # The bandwidth's slope up to the highest roof, then each math's flat roof from its ridge.
    top_ridge = roofs[0][1] * 1e12 / bandwidth if roofs else X_RANGE[1]
    slope_x = [X_RANGE[0], min(top_ridge, X_RANGE[1])]
    ax.plot(slope_x, [x * bandwidth / 1e12 for x in slope_x], color="#444444", lw=1.3)
    # The slope's label sits above it, turned to its angle on the page.
    label_x = 0.5
    label_y = label_x * bandwidth / 1e12
    (x0, y0), (x1, y1) = ax.transData.transform([(label_x, label_y), (label_x * 10, label_y * 10)])
    ax.annotate(
        context.t(
            f"memory bandwidth {bandwidth / 1e12:.1f} TB/s",
            f"メモリ帯域幅 {bandwidth / 1e12:.1f} TB/s",
        ),
        xy=(label_x, label_y),
        xytext=(-6, 8),
        textcoords="offset points",
        rotation=math.degrees(math.atan2(y1 - y0, x1 - x0)),
        rotation_mode="anchor",
        fontsize=8.5,
        color="#444444",
    )
    for math_name, peak in roofs:
        ridge = peak * 1e12 / bandwidth
        ax.plot([ridge, X_RANGE[1]], [peak, peak], color="#444444", lw=1.3)
        ax.annotate(
            context.t(
                f"{math_name} peak {peak:g} TFLOP/s (ridge {ridge:.0f} FLOP/B)",
                f"{MATH_JA.get(math_name, math_name)} ピーク {peak:g} TFLOP/s"
                f"（リッジ {ridge:.0f} FLOP/B）",
            ),
            # The highest roof's label above its line, at the right; the others' below theirs,
            # from their ridge, clear of the slope and of the points under the highest roof.
            xy=(X_RANGE[1], peak) if peak == roofs[0][1] else (ridge * 1.05, peak),
            xytext=(-4, 4) if peak == roofs[0][1] else (0, -4),
            textcoords="offset points",
            ha="right" if peak == roofs[0][1] else "left",
            va="bottom" if peak == roofs[0][1] else "top",
            fontsize=8.5,
            color="#444444",
        )

    # Areas share the whole step's kernel time, copies and fills (not drawn) included.
    total = sum(_number(r.get("kernel_ns")) or 0 for r in rows) or 1.0
    for p in points:
        kind, phase = str(p["kind"]), str(p["phase"])
        ax.scatter(
            [p["x"]],
            [p["y"]],
            s=MIN_AREA + 900 * float(p["time"]) / total,  # type: ignore[arg-type]
            marker=PHASE_MARKERS.get(phase, "D"),
            color=KIND_COLORS.get(kind, "#999999"),
            alpha=0.85,
            edgecolors="white",
            linewidths=0.6,
            zorder=3,
        )
    ax.set_xlabel(
        context.t(
            "arithmetic intensity (FLOP per byte moved)",
            "演算強度（動かした 1 バイトあたりの FLOP）",
        ),
        fontsize=9,
    )
    ax.set_ylabel(context.t("achieved (TFLOP/s)", "達成性能（TFLOP/s）"), fontsize=9)
    # Decades as plain numbers (1,000 rather than a superscript, which would be drawn smaller).
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10))
        axis.set_major_formatter(FuncFormatter(_decade))
        axis.set_minor_formatter(NullFormatter())
    ax.tick_params(labelsize=8.5)
    ax.grid(True, which="major", color="#E6E6E6", lw=0.6)
    ax.set_axisbelow(True)
    ax.spines[["top", "right"]].set_visible(False)

    kinds = [k for k in KIND_COLORS if any(p["kind"] == k for p in points)]
    phases = [ph for ph in PHASE_MARKERS if any(p["phase"] == ph for p in points)]
    kind_handles = [
        Line2D(
            [],
            [],
            marker="o",
            ls="",
            color=KIND_COLORS[k],
            markersize=8,
            label=context.t(k, KIND_JA.get(k, k)),
        )
        for k in kinds
    ]
    phase_handles = [
        Line2D(
            [],
            [],
            marker=PHASE_MARKERS[ph],
            ls="",
            color="#666666",
            markersize=7,
            label=context.t(ph, PHASE_JA.get(ph, ph)),
        )
        for ph in phases
    ]
    legend_x = 5.45 / CONTENT_WIDTH_IN
    kind_legend = fig.legend(
        handles=kind_handles,
        title=context.t("work (colour)", "処理（色）"),
        loc="upper left",
        bbox_to_anchor=(legend_x, 4.0 / HEIGHT_IN),
        frameon=False,
        fontsize=8.5,
        title_fontsize=9,
        alignment="left",
    )
    fig.add_artist(kind_legend)
    fig.legend(
        handles=phase_handles,
        title=context.t("phase (shape)", "フェーズ（形）"),
        loc="upper left",
        bbox_to_anchor=(legend_x, 2.25 / HEIGHT_IN),
        frameon=False,
        fontsize=8.5,
        title_fontsize=9,
        alignment="left",
    )
    fig.text(
        legend_x + 0.08 / CONTENT_WIDTH_IN,
        0.75 / HEIGHT_IN,
        context.t(
            "area: share of the\nstep's kernel time",
            "面積: ステップの\nカーネル時間に占める割合",
        ),
        fontsize=8.5,
        color="#444444",
        va="top",
    )
    fig.text(
        0.1 / CONTENT_WIDTH_IN,
        1 - 0.08 / HEIGHT_IN,
        context.t(
            f"{plain_text(context.step_title)} — {plain_text(context.variant)}: the step's "
            f"work on the roofline of {hardware_label(context)}",
            f"{plain_text(context.step_title)} — {plain_text(context.variant)}: "
            f"{hardware_label(context)} のルーフライン上の 1 ステップの処理",
        ),
        fontsize=10,
        va="top",
    )
    return fig
