"""The doctor's kernel view (:mod:`generators.doctor.kernels`) in every report format.

The table's cells are built once as plain text (:func:`kernel_table`) and each format escapes
them its own way, as the other sections do: kernel and operator names come from the trace.
"""

from __future__ import annotations

import html
from typing import Any

from generators.doctor.kernels import CPU_PACED_PCT, GPU_PACED_PCT, KernelView, LaunchQueue
from generators.figures import short_kernel_name
from generators.i18n import decoded_in_japanese
from generators.i18n import translated as _t
from generators.units import format_count, format_duration_ns, format_value

#: The section's heading, in every format.
KERNELS_HEADING = ("What the kernels achieved", "カーネルが達成したもの")
#: Longest kernel name shown in a table cell (the JSON keeps the whole name).
NAME_CHARS = 48
SIDES = {"compute": ("compute", "演算"), "memory": ("memory", "メモリ")}


def _rate(row: dict[str, Any], lang: str) -> tuple[str, str, str]:
    """(achieved, % of peak, side) as text: work where it is counted, else bytes."""
    side = SIDES.get(row.get("side") or "")
    side_text = _t(lang, *side) if side else "–"
    if row.get("achieved_tflops") is not None:
        achieved = format_value(row["achieved_tflops"], "achieved_tflops")
        math = row.get("math")
        peak = format_value(row.get("tflops_peak_pct"), "tflops_peak_pct")
        return (f"{achieved} ({math})" if math else achieved), peak, side_text
    if row.get("achieved_bytes_per_s") is not None:
        achieved = format_value(row["achieved_bytes_per_s"], "achieved_bytes_per_s")
        return achieved, format_value(row.get("bytes_peak_pct"), "bytes_peak_pct"), side_text
    return "–", "–", side_text


def kernel_table(view: KernelView, lang: str = "en") -> tuple[list[str], list[list[str]]]:
    """The top kernels as plain text: column titles and rows."""
    head = [
        _t(lang, "kernel", "カーネル"),
        _t(lang, "library · what the name says", "ライブラリ · 名前が示す処理"),
        _t(lang, "launched by", "起動した演算子"),
        _t(lang, "runs", "回数"),
        _t(lang, "time", "時間"),
        _t(lang, "of kernel time", "カーネル時間に占める割合"),
        _t(lang, "achieved", "達成性能"),
        _t(lang, "% of peak", "ピーク性能に対する %"),
        _t(lang, "bound by", "律速"),
    ]
    rows = []
    for r in view.top:
        achieved, peak, side = _rate(r, lang)
        decoded = str(r.get("decoded") or r.get("family") or "–")
        rows.append(
            [
                short_kernel_name(str(r["name"]), NAME_CHARS).replace("::::", "::"),
                decoded_in_japanese(decoded) if lang == "ja" else decoded,
                str(r.get("op_name") or "–"),
                format_count(r["kernels"]),
                format_duration_ns(r["total_ns"]),
                format_value(r.get("kernel_pct"), "kernel_pct"),
                achieved,
                peak,
                side,
            ]
        )
    return head, rows


def kernels_definition(lang: str = "en") -> str:
    """What the table's numbers measure."""
    return _t(
        lang,
        "The kernel names with the most summed GPU time. Achieved rates divide the work (matrix "
        "multiplies: 2 × M × N × K) or the least bytes the launching operator's recorded shapes "
        "require by the kernels' own time, for kernels that are their operator's only one (an "
        "even sample of at most 256 runs of each kernel); % of "
        "peak holds them to the GPU's datasheet peak, and the roofline's side compares work per "
        "byte with the ridge point (peak over bandwidth). '–': no shapes recorded, an operator "
        "that launched several kernels, or a GPU the guide has no peaks for.",
        "GPU 時間の合計が最も長いカーネル名です。達成性能は、処理量（行列積では 2 × M × N × K）"
        "または起動した演算子の記録された形状から求めた最低限のバイト数を、カーネル自身の時間で"
        "割ったものです。演算子が起動したカーネルがそれ 1 つの場合だけ数えます（各カーネルの"
        "実行から最大 256 回を、トレース全体から均等に選びます）。ピーク性能に"
        "対する % はそれを GPU のデータシートのピーク性能と比べ、律速はバイトあたりの処理量を"
        "リッジポイント（ピーク性能 ÷ 帯域幅）と比べます。「–」は、形状が記録されていない、"
        "演算子が複数のカーネルを起動した、またはガイドがピーク性能を知らない GPU です。",
    )


