"""One profiled step as lanes: the CPU thread's nested slices above, each GPU stream below.

Data: rows of ``generators/queries/timeline.sql`` (lane, depth, name, category, start_ns,
dur_ns, id, launched_by). Arrows join each launch to the GPU work it started; the longest idle
gap on each GPU lane is measured on the figure.

Every slice is named where a reader can see it at the page's width: inside its bar when the
name fits, otherwise beside the bar in the same row, otherwise in a row under the lane with a
leader line up to the bar (the longest slices first, up to a budget). The subtitle says how many
slices were left unnamed and how long the longest of them is. A lane with very many slices also
gets a one-line summary: its most frequent depth's names ranked by total time.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

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
from generators.units import format_duration_ns

ROW_HEIGHT = 0.8  # bar height, in rows
ROW_IN = 0.27  # one row, in inches
LANE_GAP = 0.6  # rows between a CPU lane and the next
GPU_LANE_GAP = 1.7  # rows above a GPU lane (room for its "GPU idle" note)
LABEL_PT = 8.0
TICK_PT = 9.0
TITLE_PT = 10.5
SUBTITLE_PT = 8.5
PAD_PT = 3.0  # between a bar and the label beside it, and between neighbouring labels
RIGHT_IN = 0.2
MAX_EXTRA_ROWS = 3  # label rows added under a lane
MAX_LEADER_PT = 90.0  # how far a label may sit sideways from its bar
MIN_LABEL_PT = 0.5  # bars narrower than this are not named outside
DENSE_LANE = 60  # a lane with more slices than this gets a summary line
SUMMARY_NAMES = 4
LAUNCH_COLOR = "#D55E00"
# Legend spacing, in font sizes (matplotlib's units), used both to draw it and to measure it.
LEGEND_HANDLE, LEGEND_TEXTPAD, LEGEND_COLSPACE = 1.4, 0.8, 1.2
LEGEND_ROW_IN = 0.19


@dataclass
class _Bar:
    row: dict[str, object]
    lane: str
    depth: int
    x0: float
    x1: float
    texts: list[str]

    @property
    def dur_ns(self) -> float:
        return float(self.row["dur_ns"])  # type: ignore[arg-type]


@dataclass
class _Label:
    text: str
    x: float  # left edge (data units) for outside labels, centre for inside ones
    depth: int  # row within the lane
    bar: _Bar
    kind: str  # "inside", "beside" or "callout"
    width: float = 0.0  # of the text, in data units


@dataclass
class _Lane:
    name: str
    lang: str = "en"
    bars: list[_Bar] = field(default_factory=list)
    labels: list[_Label] = field(default_factory=list)
    busy: dict[int, list[tuple[float, float]]] = field(default_factory=lambda: defaultdict(list))

    @property
    def max_depth(self) -> int:
        return max(b.depth for b in self.bars)

    @property
    def rows(self) -> int:
        used = [b.depth for b in self.bars] + [lab.depth for lab in self.labels]
        return max(used) + 1

    def free(self, depth: int, a: float, b: float) -> bool:
        return all(b <= lo or a >= hi for lo, hi in self.busy[depth])


def display_name(row: dict[str, object]) -> str:
    """The name as a label: C++ templates and parameters dropped, long hashes cut short."""
    name = re.sub(r"\b([0-9a-z]{6})[0-9a-z]{20,}\b", r"\1…", str(row["name"]))
    return short_kernel_name(name, limit=40 if row["category"] == "kernel" else 48)


def _is_gpu(lane: str) -> bool:
    return not lane.startswith("CPU")


def lane_label(lane: str, context: FigureContext) -> str:
    """A lane's name in the figure's language: 'CPU thread 2153' / 'CPU スレッド 2153',
    'GPU 0 stream 7' / 'GPU 0 ストリーム 7' (the data CSV keeps the query's names)."""
    if context.lang == "en":
        return lane
    words = {"thread": "スレッド", "stream": "ストリーム"}
    return " ".join(words.get(word, word) for word in lane.split(" "))


def _place_labels(lane: _Lane, span: float, per_pt: float, budget: int) -> list[_Bar]:
    """Place a label for as many bars as fit; returns the bars left unnamed."""
    pad = PAD_PT * per_pt
    for bar in lane.bars:
        lane.busy[bar.depth].append((bar.x0, bar.x1))
    outside: list[_Bar] = []
    for bar in lane.bars:
        fits = [
            t
            for t in bar.texts
            if text_width_pt(t, LABEL_PT, lane.lang) * per_pt + 2 * pad <= bar.x1 - bar.x0
        ]
        if fits:
            lane.labels.append(_Label(fits[0], (bar.x0 + bar.x1) / 2, bar.depth, bar, "inside"))
        else:
            outside.append(bar)
    outside.sort(key=lambda b: (-b.dur_ns, b.x0))
    unnamed: list[_Bar] = []
    last_row = lane.max_depth + MAX_EXTRA_ROWS
    for bar in outside:
        if (
            budget <= 0
            or bar.x1 - bar.x0 < MIN_LABEL_PT * per_pt
            or not _place_outside(lane, bar, span, per_pt, pad, last_row)
        ):
            unnamed.append(bar)
        else:
            budget -= 1
    return unnamed


def _place_outside(
    lane: _Lane, bar: _Bar, span: float, per_pt: float, pad: float, last_row: int
) -> bool:
    centre = (bar.x0 + bar.x1) / 2
    for text in bar.texts:  # beside the bar, in its own row: right, then left
        width = text_width_pt(text, LABEL_PT, lane.lang) * per_pt
        for a in (bar.x1 + pad, bar.x0 - pad - width):
            if a >= 0 and a + width <= span and lane.free(bar.depth, a - pad, a + width + pad):
                lane.busy[bar.depth].append((a - pad, a + width + pad))
                lane.labels.append(_Label(text, a, bar.depth, bar, "beside"))
                return True
    for text in bar.texts:  # in a free row below, joined to the bar by a leader line
        width = text_width_pt(text, LABEL_PT, lane.lang) * per_pt
        want = min(max(centre - 3 * pad, 0.0), span - width - 2 * pad)
        reach = MAX_LEADER_PT * per_pt
        for depth in range(bar.depth + 1, last_row + 1):
            a = _nearest_free(lane.busy[depth], want, width + 2 * pad, span, reach)
            if a is not None:
                lane.busy[depth].append((a, a + width + 2 * pad))
                lane.labels.append(_Label(text, a + pad, depth, bar, "callout", width))
                for between in range(bar.depth + 1, depth):  # keep the leader line clear
                    lane.busy[between].append((centre - pad / 2, centre + pad / 2))
                return True
            if not lane.free(depth, centre - pad / 2, centre + pad / 2):
                break  # a leader line further down would cross this row's bar or label
    return False


def _nearest_free(
    busy: list[tuple[float, float]], want: float, width: float, span: float, reach: float
) -> float | None:
    """The start of a free interval ``width`` long in [0, span] near ``want``, or None.

    Best is one that lies under ``want`` (a straight leader line), then the nearest.
    """
    edges = sorted(busy)
    candidates = [want]
    candidates += [hi for _, hi in edges] + [lo - width for lo, _ in edges]
    best: tuple[float, float, float] | None = None
    for a in candidates:
        a = min(max(a, 0.0), span - width)
        if abs(a - want) > reach or any(a + width > lo and a < hi for lo, hi in edges):
            continue
        score = (max(0.0, a - want, want - (a + width)), abs(a - want), a)
        if best is None or score < best:
            best = score
    return None if best is None else best[2]


def _longest_gap(spans: list[tuple[float, float]]) -> tuple[float, float] | None:
    spans = sorted(spans)
    best: tuple[float, float] | None = None
    end = spans[0][1] if spans else 0.0
    for start, stop in spans[1:]:
        if start > end and (best is None or start - end > best[1] - best[0]):
            best = (end, start)
        end = max(end, stop)
    return best


def _summary(lane: _Lane, width_pt: float, context: FigureContext) -> str:
    """The lane's busiest depth, its names ranked by total time, cut to fit ``width_pt``."""
    counts: dict[int, int] = defaultdict(int)
    for bar in lane.bars:
        counts[bar.depth] += 1
    depth = max(sorted(counts), key=counts.__getitem__)
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for bar in lane.bars:
        if bar.depth == depth:
            totals[display_name(bar.row)][0] += 1
            totals[display_name(bar.row)][1] += bar.dur_ns
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1][1], kv[0]))
    label = lane_label(lane.name, context)
    head = context.t(
        f"{label}, depth {depth} ({counts[depth]} slices), most time in: ",
        f"{label}、深さ {depth}（スライス {counts[depth]} 個）、時間の長い順: ",
    )
    parts = [f"{name} ×{n:.0f} = {format_duration_ns(t)}" for name, (n, t) in ranked]
    for keep in range(min(SUMMARY_NAMES, len(parts)), 0, -1):
        text = head + ", ".join(parts[:keep])
        if text_width_pt(text, LABEL_PT, context.lang) <= width_pt:
            return text
    return head + parts[0]


