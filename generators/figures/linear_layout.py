"""What ``aten::t`` does to the weight: same memory, new shape and strides.

Data: rows of ``generators/queries/linear_chain.sql``. The weight's shape and strides are the
recorded input of ``aten::t``; the view's are the sizes and strides ``aten::as_strided`` was
given inside it. Each panel draws the top-left corner of one tensor, every cell labelled with
the memory offset (in elements) it reads: offset = row * stride[0] + column * stride[1].
"""

from __future__ import annotations

import ast

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from generators.figures import CONTENT_WIDTH_IN, FigureContext, plain_text

CORNER = (4, 6)  # rows, columns drawn


def _pair(text: str) -> tuple[int, int]:
    values = ast.literal_eval(text)
    return int(values[0]), int(values[1])


def _layouts(rows: list[dict[str, object]]) -> tuple[tuple, tuple]:
    t_index = next(i for i, r in enumerate(rows) if r["name"] == "aten::t")
    t_row = rows[t_index]
    strided = next(r for r in rows[t_index:] if r["name"] == "aten::as_strided")
    w = (_pair(str(t_row["input_dims"])), _pair(str(t_row["input_strides"])))
    sizes, strides = str(strided["view_args"]).split(" / ")
    return w, (_pair(sizes), _pair(strides))


def _panel(  # type: ignore[no-untyped-def]
    ax, title: str, shape: tuple[int, int], strides: tuple[int, int], context: FigureContext
) -> None:
    rows, cols = min(CORNER[0], shape[0]), min(CORNER[1], shape[1])
    for i in range(rows):
        for j in range(cols):
            offset = i * strides[0] + j * strides[1]
            shade = "#56B4E9" if offset < cols else "#FFFFFF"
            ax.add_patch(Rectangle((j, -i - 1), 1, 1, facecolor=shade, edgecolor="#333333"))
            ax.text(j + 0.5, -i - 0.5, str(offset), ha="center", va="center", fontsize=8)
    ax.text(cols + 0.15, -rows / 2, "…", fontsize=12, va="center")
    ax.text(cols / 2, -rows - 0.35, "⋮", fontsize=12, ha="center", va="top")
    ax.set_xlim(-0.2, cols + 0.8)
    ax.set_ylim(-rows - 1.1, 0.2)
    ax.set_aspect("equal")
    ax.axis("off")
    layout = context.t(
        f"shape {list(shape)}, strides {list(strides)}",
        f"形状 {list(shape)}、ストライド {list(strides)}",
    )
    ax.set_title(f"{title}\n{layout}", fontsize=9, loc="left")


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    w_layout, t_layout = _layouts(rows)
    fig = Figure(figsize=(CONTENT_WIDTH_IN, 3.6))
    left, right = fig.subplots(1, 2)
    _panel(
        left,
        context.t("weight W (input of aten::t)", "重み W（aten::t の入力）"),
        *w_layout,
        context,
    )
    _panel(
        right,
        context.t(
            "W.t() (view made by aten::as_strided)", "W.t()（aten::as_strided が作るビュー）"
        ),
        *t_layout,
        context,
    )
    fig.suptitle(
        plain_text(
            context.t(
                "aten::t copies nothing: each cell shows the memory offset it reads",
                "aten::t は何もコピーしません。"
                "各セルの数字は、そのセルが読むメモリ上のオフセットです",
            )
        ),
        fontsize=10.5,
        x=0.02,
        ha="left",
    )
    fig.text(
        0.02,
        0.02,
        context.t(
            "Shaded: the first row of W in memory. offset = row × stride[0] + column × stride[1]:\n"
            "swapping the strides turns rows into columns without moving a byte.",
            "色付き: メモリ上の W の先頭行。オフセット = 行 × stride[0] + 列 × stride[1]:\n"
            "ストライドを入れ替えるだけで、1 バイトも動かさずに行が列になります。",
        ),
        fontsize=8.5,
        linespacing=1.4,
    )
    fig.tight_layout(rect=(0, 0.1, 1, 0.91))
    return fig
