"""The dispatch chain as a diagram: one row per piece of work, one box per link of the chain.

Data: rows of ``generators/queries/matmul_add_chain.sql`` (start_ns, chain, op_name, gpu_name,
launch_to_start_ns). ``chain`` lists the annotations, operators, launch call and GPU work
joined by ' → '; rows that share a prefix share the boxes of that prefix.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from generators.figures import (
    CATEGORY_COLORS,
    OTHER_COLOR,
    FigureContext,
    plain_text,
    short_kernel_name,
)

BOX_W, BOX_H, COL_W = 2.3, 0.6, 2.8


def _colour(name: str, last: bool, on_gpu: bool) -> str:
    if name.startswith("ProfilerStep#") or not (name.startswith(("aten::", "cuda", "cu", "hip"))):
        if last and on_gpu:
            return CATEGORY_COLORS["kernel"]
        return CATEGORY_COLORS["user_annotation"] if not name.startswith("aten::") else OTHER_COLOR
    if name.startswith("aten::"):
        return CATEGORY_COLORS["cpu_op"]
    return CATEGORY_COLORS["cuda_runtime"]


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no chains in the first step")
    chains = [str(r["chain"]).split(" → ") for r in rows]
    width = max(len(c) for c in chains)
    fig = Figure(figsize=(max(6.0, width * COL_W * 0.95), 0.9 + 0.75 * len(chains)))
    ax = fig.add_subplot()
    drawn: set[tuple[str, ...]] = set()
    for i, (row, chain) in enumerate(zip(rows, chains, strict=True)):
        y = -i
        on_gpu = row.get("gpu_name") not in (None, "")
        for j, name in enumerate(chain):
            prefix = tuple(chain[: j + 1])
            last = j == len(chain) - 1
            x = j * COL_W
            if prefix in drawn:
                continue  # the same slice as in an earlier row: drawn once, joined by a line
            drawn.add(prefix)
            ax.add_patch(
                FancyBboxPatch(
                    (x, y - BOX_H / 2),
                    BOX_W,
                    BOX_H,
                    boxstyle="round,pad=0.02",
                    fc=_colour(name, last, on_gpu),
                    ec="#333333",
                    lw=0.6,
                )
            )
            label = short_kernel_name(name, limit=30) if last and on_gpu else name
            if len(label) > 30:
                label = label[:29] + "…"
            ax.text(x + BOX_W / 2, y, plain_text(label), ha="center", va="center", fontsize=7)
            if j:
                parent = tuple(chain[:j])
                parent_row = next(k for k, c in enumerate(chains) if tuple(c[:j]) == parent)
                ax.annotate(
                    "",
                    xy=(x, y),
                    xytext=(x - COL_W + BOX_W, -parent_row),
                    arrowprops={"arrowstyle": "->", "color": "#555555", "lw": 0.8},
                )
    ax.set_xlim(-0.2, width * COL_W)
    ax.set_ylim(-len(chains) + 0.4, 0.6)
    ax.axis("off")
    ax.set_title(
        f"{context.variant}: who called whom in the first profiled step "
        f"({plain_text(context.hardware)})",
        loc="left",
        fontsize=10,
    )
    fig.tight_layout()
    return fig
