"""Allocated memory over the profiled training steps, with each phase of a step shaded.

Data: rows of ``generators/queries/train_memory_timeline.sql`` (step, phase, t_ns,
allocated_bytes, one row per allocator event). The curve is a step function: the running total
after each event holds until the next. Phases are shaded by their first and last event, so a
phase that allocates nothing has no band; the peak is marked.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from generators.figures import (
    CONTENT_WIDTH_IN,
    FigureContext,
    plain_text,
    top_legend,
)
from generators.units import format_bytes

#: One colour per phase (Okabe-Ito), shared with the phase bars figure.
PHASE_COLORS = {
    "data": "#999999",
    "to_device": "#CC79A7",
    "forward": "#56B4E9",
    "backward": "#E69F00",
    "optimizer": "#009E73",
    "zero_grad": "#F0E442",
    "log_loss": "#D55E00",
}
#: The query's phase for events outside every labelled phase.
BETWEEN = "between phases"
LINE_COLOR = "#222222"
HEIGHT_IN = 3.6


def _scale(top: float) -> tuple[float, str]:
    for factor, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if top >= 2 * factor:
            return factor, unit
    return 1.0, "bytes"


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no memory events in the steps")
    t = [float(r["t_ns"]) for r in rows]  # type: ignore[arg-type]
    alloc = [float(r["allocated_bytes"]) for r in rows]  # type: ignore[arg-type]
    t_scale, t_unit = (1e6, "ms") if max(t) >= 2e6 else (1e3, "µs")
    b_scale, b_unit = _scale(max(alloc))

    fig = Figure(figsize=(CONTENT_WIDTH_IN, HEIGHT_IN))
    ax = fig.add_axes(
        (0.85 / CONTENT_WIDTH_IN, 0.55 / HEIGHT_IN, 6.75 / CONTENT_WIDTH_IN, 2.3 / HEIGHT_IN)
    )
    # Shade each (step, phase) from its first to its last event.
    spans: dict[tuple[object, str], list[float]] = {}
    for r, x in zip(rows, t, strict=True):
        key = (r["step"], str(r["phase"]))
        span = spans.setdefault(key, [x, x])
        span[1] = x
    phases_seen: list[str] = []
    for (_, phase), (x0, x1) in spans.items():
        if phase not in PHASE_COLORS:
            continue
        ax.axvspan(x0 / t_scale, x1 / t_scale, color=PHASE_COLORS[phase], alpha=0.35, lw=0)
        if phase not in phases_seen:
            phases_seen.append(phase)
    ax.step(
        [x / t_scale for x in t], [a / b_scale for a in alloc], where="post", color=LINE_COLOR, lw=1
    )
    peak = max(range(len(alloc)), key=alloc.__getitem__)
    ax.plot([t[peak] / t_scale], [alloc[peak] / b_scale], "o", color=LINE_COLOR, ms=4)
    peak_bytes, peak_phase = format_bytes(alloc[peak]), plain_text(str(rows[peak]["phase"]))
    if peak_phase == BETWEEN:
        peak_phase = context.t(BETWEEN, "フェーズの間")
    ax.annotate(
        context.t(f"peak {peak_bytes} ({peak_phase})", f"ピーク {peak_bytes}（{peak_phase}）"),
        xy=(t[peak] / t_scale, alloc[peak] / b_scale),
        xytext=(6, -2),
        textcoords="offset points",
        fontsize=8.5,
        va="top",
    )
    # Step boundaries: the first event of each step.
    firsts: dict[object, float] = {}
    for r, x in zip(rows, t, strict=True):
        firsts.setdefault(r["step"], x)
    for step, x in firsts.items():
        ax.axvline(x / t_scale, color="#666666", lw=0.6, ls=":")
        ax.annotate(
            context.t(f"step #{step}", f"ステップ #{step}"),
            xy=(x / t_scale, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(2, -2),
            textcoords="offset points",
            fontsize=8,
            va="top",
        )
    ax.set_xlim(0, max(t) / t_scale * 1.01)
    ax.set_ylim(0, max(alloc) / b_scale * 1.15)
    ax.set_xlabel(
        context.t(
            f"time from the first profiled step's start ({t_unit})",
            f"最初のプロファイル対象ステップの開始からの時間（{t_unit}）",
        ),
        fontsize=9,
    )
    ax.set_ylabel(context.t(f"allocated ({b_unit})", f"確保量（{b_unit}）"), fontsize=9)
    ax.tick_params(labelsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    device = "GPU" if context.device == "cuda" else "CPU"
    fig.text(
        0.1 / CONTENT_WIDTH_IN,
        1 - 0.08 / HEIGHT_IN,
        # The hardware is named under the figure and in the page's provenance box; here it
        # would not fit the figure's width.
        context.t(
            f"{plain_text(context.step_title)} — {plain_text(context.variant)}: {device} memory "
            f"allocated ({len(rows)} allocator events)",
            f"{plain_text(context.step_title)} — {plain_text(context.variant)}: {device} メモリの"
            f"確保量（アロケータのイベント {len(rows)} 件）",
        ),
        fontsize=10,
        va="top",
    )
    top_legend(
        fig,
        HEIGHT_IN,
        handles=[Patch(color=PHASE_COLORS[p], alpha=0.35, label=p) for p in phases_seen],
        ncols=len(phases_seen) or 1,
    )
    return fig
