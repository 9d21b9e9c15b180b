"""One decode step of the LLM: the CPU thread above, the GPU stream below, on one time axis.

Data: rows of ``generators/queries/llm_decode_timeline.sql`` (the columns of the generic
``timeline`` query, for the decode step in the middle of the first profiled ``generate`` call).
Drawn by the generic timeline figure. A decode step holds hundreds of short slices, far too many
to name one by one at the page's width, so only the few longest are named on the plot; a line
under it sums each dense lane by name (count and total time), and the subtitle says so.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from generators.figures import FigureContext, hardware_label, plain_text, timeline
from generators.units import format_duration_ns

#: Names placed outside their bars, per lane: the longest slices that are too narrow for theirs.
NAMED_OUTSIDE = 6


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no slices in the decode step")
    end_ns = max(float(r["start_ns"]) + float(r["dur_ns"]) for r in rows)  # type: ignore[arg-type]
    kernels = sum(1 for r in rows if r["category"] == "kernel")
    deepest = max(int(r["depth"]) for r in rows)  # type: ignore[arg-type]
    where = f"{plain_text(context.step_title)} — {plain_text(context.variant)}"
    title = context.t(
        f"{where}: one decode step on {hardware_label(context)}",
        f"{where}: {hardware_label(context)} でのデコード 1 ステップ",
    )
    took = format_duration_ns(end_ns)
    notes = [
        context.t(
            f"{took} from this forward's start to the next",
            f"この順伝播の開始から次の開始まで {took}",
        )
    ]
    cpu = len(rows) - kernels
    shown = context.t(
        f"bars: all {cpu} CPU slices down to depth {deepest}",
        f"バー: 深さ {deepest} までの CPU スライス全 {cpu} 個",
    )
    if kernels:
        shown += context.t(f" and {kernels} kernels", f"とカーネル {kernels} 個")
    notes += [
        shown,
        context.t(
            f"named: those whose name fits and the {NAMED_OUTSIDE} longest others per lane",
            f"名前: バーに収まるものと、レーンごとに残りのうち長い {NAMED_OUTSIDE} 個",
        ),
    ]
    return timeline.draw(rows, context, title=title, notes=notes, max_outside_labels=NAMED_OUTSIDE)
