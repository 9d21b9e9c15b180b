"""A training step's phases as one horizontal bar per device side: CPU time, and GPU time.

Data: rows of ``generators/queries/train_phases.sql`` (phase, cpu_ns, step_pct, gpu_ns, ...),
averages per step. The CPU bar is the step's wall time on its thread, phase by phase in the
order they run, with the rest of the step in grey; the GPU bar (GPU traces only) stacks the GPU
time of the work each phase launched.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from generators.figures import (
    CONTENT_WIDTH_IN,
    FigureContext,
    hardware_label,
    plain_text,
    top_legend,
)
from generators.figures.train_memory import PHASE_COLORS
from generators.units import format_duration_ns

REST_COLOR = "#DDDDDD"
HEIGHT_IN = 2.9
#: The query's name for the time outside every phase (the phases' own names are labels).
REST = "rest of the step"


def _phase(name: str, context: FigureContext) -> str:
    """A phase's legend entry: the record_function label as it is, the rest in words."""
    return context.t(REST, "ステップの残り") if name == REST else plain_text(name)


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no phases")
    bars: list[tuple[str, str]] = [(context.t("CPU thread", "CPU スレッド"), "cpu_ns")]
    if any(r.get("gpu_ns") not in (None, "") for r in rows):
        bars.append((context.t("GPU (work launched)", "GPU（起動した処理）"), "gpu_ns"))
    totals = {col: sum(float(r[col] or 0) for r in rows) for _, col in bars}  # type: ignore[arg-type]
    scale, unit = (1e6, "ms") if max(totals.values()) >= 2e6 else (1e3, "µs")

    fig = Figure(figsize=(CONTENT_WIDTH_IN, HEIGHT_IN))
    ax = fig.add_axes(
        (1.45 / CONTENT_WIDTH_IN, 0.5 / HEIGHT_IN, 6.15 / CONTENT_WIDTH_IN, 1.35 / HEIGHT_IN)
    )
    seen: list[str] = []
    for y, (_label, col) in enumerate(reversed(bars)):
        left = 0.0
        for r in rows:
            value = float(r[col] or 0)  # type: ignore[arg-type]
            if value <= 0:
                continue
            phase = str(r["phase"])
            color = PHASE_COLORS.get(phase, REST_COLOR)
            ax.barh(
                y,
                value / scale,
                left=left / scale,
                color=color,
                height=0.6,
                edgecolor="white",
                lw=0.5,
            )
            if phase not in seen:
                seen.append(phase)
            left += value
        ax.annotate(
            format_duration_ns(left),
            xy=(left / scale, y),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8.5,
        )
    ax.set_yticks(range(len(bars)), [label for label, _ in reversed(bars)], fontsize=9)
    ax.set_xlim(0, max(totals.values()) / scale * 1.15)
    ax.set_xlabel(
        context.t(f"time per training step ({unit})", f"学習ステップ 1 回あたりの時間（{unit}）"),
        fontsize=9,
    )
    ax.tick_params(axis="x", labelsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    fig.text(
        0.1 / CONTENT_WIDTH_IN,
        1 - 0.08 / HEIGHT_IN,
        context.t(
            f"{plain_text(context.step_title)} — {plain_text(context.variant)}: one step, phase "
            f"by phase, on {hardware_label(context)}",
            f"{plain_text(context.step_title)} — {plain_text(context.variant)}: "
            f"{hardware_label(context)} での 1 ステップのフェーズ別内訳",
        ),
        fontsize=10,
        va="top",
    )
    top_legend(
        fig,
        HEIGHT_IN,
        handles=[
            Patch(color=PHASE_COLORS.get(p, REST_COLOR), label=_phase(p, context)) for p in seen
        ],
        ncols=min(len(seen), 4),
    )
    return fig