def queue_line(queue: LaunchQueue | None, lang: str = "en") -> str | None:
    """One sentence on how the launches met their streams, with what it says about the pace."""
    if queue is None:
        return None
    pct = format_value(queue.queued_pct, "x_pct")
    latency = format_value(queue.latency_median_ns, "latency_median_ns")
    wait = format_value(queue.queue_median_ns, "queue_median_ns")
    launches = format_count(queue.launches)
    verdict = {
        "gpu": _t(
            lang,
            f"At least {GPU_PACED_PCT:g} % queued: the CPU ran ahead and the GPU set the pace; "
            "time is won on the GPU (the kernels above), not by launching faster.",
            f"{GPU_PACED_PCT:g} % 以上が待ち行列に入りました。CPU が先行し、GPU がペースを"
            "決めています。時間を縮められるのは GPU 側（上のカーネル）で、起動を速くしても"
            "縮みません。",
        ),
        "cpu": _t(
            lang,
            f"At most {CPU_PACED_PCT:g} % queued: the GPU mostly waited for the CPU's next "
            "launch; time is won on the CPU (fewer, larger kernels; CUDA graphs; torch.compile).",
            f"待ち行列に入ったのは {CPU_PACED_PCT:g} % 以下です。GPU はほとんどの間 CPU の次の"
            "起動を待っていました。時間を縮められるのは CPU 側です（カーネルを減らして大きくする、"
            "CUDA グラフ、torch.compile）。",
        ),
        "mixed": _t(
            lang,
            "Between the two: the pace changes within the trace (look at the steps one by one).",
            "その中間です。トレースの中でペースが変わっています（ステップを 1 つずつ見て"
            "ください）。",
        ),
    }[queue.pace]
    return _t(
        lang,
        f"Launch queue: of {launches} kernel launches, {pct} found their stream still busy and "
        f"queued (median wait {wait}); the rest started a median {latency} after their launch "
        f"call began. {verdict}",
        f"起動の待ち行列: カーネルの起動 {launches} 回のうち {pct} は、ストリームがまだ前の"
        f"処理を実行中で待ち行列に入りました（待ちの中央値 {wait}）。残りは起動の呼び出しの"
        f"開始から中央値で {latency} 後に始まりました。{verdict}",
    )


def kernels_text(view: KernelView | None, lang: str = "en") -> list[str]:
    """The section as lines of plain text (control characters are the caller's to drop)."""
    if view is None or not view.top:
        return []
    _, rows = kernel_table(view, lang)
    out = ["", _t(lang, *KERNELS_HEADING)]
    for row in rows:
        out.append(
            f"  {row[4]:>9}  {row[5]:>7}  {row[0]}"
            + _t(lang, f" ({row[1]}, ×{row[3]})", f"（{row[1]}、{row[3]} 回）")
        )
        if row[6] != "–":
            bound = "" if row[8] == "–" else _t(lang, f", bound by {row[8]}", f"、{row[8]}律速")
            out.append(
                _t(
                    lang,
                    f"{'':22}achieved {row[6]}, {row[7]} of peak{bound}",
                    f"{'':22}達成性能 {row[6]}、ピーク性能に対して {row[7]}{bound}",
                )
            )
    line = queue_line(view.queue, lang)
    if line:
        out += ["", line]
    return out


def kernels_markdown(view: KernelView | None, lang: str = "en", cell: Any = str) -> list[str]:
    """The section as Markdown lines; ``cell`` escapes a trace's string for a table cell."""
    if view is None or not view.top:
        return []
    head, rows = kernel_table(view, lang)
    out = ["", f"### {_t(lang, *KERNELS_HEADING)}", "", kernels_definition(lang), ""]
    out.append("| " + " | ".join(head) + " |")
    out.append("| --- | --- | --- | " + " | ".join(["---:"] * (len(head) - 3)) + " |")
    out += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    line = queue_line(view.queue, lang)
    if line:
        out += ["", line]
    return out


def kernels_html(view: KernelView | None, lang: str = "en") -> str:
    """The section as HTML ('' on a trace without kernels). The kernel's cell holds its name,
    what the name says and the launching operator, one line each, so that the numbers fit
    beside it on a desktop; on a phone the table scrolls in its own frame."""
    if view is None or not view.top:
        return ""
    head, rows = kernel_table(view, lang)
    e = html.escape
    parts = [
        '<section class="kernels">',
        f"<h3>{_t(lang, *KERNELS_HEADING)}</h3>",
        f"<p>{e(kernels_definition(lang))}</p>",
        '<div class="scroll"><table class="kernels-table"><thead><tr>',
        f"<th>{e(head[0])}</th>",
        *[f'<th class="num">{e(h)}</th>' for h in head[3:]],
        "</tr></thead><tbody>",
    ]
    for r, row in zip(view.top, rows, strict=True):
        kernel = (
            f'<td class="kernel"><code title="{e(str(r["name"]))}">{e(row[0])}</code>'
            f'<span class="about">{e(row[1])}</span>'
            f'<span class="about">{e(head[2])}: <code>{e(row[2])}</code></span></td>'
        )
        parts.append(
            "<tr>" + kernel + "".join(f'<td class="num">{e(x)}</td>' for x in row[3:]) + "</tr>"
        )
    parts.append("</tbody></table></div>")
    line = queue_line(view.queue, lang)
    if line:
        parts.append(f"<p>{e(line)}</p>")
    parts.append("</section>")
    return "\n".join(parts)
