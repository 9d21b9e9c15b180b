"""The same matrix multiply, step after step: one dot per step with min, median and max lines.

Data: rows of ``generators/queries/matmul_add_gemm_steps.sql`` (step, op_name, cpu_self_ns,
kernel_name, kernel_ns, achieved_tflops). Kernel durations when the trace has them (a GPU
capture), else the operator's CPU self time.

The y axis spans the data, not zero to the maximum: the figure is about the spread between
steps, which an axis from zero flattens into one line. The axis label says where it starts, and
the legend sits above the plot, clear of the dots.
"""

from __future__ import annotations

import statistics

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from generators.figures import (
    CONTENT_WIDTH_IN,
    FigureContext,
    hardware_label,
    plain_text,
    short_kernel_name,
    top_legend,
)
from generators.units import format_duration_ns

DOT_COLOR = "#009E73"
#: Each line: its statistic, its legend word in English and Japanese, colour and style.
LINES = (
    ("min", "min", "最小", "#0072B2", ":"),
    ("median", "median", "中央値", "#333333", "--"),
    ("max", "max", "最大", "#D55E00", ":"),
)
HEIGHT_IN = 3.4
TICK_PT = 9.0


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no matrix multiplies in the steps")
    on_gpu = all(r.get("kernel_ns") not in (None, "") for r in rows)
    key = "kernel_ns" if on_gpu else "cpu_self_ns"
    times = [float(r[key]) for r in rows]  # type: ignore[arg-type]
    steps = [int(r["step"]) for r in rows]  # type: ignore[arg-type]
    scale, unit = (1e3, "µs") if max(times) < 5e6 else (1e6, "ms")
    fig = Figure(figsize=(CONTENT_WIDTH_IN, HEIGHT_IN))
    # Fixed margins (inches): title and legend above the plot, tick labels below.
    ax = fig.add_axes(
        (0.85 / CONTENT_WIDTH_IN, 0.55 / HEIGHT_IN, 6.75 / CONTENT_WIDTH_IN, 2.1 / HEIGHT_IN)
    )
    ax.plot(steps, [t / scale for t in times], "o-", color=DOT_COLOR, lw=0.8, ms=4, zorder=3)
    # median_low: the middle step's own duration, as the values queries define the median.
    stats = {"min": min(times), "median": statistics.median_low(times), "max": max(times)}
    for name, en, ja, colour, style in LINES:
        value = stats[name]
        label = f"{context.t(en, ja)} {format_duration_ns(value)}"
        ax.axhline(value / scale, color=colour, ls=style, lw=1, label=label)
    low, high = stats["min"] / scale, stats["max"] / scale
    pad = max(high - low, high * 0.002) * 0.12
    ax.set_ylim(low - pad, high + pad)
    kernel = plain_text(short_kernel_name(str(rows[0]["kernel_name"]), limit=36)) if on_gpu else ""
    op = plain_text(str(rows[0]["op_name"]))
    what = (
        context.t(f"kernel {kernel}", f"カーネル {kernel}")
        if on_gpu
        else context.t(f"{op} CPU self time", f"{op} の CPU 自己時間")
    )
    fig.text(
        0.1 / CONTENT_WIDTH_IN,
        1 - 0.08 / HEIGHT_IN,
        context.t(
            f"{what}, per step — {hardware_label(context)}",
            f"{what}（ステップごと）— {hardware_label(context)}",
        ),
        fontsize=10.5,
        va="top",
    )
    top_legend(fig, HEIGHT_IN, ncols=3, handlelength=2.2)
    ax.set_xlabel("ProfilerStep", fontsize=TICK_PT)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole numbers
    ax.set_ylabel(
        context.t(f"duration ({unit}), axis not from 0", f"所要時間（{unit}）、軸は 0 からでない"),
        fontsize=TICK_PT,
    )
    ax.tick_params(labelsize=TICK_PT)
    ax.set_xlim(steps[0] - 0.5, steps[-1] + 0.5)
    ax.spines[["top", "right"]].set_visible(False)
    return fig
