"""The dispatch chain as a diagram: the CPU side as an indented call tree, the GPU work beside it.

Data: rows of ``generators/queries/matmul_add_chain.sql`` (start_ns, chain, op_name, gpu_name,
launch_to_start_ns). ``chain`` lists the annotations, operators, launch call and GPU work
joined by ' → '; rows that share a prefix share the boxes of that prefix.

One row per slice, indented under its caller, reads at the page's width however long the chain
is (a row of boxes side by side would need about 1.5 page widths for a GPU chain). On a GPU
capture the work a launch started sits in a second column, on the launch call's row, joined to it
by an arrow.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Patch

from generators.figures import (
    CATEGORY_COLORS,
    CONTENT_WIDTH_IN,
    OTHER_COLOR,
    FigureContext,
    hardware_label,
    plain_text,
    short_kernel_name,
    text_width_pt,
)

LABEL_PT = 9.0
TITLE_PT = 10.5
NOTE_PT = 8.5
ROW_IN = 0.34  # one slice per row
BOX_H_IN = 0.25
INDENT_IN = 0.26  # per level of nesting
PAD_PT = 5.0  # between a box's edge and its label
LEFT_IN, RIGHT_IN = 0.12, 0.12
TOP_IN = 0.62  # title and column headings
LEGEND_IN = 0.34
ARROW_GAP_IN = 0.55  # between the widest CPU box and the GPU column
#: Each kind of box: its legend entry in English and Japanese, and its colour.
NAMES = {
    "annotation": (
        "label / profiler step",
        "ラベル / プロファイラのステップ",
        CATEGORY_COLORS["user_annotation"],
    ),
    "aten": ("aten:: operator", "aten:: 演算子", CATEGORY_COLORS["cpu_op"]),
    "launch": (
        "launch call (CUDA runtime)",
        "起動呼び出し（CUDA ランタイム）",
        CATEGORY_COLORS["cuda_runtime"],
    ),
    "kernel": ("GPU work it started", "起動された GPU の処理", CATEGORY_COLORS["kernel"]),
}


def _kind(name: str) -> str:
    if name.startswith("aten::"):
        return "aten"
    if name.startswith(("cuda", "cu", "hip")) and not name.startswith("ProfilerStep#"):
        return "launch"
    return "annotation"


def _box(ax, x: float, y: float, width: float, colour: str, text: str) -> None:  # type: ignore[no-untyped-def]
    ax.add_patch(
        FancyBboxPatch(
            (x, y - BOX_H_IN / 2),
            width,
            BOX_H_IN,
            boxstyle="round,pad=0,rounding_size=0.04",
            fc=colour,
            ec="#333333",
            lw=0.6,
        )
    )
    ax.text(x + PAD_PT / 72, y, plain_text(text), ha="left", va="center", fontsize=LABEL_PT)


def _fit(name: str, width_pt: float, lang: str) -> str:
    """The longest readable form of a kernel name that fits ``width_pt`` at the label size."""
    for limit in range(60, 8, -1):
        label = short_kernel_name(name, limit=limit)
        if text_width_pt(label, LABEL_PT, lang) + 2 * PAD_PT <= width_pt:
            return label
    return short_kernel_name(name, limit=8)


def draw(rows: list[dict[str, object]], context: FigureContext) -> Figure:
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no chains in the first step")
    chains = [str(r["chain"]).split(" → ") for r in rows]
    on_gpu = [r.get("gpu_name") not in (None, "") for r in rows]

    # CPU slices in call-tree order (chains come in start order, so first-seen is depth-first).
    nodes: list[tuple[str, ...]] = []
    gpu_of: dict[tuple[str, ...], str] = {}
    for chain, gpu in zip(chains, on_gpu, strict=True):
        cpu = chain[:-1] if gpu else chain
        for j in range(len(cpu)):
            prefix = tuple(cpu[: j + 1])
            if prefix not in nodes:
                nodes.append(prefix)
        if gpu:
            gpu_of[tuple(cpu)] = chain[-1]
    row_of = {node: i for i, node in enumerate(nodes)}

    def box_w(node: tuple[str, ...]) -> float:
        return (text_width_pt(node[-1], LABEL_PT, context.lang) + 2 * PAD_PT) / 72

    cpu_right = max(LEFT_IN + (len(n) - 1) * INDENT_IN + box_w(n) for n in nodes)
    gpu_x = cpu_right + ARROW_GAP_IN
    gpu_w = CONTENT_WIDTH_IN - RIGHT_IN - gpu_x
    kinds = {_kind(n[-1]) for n in nodes} | ({"kernel"} if gpu_of else set())

    body_in = len(nodes) * ROW_IN
    height = TOP_IN + body_in + LEGEND_IN
    fig = Figure(figsize=(CONTENT_WIDTH_IN, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, CONTENT_WIDTH_IN)
    ax.set_ylim(height, 0)  # inches from the top
    ax.axis("off")

    def y_of(node: tuple[str, ...]) -> float:
        return TOP_IN + (row_of[node] + 0.5) * ROW_IN

    for node in nodes:
        depth = len(node) - 1
        x, y = LEFT_IN + depth * INDENT_IN, y_of(node)
        _box(ax, x, y, box_w(node), NAMES[_kind(node[-1])][2], node[-1])
        if depth:  # an elbow from the caller's box down to this one
            parent = node[:-1]
            px = LEFT_IN + (depth - 1) * INDENT_IN + INDENT_IN / 2
            ax.plot(
                [px, px, x],
                [y_of(parent) + BOX_H_IN / 2, y, y],
                color="#555555",
                lw=0.8,
                solid_capstyle="butt",
            )
        if node in gpu_of:
            label = _fit(gpu_of[node], gpu_w * 72, context.lang)
            width = (text_width_pt(label, LABEL_PT, context.lang) + 2 * PAD_PT) / 72
            _box(ax, gpu_x, y, width, NAMES["kernel"][2], label)
            ax.annotate(
                "",
                xy=(gpu_x, y),
                xytext=(LEFT_IN + depth * INDENT_IN + box_w(node), y),
                arrowprops={"arrowstyle": "->", "color": "#D55E00", "lw": 1.0},
            )

    ax.text(
        LEFT_IN,
        0.12,
        context.t(
            f"{plain_text(context.variant)}: who called whom in the first profiled step, "
            f"{hardware_label(context)}",
            f"{plain_text(context.variant)}: 最初のプロファイル対象ステップでの呼び出し関係、"
            f"{hardware_label(context)}",
        ),
        fontsize=TITLE_PT,
        va="top",
    )
    heading = {"fontsize": NOTE_PT, "color": "#333333", "va": "bottom"}
    ax.text(
        LEFT_IN,
        TOP_IN - 0.06,
        context.t(
            "CPU thread: each slice under the one that called it",
            "CPU スレッド: 各スライスを呼び出し元の下に",
        ),
        **heading,
    )
    if gpu_of:
        ax.text(
            gpu_x,
            TOP_IN - 0.06,
            context.t(
                "GPU stream: the work each launch started", "GPU ストリーム: 各起動が始めた処理"
            ),
            **heading,
        )
    fig.legend(
        handles=[
            Patch(color=colour, label=context.t(en, ja))
            for k, (en, ja, colour) in NAMES.items()
            if k in kinds
        ]
        or [Patch(color=OTHER_COLOR, label=context.t("slice", "スライス"))],
        loc="lower left",
        bbox_to_anchor=(LEFT_IN / CONTENT_WIDTH_IN, 0.06 / height),
        fontsize=NOTE_PT,
        frameon=False,
        ncols=len(kinds),
        handlelength=1.4,
        columnspacing=1.2,
        borderaxespad=0,
    )
    return fig
