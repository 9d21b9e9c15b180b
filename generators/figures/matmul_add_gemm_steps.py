"""The same matrix multiply, step after step: one dot per step with min, median and max lines.

Data: rows of ``generators/queries/matmul_add_gemm_steps.sql`` (step, op_name, cpu_self_ns,
kernel_name, kernel_ns, achieved_tflops). Kernel durations when the trace has them (a GPU
capture), else the operator's CPU self time.
"""

from __future__ import annotations

import statistics

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from generators.figures import FigureContext, plain_text, short_kernel_name
from generators.units import format_duration_ns

DOT_COLOR = "#009E73"
LINES = (("min", "#0072B2", ":"), ("median", "#333333", "--"), ("max", "#D55E00", ":"))


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no matrix multiplies in the steps")
    on_gpu = all(r.get("kernel_ns") not in (None, "") for r in rows)
    key = "kernel_ns" if on_gpu else "cpu_self_ns"
    times = [float(r[key]) for r in rows]  # type: ignore[arg-type]
    steps = [int(r["step"]) for r in rows]  # type: ignore[arg-type]
    scale, unit = (1e3, "µs") if max(times) < 5e6 else (1e6, "ms")
    fig = Figure(figsize=(8, 3.4))
    ax = fig.add_subplot()
    ax.plot(steps, [t / scale for t in times], "o-", color=DOT_COLOR, lw=0.8, ms=4)
    stats = {"min": min(times), "median": statistics.median_low(times), "max": max(times)}
    for name, colour, style in LINES:
        value = stats[name]
        ax.axhline(
            value / scale, color=colour, ls=style, lw=1, label=f"{name} {format_duration_ns(value)}"
        )
    ax.legend(fontsize=7, frameon=False, loc="upper right")
    what = (
        f"kernel {plain_text(short_kernel_name(str(rows[0]['kernel_name'])))}"
        if on_gpu
        else f"{rows[0]['op_name']} CPU self time"
    )
    ax.set_title(f"{what}, per step — {plain_text(context.hardware)}", loc="left", fontsize=10)
    ax.set_xlabel("ProfilerStep")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole numbers
    ax.set_ylabel(f"duration ({unit})")
    ax.set_xlim(steps[0] - 0.5, steps[-1] + 0.5)
    ax.set_ylim(0, max(times) / scale * 1.15)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig
