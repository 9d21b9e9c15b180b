"""One profiled step as lanes: the CPU thread's nested slices above, each GPU stream below.

Data: rows of ``generators/queries/timeline.sql`` (lane, depth, name, category, start_ns,
dur_ns, id, launched_by). Arrows join each launch to the GPU work it started; the longest idle
gap on each GPU lane is measured on the figure.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from generators.figures import (
    CATEGORY_COLORS,
    OTHER_COLOR,
    FigureContext,
    plain_text,
    short_kernel_name,
)
from generators.units import format_duration_ns

ROW_HEIGHT = 0.8
LANE_GAP = 0.6


def _layout(rows: list[dict[str, object]]) -> tuple[dict[str, float], list[str], float]:
    """y offset of each lane (CPU lanes first), and the total height."""
    lanes = sorted(
        {str(r["lane"]) for r in rows}, key=lambda lane: (not lane.startswith("CPU"), lane)
    )
    offsets: dict[str, float] = {}
    y = 0.0
    for lane in lanes:
        offsets[lane] = y
        depth = max(int(r["depth"]) for r in rows if r["lane"] == lane)  # type: ignore[arg-type]
        y += depth + 1 + LANE_GAP
    return offsets, lanes, y - LANE_GAP


def _longest_gap(spans: list[tuple[float, float]]) -> tuple[float, float] | None:
    spans = sorted(spans)
    best: tuple[float, float] | None = None
    end = spans[0][1] if spans else 0.0
    for start, stop in spans[1:]:
        if start > end and (best is None or start - end > best[1] - best[0]):
            best = (end, start)
        end = max(end, stop)
    return best


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no slices in the first step")
    offsets, lanes, height = _layout(rows)
    step_row = min(
        (r for r in rows if str(r["name"]).startswith("ProfilerStep#")),
        key=lambda r: r["start_ns"],  # type: ignore[arg-type, return-value]
        default=None,
    )
    end_ns = max(float(r["start_ns"]) + float(r["dur_ns"]) for r in rows)  # type: ignore[arg-type]
    scale, unit = (1e3, "µs") if end_ns < 5e6 else (1e6, "ms")

    fig = Figure(figsize=(10, 1.2 + 0.42 * height))
    ax = fig.add_subplot()
    centres: dict[int, tuple[float, float]] = {}
    for row in rows:
        lane = str(row["lane"])
        y = offsets[lane] + int(row["depth"])  # type: ignore[arg-type]
        x0 = float(row["start_ns"]) / scale  # type: ignore[arg-type]
        width = float(row["dur_ns"]) / scale  # type: ignore[arg-type]
        colour = CATEGORY_COLORS.get(str(row["category"]), OTHER_COLOR)
        ax.barh(y, width, left=x0, height=ROW_HEIGHT, color=colour, edgecolor="#333333", lw=0.4)
        centres[int(row["id"])] = (x0 + width / 2, y)  # type: ignore[arg-type]
        name = str(row["name"])
        label = short_kernel_name(name) if row["category"] == "kernel" else name
        # Only label bars wide enough to hold the text (about 0.6 % of the axis per character).
        if width >= len(label) * end_ns / scale * 0.0065:
            ax.text(x0 + width / 2, y, plain_text(label), ha="center", va="center", fontsize=7)

    for row in rows:
        launcher = row.get("launched_by")
        if launcher is not None and int(launcher) in centres:  # type: ignore[arg-type]
            (x1, y1), (x2, y2) = centres[int(launcher)], centres[int(row["id"])]  # type: ignore[arg-type]
            ax.annotate(
                "",
                xy=(x2, y2 - ROW_HEIGHT / 2),
                xytext=(x1, y1 + ROW_HEIGHT / 2),
                arrowprops={"arrowstyle": "->", "color": "#D55E00", "lw": 0.8},
            )

    for lane in lanes:
        if lane.startswith("CPU"):
            continue
        spans = [
            (float(r["start_ns"]), float(r["start_ns"]) + float(r["dur_ns"]))  # type: ignore[arg-type]
            for r in rows
            if r["lane"] == lane
        ]
        gap = _longest_gap(spans)
        if gap:
            y = offsets[lane] - 0.75
            ax.annotate(
                "",
                xy=(gap[0] / scale, y),
                xytext=(gap[1] / scale, y),
                arrowprops={"arrowstyle": "<->", "color": "#333333", "lw": 0.8},
            )
            ax.text(
                (gap[0] + gap[1]) / 2 / scale,
                y - 0.15,
                f"GPU idle {format_duration_ns(gap[1] - gap[0])}",
                ha="center",
                va="bottom",
                fontsize=7,
            )

    ax.set_yticks([offsets[lane] for lane in lanes], [plain_text(lane) for lane in lanes])
    ax.set_ylim(height - 0.5 + 0.2, -1.4)
    ax.set_xlim(0, end_ns / scale * 1.02)
    ax.set_xlabel(f"time since the step started ({unit})")
    ax.spines[["top", "right"]].set_visible(False)
    title = f"{context.step_title}: one profiled step on {plain_text(context.hardware)}"
    if step_row is not None:
        title += f" — {step_row['name']} took {format_duration_ns(float(step_row['dur_ns']))}"  # type: ignore[arg-type]
    ax.set_title(title, loc="left")
    present = sorted({str(r["category"]) for r in rows})
    ax.legend(
        handles=[Patch(color=CATEGORY_COLORS.get(c, OTHER_COLOR), label=c) for c in present],
        loc="upper center",
        fontsize=7,
        frameon=False,
        ncols=len(present),
        bbox_to_anchor=(0.5, -0.22),
    )
    fig.tight_layout()
    return fig