def draw(
    rows: list[dict[str, object]],
    context: FigureContext,
    *,
    title: str | None = None,
    notes: list[str] | None = None,
    max_outside_labels: int = 16,
) -> Figure:
    """The timeline figure.

    ``title`` (already escaped with ``plain_text``) and ``notes`` (plain sentences for the
    subtitle) replace the generic ones when given; the subtitle always ends by saying how many
    slices went unnamed.
    """
    if not rows:
        raise ValueError(f"{context.step}/{context.variant}: no slices in the first step")
    step_row = min(
        (r for r in rows if str(r["name"]).startswith("ProfilerStep#")),
        key=lambda r: r["start_ns"],  # type: ignore[arg-type, return-value]
        default=None,
    )
    end_ns = max(float(r["start_ns"]) + float(r["dur_ns"]) for r in rows)  # type: ignore[arg-type]
    scale, unit = (1e3, "µs") if end_ns < 5e6 else (1e6, "ms")
    span = end_ns / scale * 1.02
    lang = context.lang
    left_in = (
        max(text_width_pt(lane_label(str(r["lane"]), context), TICK_PT, lang) for r in rows) / 72
        + 0.2
    )
    axes_w_in = CONTENT_WIDTH_IN - left_in - RIGHT_IN
    per_pt = span / (axes_w_in * 72)  # data units per point

    lanes: dict[str, _Lane] = {}
    for name in sorted({str(r["lane"]) for r in rows}, key=lambda lane: (_is_gpu(lane), lane)):
        lanes[name] = _Lane(name, lang)
    for row in sorted(rows, key=lambda r: (r["start_ns"], r["depth"], r["id"])):  # type: ignore[arg-type, return-value]
        x0 = float(row["start_ns"]) / scale  # type: ignore[arg-type]
        x1 = x0 + float(row["dur_ns"]) / scale  # type: ignore[arg-type]
        name = display_name(row)
        texts = [f"{name} {format_duration_ns(float(row['dur_ns']))}", name]  # type: ignore[arg-type]
        lanes[str(row["lane"])].bars.append(
            _Bar(row, str(row["lane"]), int(row["depth"]), x0, x1, texts)  # type: ignore[arg-type]
        )
    unnamed: list[_Bar] = []
    for lane in lanes.values():
        unnamed += _place_labels(lane, span, per_pt, max_outside_labels)

    offsets: dict[str, float] = {}
    y = 0.0
    for i, lane in enumerate(lanes.values()):
        if i:
            y += GPU_LANE_GAP if _is_gpu(lane.name) else LANE_GAP
        offsets[lane.name] = y
        y += lane.rows
    total_rows = y
    summaries = [
        _summary(lane, CONTENT_WIDTH_IN * 72 - 20, context)
        for lane in lanes.values()
        if len(lane.bars) > DENSE_LANE
    ]
    if title is None:
        where = f"{plain_text(context.step_title)} — {plain_text(context.variant)}"
        title = context.t(
            f"{where}: one profiled step on {hardware_label(context)}",
            f"{where}: {hardware_label(context)} でのプロファイル対象ステップ 1 つ",
        )
    if notes is None:
        notes = []
        if step_row is not None:
            took = format_duration_ns(float(step_row["dur_ns"]))  # type: ignore[arg-type]
            notes.append(
                context.t(
                    f"{step_row['name']} took {took}", f"{step_row['name']} の所要時間 {took}"
                )
            )
        notes.append(context.t(f"{len(rows)} slices", f"スライス {len(rows)} 個"))
    subtitle_lines = _wrap(
        [*notes, unnamed_note(unnamed, context)], CONTENT_WIDTH_IN * 72 - 14, context
    )
    top_in, bottom_in = 0.45 + 0.17 * len(subtitle_lines), 0.55
    ids = {int(r["id"]) for r in rows}  # type: ignore[call-overload]
    has_launches = any(
        r.get("launched_by") is not None and int(r["launched_by"]) in ids  # type: ignore[call-overload]
        for r in rows
    )
    legend_labels = sorted({str(r["category"]) for r in rows})
    launch_label = context.t("launch → GPU work", "起動 → GPU の処理")
    if has_launches:
        legend_labels.append(launch_label)
    legend_cols, legend_rows = _legend_shape(legend_labels, CONTENT_WIDTH_IN * 72 - 40, lang)
    legend_in = 0.32 + LEGEND_ROW_IN * (legend_rows - 1)
    summary_in = 0.2 * len(summaries)
    axes_h_in = (total_rows + 0.6) * ROW_IN
    height_in = top_in + axes_h_in + bottom_in + summary_in + legend_in
    fig = Figure(figsize=(CONTENT_WIDTH_IN, height_in))
    ax = fig.add_axes(
        (
            left_in / CONTENT_WIDTH_IN,
            (bottom_in + summary_in + legend_in) / height_in,
            axes_w_in / CONTENT_WIDTH_IN,
            axes_h_in / height_in,
        )
    )

    centres: dict[int, tuple[float, float]] = {}
    for lane in lanes.values():
        for bar in lane.bars:
            y = offsets[lane.name] + bar.depth
            colour = CATEGORY_COLORS.get(str(bar.row["category"]), OTHER_COLOR)
            ax.barh(
                y,
                bar.x1 - bar.x0,
                left=bar.x0,
                height=ROW_HEIGHT,
                color=colour,
                # Outlines on bars narrower than a couple of points would paint them dark grey.
                edgecolor="#333333" if (bar.x1 - bar.x0) / per_pt >= 2 else "none",
                lw=0.4,
            )
            centres[int(bar.row["id"])] = ((bar.x0 + bar.x1) / 2, y)  # type: ignore[arg-type]
        for label in lane.labels:
            y = offsets[lane.name] + label.depth
            text = plain_text(label.text)
            if label.kind == "inside":
                ax.text(label.x, y, text, ha="center", va="center", fontsize=LABEL_PT, zorder=4)
                continue
            ax.text(label.x, y, text, ha="left", va="center", fontsize=LABEL_PT, zorder=4)
            if label.kind == "callout":
                centre = (label.bar.x0 + label.bar.x1) / 2
                top = offsets[lane.name] + label.bar.depth + ROW_HEIGHT / 2
                end = min(max(centre, label.x), label.x + label.width)
                ax.plot([centre, end], [top, y - 0.3], color="#333333", lw=0.6, zorder=3)

    # Hundreds of launch arrows (a decode step) would merge into a band: draw them fainter.
    dense = sum(1 for r in rows if r.get("launched_by") is not None) > 80
    arrow = {"arrowstyle": "->", "color": LAUNCH_COLOR, "lw": 0.3 if dense else 0.7}
    arrow["alpha"] = 0.25 if dense else 0.7
    for row in rows:
        launcher = row.get("launched_by")
        if launcher is not None and int(launcher) in centres:  # type: ignore[arg-type]
            (x1, y1), (x2, y2) = centres[int(launcher)], centres[int(row["id"])]  # type: ignore[arg-type]
            ax.annotate(
                "",
                xy=(x2, y2 - ROW_HEIGHT / 2),
                xytext=(x1, y1 + ROW_HEIGHT / 2),
                arrowprops=arrow,
                zorder=2,
            )

    for lane in lanes.values():
        if not _is_gpu(lane.name):
            continue
        gap = _longest_gap([(b.x0, b.x1) for b in lane.bars])
        if gap:
            y = offsets[lane.name] - 0.85
            ax.annotate(
                "",
                xy=(gap[0], y),
                xytext=(gap[1], y),
                arrowprops={"arrowstyle": "<->", "color": "#333333", "lw": 0.8},
            )
            ax.text(
                (gap[0] + gap[1]) / 2,
                y - 0.12,
                context.t("GPU idle ", "GPU アイドル ")
                + format_duration_ns((gap[1] - gap[0]) * scale),
                ha="center",
                va="bottom",
                fontsize=LABEL_PT,
                bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.85},
                zorder=5,
            )

    ax.set_yticks(
        [offsets[name] for name in lanes],
        [plain_text(lane_label(name, context)) for name in lanes],
        fontsize=TICK_PT,
    )
    ax.tick_params(axis="x", labelsize=TICK_PT)
    ax.set_ylim(total_rows - 0.35, -0.55)
    ax.set_xlim(0, span)
    ax.set_xlabel(
        context.t(f"time since the step started ({unit})", f"ステップ開始からの時間（{unit}）"),
        fontsize=TICK_PT,
    )
    ax.spines[["top", "right"]].set_visible(False)

    fig.text(0.1 / CONTENT_WIDTH_IN, 1 - 0.08 / height_in, title, fontsize=TITLE_PT, va="top")
    fig.text(
        0.1 / CONTENT_WIDTH_IN,
        1 - 0.36 / height_in,
        "\n".join(plain_text(line) for line in subtitle_lines),
        fontsize=SUBTITLE_PT,
        va="top",
        color="#333333",
        linespacing=1.3,
    )
    for i, text in enumerate(summaries):
        fig.text(
            0.1 / CONTENT_WIDTH_IN,
            (legend_in + summary_in - 0.2 * i - 0.04) / height_in,
            plain_text(text),
            fontsize=LABEL_PT,
            va="top",
        )

    handles: list[Patch | Line2D] = [
        Line2D([], [], color=LAUNCH_COLOR, lw=1, label=label)
        if label == launch_label
        else Patch(color=CATEGORY_COLORS.get(label, OTHER_COLOR), label=label)
        for label in legend_labels
    ]
    fig.legend(
        handles=handles,
        loc="lower left",
        bbox_to_anchor=(0.05 / CONTENT_WIDTH_IN, 0.02 / height_in),
        fontsize=LABEL_PT,
        frameon=False,
        ncols=legend_cols,
        handlelength=LEGEND_HANDLE,
        handletextpad=LEGEND_TEXTPAD,
        columnspacing=LEGEND_COLSPACE,
        borderaxespad=0,
    )
    return fig


