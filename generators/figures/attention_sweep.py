"""Time per attention forward against sequence length, one line per implementation.

Data: rows of ``generators/queries/attention_sweep.sql`` (impl, seq, cpu_ns_per_fwd,
gpu_ns_per_fwd, ...). Two panels when the capture has GPU work (GPU time, CPU time), one (CPU
time) otherwise, sharing one time axis. Both axes are logarithmic; a dotted grey line of slope 2
marks how a cost that grows with seq² would rise, so a flat stretch (fixed overhead) stands out
against it.
"""

from __future__ import annotations

import math

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from generators.figures import FigureContext, plain_text
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


def _panel(ax: Axes, rows: list[dict[str, object]], column: str, title: str, y_top: float) -> None:
    impls = sorted(
        {str(r["impl"]) for r in rows},
        key=lambda i: list(STYLES).index(i) if i in STYLES else len(STYLES),
    )
    seqs = sorted({int(r["seq"]) for r in rows})  # type: ignore[call-overload]
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
        ax.plot(xs, ys, marker=marker, color=colour, label=plain_text(impl))
        ends.append((ys[-1], xs[-1], colour, format_duration_ns(ys[-1])))
    # Label each line's last point; keep labels at least 9 points apart vertically.
    ends.sort()
    last_offset = None
    for i, (y, x, colour, text) in enumerate(ends):
        offset = 0.0
        if i and last_offset is not None:
            prev_y = ends[i - 1][0]
            gap_pts = 72 * math.log10(y / prev_y) if prev_y > 0 else 99.0
            offset = max(0.0, last_offset + 9 - gap_pts)
        last_offset = offset
        ax.annotate(
            text,
            (x, y),
            textcoords="offset points",
            xytext=(5, offset),
            fontsize=7,
            color=colour,
            va="center",
        )
    all_y = [float(r[column]) for r in rows if r[column] not in (None, "", 0)]  # type: ignore[arg-type]
    if all_y:
        # Reference slope: cost proportional to seq², anchored at the smallest time and cut
        # where it leaves the data's range, so that it does not stretch the axis.
        x0, y0 = seqs[0], min(all_y)
        x1 = min(float(seqs[-1]), x0 * math.sqrt(y_top / y0))
        ax.plot(
            [x0, x1],
            [y0, y0 * (x1 / x0) ** 2],
            linestyle=":",
            color="#999999",
            lw=1,
            label="∝ seq²",
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(seqs, [str(s) for s in seqs])
    ax.minorticks_off()
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_duration_ns(v)))
    ax.set_xlabel("sequence length")
    ax.set_ylabel("time per forward")
    ax.set_title(title, loc="left")
    ax.grid(True, which="major", color="#DDDDDD", lw=0.5)
    ax.spines[["top", "right"]].set_visible(False)


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no sweep forwards in the trace")
    has_gpu = any(r.get("gpu_ns_per_fwd") not in (None, "", 0) for r in rows)
    panels = [("cpu_ns_per_fwd", "CPU time per forward (the attn_fwd region)")]
    if has_gpu:
        panels.insert(0, ("gpu_ns_per_fwd", "GPU time per forward (kernels launched)"))
    fig = Figure(figsize=(5.2 * len(panels), 4.2))
    # One time axis for both panels, so that CPU and GPU time compare at a glance: where a
    # line sits higher in the CPU panel than in the GPU panel, the CPU is the bottleneck.
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)[0]
    y_top = max(
        float(r[c])  # type: ignore[arg-type]
        for r in rows
        for c, _ in panels
        if r[c] not in (None, "", 0)
    )
    for ax, (column, title) in zip(axes, panels, strict=True):
        _panel(ax, rows, column, title, y_top)
    for ax in axes[1:]:
        ax.set_ylabel("")
    axes[0].legend(fontsize=7, frameon=False, loc="upper left")
    fig.suptitle(
        f"Attention forward vs sequence length on {plain_text(context.hardware)}",
        x=0.01,
        ha="left",
        fontsize=11,
    )
    fig.tight_layout()
    return fig