def _legend_shape(labels: list[str], width_pt: float, lang: str) -> tuple[int, int]:
    """(columns, rows) of the legend with the fewest rows that fits ``width_pt``: entries wrap
    onto more rows, evenly, instead of running off the figure's edge.

    matplotlib fills a legend's columns top to bottom, each column as wide as its widest entry.
    """
    entry = [
        text_width_pt(label, LABEL_PT, lang) + (LEGEND_HANDLE + LEGEND_TEXTPAD) * LABEL_PT
        for label in labels
    ]
    for rows in range(1, len(labels) + 1):
        cols = -(-len(labels) // rows)
        # matplotlib's split: the first (n mod cols) columns hold one entry more.
        short, extra = divmod(len(labels), cols)
        sizes = [short + 1] * extra + [short] * (cols - extra)
        starts = [sum(sizes[:c]) for c in range(cols)]
        widths = [max(entry[a : a + n]) for a, n in zip(starts, sizes, strict=True) if n]
        if sum(widths) + LEGEND_COLSPACE * LABEL_PT * (len(widths) - 1) <= width_pt:
            return cols, rows
    return 1, len(labels)


def _wrap(parts: list[str], width_pt: float, context: FigureContext) -> list[str]:
    """Join ``parts`` with '; ' ('、') into lines at most ``width_pt`` wide, breaking between
    parts."""
    mark = context.t(";", "、")
    space = context.t(" ", "")
    lines: list[str] = []
    for part in parts:
        joined = f"{lines[-1]}{mark}{space}{part}" if lines else part
        if lines and text_width_pt(joined, SUBTITLE_PT, context.lang) <= width_pt:
            lines[-1] = joined
        else:
            if lines:
                lines[-1] += mark
            lines.append(part)
    return lines


def unnamed_note(unnamed: list[_Bar], context: FigureContext) -> str:
    """What the subtitle says about the slices left without a label."""
    if not unnamed:
        return context.t(
            "each is named in, beside or under its bar",
            "どのスライスも名前をバーの中・横・下に表示",
        )
    n, longest = len(unnamed), format_duration_ns(max(b.dur_ns for b in unnamed))
    return context.t(
        f"{n} unnamed here (each ≤ {longest}), all listed in the data CSV",
        f"ここで名前のないもの {n} 個（各 ≤ {longest}）、すべてデータ CSV に記載",
    )
