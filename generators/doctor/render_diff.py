"""``doctor diff``'s report as text, Markdown, JSON or one self-contained HTML file, in English
or Japanese (JSON stays English). Every name from a trace (kernels, shapes, operators, paths) is
escaped for the format it lands in, as in the doctor's own report (generators/doctor/render.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from generators.doctor.diff import (
    APPEARED,
    MATCHED_BY,
    VANISHED,
    Change,
    Diff,
    FindingChange,
    KernelChange,
    KernelSide,
    by_family,
)
from generators.doctor.render import _STYLE, _csp_hash, _e, clean
from generators.doctor.render import md_cell as _md_cell
from generators.i18n import translated as _t
from generators.table_cells import looks_like_cpp, short_kernel_name
from generators.units import format_duration_ns, format_value

#: The report's heading, in every format.
DIFF_HEADING = ("Before and after", "変更前と変更後")
#: Kernels and operators listed in text, Markdown and HTML (the JSON lists all).
LISTED_KERNELS = 40
LISTED_OPERATORS = 20

_HOW = {
    MATCHED_BY[0]: ("same name and shape", "名前と形状が同じ"),
    MATCHED_BY[1]: ("same name, other shape", "名前が同じで形状が違う"),
    MATCHED_BY[2]: (
        "same family, work and operator, other name",
        "ファミリー、仕事、演算子が同じで名前が違う",
    ),
    VANISHED: ("not matched: before only (vanished)", "対応なし: 変更前だけ（消えた）"),
    APPEARED: ("not matched: after only (appeared)", "対応なし: 変更後だけ（現れた）"),
}
_STATUS = {
    "fixed": ("fixed", "解消"),
    "new": ("new", "新規"),
    "still": ("still found", "残っている"),
    "not compared": (
        "not compared (the detector did not run on both)",
        "比較できず（検出器が両方で実行されていない）",
    ),
}


def _side_name(lang: str, key: str) -> str:
    return _t(lang, key, {"before": "変更前", "after": "変更後"}[key])


def _signed(value: float | None, unit: str) -> str:
    """A change with its sign, in the unit's format ('+1.2 µs', '-1', '+3.0 points')."""
    if value is None:
        return "–"
    if abs(value) < 1e-9:
        return "0"
    sign = "+" if value > 0 else "-"
    if unit == "_pct":
        return f"{sign}{format_value(abs(value), 'x_n')} pt"
    return sign + format_value(abs(value), "x" + unit)


def _value(value: float | None, unit: str) -> str:
    return format_value(value, "x" + unit)


def change_row(c: Change, lang: str = "en") -> list[str]:
    """A metric's row: name, before, after, change (with its share of before)."""
    change = _signed(c.delta, c.metric.unit)
    if c.pct is not None and c.delta:
        change += f" ({_signed(c.pct, '_n')} %)"
    return [
        _t(lang, c.metric.en, c.metric.ja),
        _value(c.before, c.metric.unit),
        _value(c.after, c.metric.unit),
        change,
    ]


def metrics_head(lang: str = "en") -> list[str]:
    return [
        _t(lang, "per step", "ステップあたり"),
        _side_name(lang, "before"),
        _side_name(lang, "after"),
        _t(lang, "change", "変化"),
    ]


def definition(lang: str = "en") -> str:
    return _t(
        lang,
        "Means over each run's own profiled steps (the profiler's stub steps left out), so runs "
        "with different numbers of steps compare. A kernel counts in the step that launched it. "
        "GPU busy is the guide's one busy share (a union of the GPU's activity over the steps); "
        "exposed communication is communication no compute kernel on the same GPU overlapped; "
        "the memory peak is the CUDA caching allocator's highest total inside the steps, where "
        "the trace records it (profile_memory=True).",
        "各実行のプロファイルされたステップ（プロファイラのスタブは除く）の平均なので、ステップ数"
        "の違う実行どうしも比べられます。カーネルは、それを起動したステップに数えます。GPU 稼働率"
        "はこのガイド全体で共通の定義（ステップ内の GPU のアクティビティの和集合）、"
        "計算と重なっていない通信は同じ GPU の計算カーネルと重ならなかった通信、"
        "メモリのピークはトレースが記録していれば（profile_memory=True）"
        "ステップ内の CUDA キャッシュアロケータの最大値です。",
    )


def matching_rule(lang: str = "en") -> str:
    return _t(
        lang,
        "Kernels are matched by name and shape (a name that repeats in a step by its place among "
        "its namesakes), then by name alone, then by the kernel-name decoder's family and kind of "
        "work with the same launching operator, each pass in the order the kernels run; the rest "
        "could not be matched. Families first, the one whose time changed most at the top.",
        "カーネルは、名前と形状（1 ステップに何度も現れる名前は同名の中での順番）、次に名前だけ、"
        "次にカーネル名のデコーダが読むファミリーと仕事の種類（起動した演算子も同じもの）で、"
        "いずれも実行順に突き合わせます。残りは対応が見つかりませんでした。ファミリーごとに、"
        "時間の変化が大きいものから並べます。",
    )


def run_line(d: Diff, key: str, lang: str = "en") -> str:
    run = d.before if key == "before" else d.after
    device = (run.report.device_ja if lang == "ja" else run.report.device) or _t(
        lang, "no GPU", "GPU なし"
    )
    return _t(
        lang,
        f"{_side_name(lang, key)}: {run.path} ({run.steps} step{'' if run.steps == 1 else 's'}, "
        f"{device})",
        f"{_side_name(lang, key)}: {run.path}（ステップ {run.steps} 個、{device}）",
    )


def _family(k: KernelChange, lang: str) -> str:
    return k.family or _t(lang, "family unknown", "ファミリー不明")


def _kname(name: str) -> str:
    return short_kernel_name(name) if looks_like_cpp(name) else name


def _side_text(side: KernelSide | None, lang: str) -> str:
    if side is None:
        return "–"
    shape = f" ({side.shape})" if side.shape else ""
    per = _t(lang, "per step", "/ステップ")
    return (
        f"{_kname(side.name)}{shape}: {format_value(side.per_step, 'x_n')} {per}, "
        f"{format_duration_ns(side.ns_per_step)}"
    )


def kernel_row(k: KernelChange, lang: str = "en") -> list[str]:
    """A kernel's row: family, how it was matched, before, after, change in count and time."""
    return [
        _family(k, lang),
        _t(lang, *_HOW[k.how]),
        _side_text(k.before, lang),
        _side_text(k.after, lang),
        f"{_signed(k.count_delta, '_n')}, {_signed(k.ns_delta, '_ns')}",
    ]


def family_rows(d: Diff, lang: str = "en") -> list[list[str]]:
    """Per family: kernels per step and their time per step, before and after."""
    rows = []
    for f in by_family(d.kernels):
        rows.append(
            [
                f.family or _t(lang, "family unknown", "ファミリー不明"),
                f"{_value(f.before, '_n')} → {_value(f.after, '_n')}",
                f"{format_duration_ns(f.before_ns)} → {format_duration_ns(f.after_ns)}",
                f"{_signed(f.after - f.before, '_n')}, {_signed(f.after_ns - f.before_ns, '_ns')}",
            ]
        )
    return rows


def family_head(lang: str = "en") -> list[str]:
    return [
        _t(lang, "family", "ファミリー"),
        _t(lang, "kernels per step", "ステップあたりのカーネル"),
        _t(lang, "time per step", "ステップあたりの時間"),
        _t(lang, "change (count, time)", "変化（数、時間）"),
    ]


def kernels_head(lang: str = "en") -> list[str]:
    return [
        _t(lang, "family", "ファミリー"),
        _t(lang, "matched by", "対応の根拠"),
        _t(lang, "before (per step)", "変更前（ステップあたり）"),
        _t(lang, "after (per step)", "変更後（ステップあたり）"),
        _t(lang, "change (count, time)", "変化（数、時間）"),
    ]


def listed_kernels(d: Diff) -> tuple[list[KernelChange], int, list[KernelChange]]:
    """The kernels to list (those that changed), how many more there are, and those matched by
    name and shape whose count per step did not move."""
    changed = [k for k in d.kernels if k.changed]
    same = [k for k in d.kernels if not k.changed]
    return changed[:LISTED_KERNELS], max(len(changed) - LISTED_KERNELS, 0), same


def same_line(d: Diff, lang: str = "en") -> str | None:
    _, _, same = listed_kernels(d)
    if not same:
        return None
    runs = sum(k.before.per_step for k in same if k.before)
    before = sum(k.before.ns_per_step for k in same if k.before)
    after = sum(k.after.ns_per_step for k in same if k.after)
    n = format_value(runs, "x_n")
    return _t(
        lang,
        f"Unchanged: {len(same)} kernels matched by name and shape run as often as before "
        f"({n} per step); their time per step went from {format_duration_ns(before)} to "
        f"{format_duration_ns(after)}.",
        f"変わらないもの: 名前と形状で対応した {len(same)} 種類のカーネルは前と同じ回数"
        f"（ステップあたり {n} 回）実行され、ステップあたりの時間は {format_duration_ns(before)} "
        f"から {format_duration_ns(after)} になりました。",
    )


def _kinds(n: int) -> str:
    return f"{n} kind" if n == 1 else f"{n} kinds"


def not_matched_lines(d: Diff, lang: str = "en") -> list[str]:
    """What could not be matched, said plainly."""
    out = []
    for kind, ks in ((VANISHED, d.vanished), (APPEARED, d.appeared)):
        if not ks:
            continue
        per = sum((k.before or k.after).per_step for k in ks)  # type: ignore[union-attr]
        n = format_value(per, "x_n")
        if kind == VANISHED:
            out.append(
                _t(
                    lang,
                    f"Kernels of the run before with no match after (vanished): {_kinds(len(ks))}, "
                    f"{n} per step.",
                    f"変更後に対応のない変更前のカーネル（消えた）: {len(ks)} 種類、"
                    f"ステップあたり {n} 個。",
                )
            )
        else:
            out.append(
                _t(
                    lang,
                    f"Kernels of the run after with no match before (appeared): {_kinds(len(ks))}, "
                    f"{n} per step.",
                    f"変更前に対応のない変更後のカーネル（現れた）: {len(ks)} 種類、"
                    f"ステップあたり {n} 個。",
                )
            )
    for ops, en, ja in (
        (d.ops_only_before, "Operators called before only", "変更前だけで呼ばれた演算子"),
        (d.ops_only_after, "Operators called after only", "変更後だけで呼ばれた演算子"),
    ):
        if ops:
            names = ", ".join(o.name for o in ops[:LISTED_OPERATORS])
            more = len(ops) - LISTED_OPERATORS
            if more > 0:
                names += _t(lang, f" and {more} more", f" ほか {more} 個")
            out.append(_t(lang, f"{en}: {names}.", f"{ja}: {names}。"))
    if not out:
        out.append(
            _t(
                lang,
                "Every kernel and operator of each run was matched in the other.",
                "どちらの実行のカーネルと演算子も、すべてもう一方に対応が見つかりました。",
            )
        )
    return out


def op_rows(d: Diff, lang: str = "en") -> list[list[str]]:
    """Operators whose calls per step changed, the largest change first."""
    rows = []
    for o in [o for o in d.operators if abs(o.delta) > 1e-9][:LISTED_OPERATORS]:
        rows.append(
            [
                o.name,
                _value(o.before, "_n") if o.before is not None else "–",
                _value(o.after, "_n") if o.after is not None else "–",
                _signed(o.delta, "_n"),
            ]
        )
    return rows


def ops_head(lang: str = "en") -> list[str]:
    return [
        _t(lang, "operator (calls per step)", "演算子（ステップあたりの呼び出し）"),
        _side_name(lang, "before"),
        _side_name(lang, "after"),
        _t(lang, "change", "変化"),
    ]


def ops_changed(d: Diff) -> int:
    return sum(1 for o in d.operators if abs(o.delta) > 1e-9)


def finding_line(f: FindingChange, lang: str = "en") -> str:
    title = f.title_ja if lang == "ja" else f.title
    costs = []
    for key, sev, cost in (
        ("before", f.severity_before, f.cost_before_ns),
        ("after", f.severity_after, f.cost_after_ns),
    ):
        if sev is not None:
            costs.append(f"{_side_name(lang, key)}: {sev}, {format_duration_ns(cost or 0)}")
        else:
            costs.append(f"{_side_name(lang, key)}: –")
    return _t(
        lang,
        f"{_STATUS[f.status][0]}: {title} [{f.id}] ({'; '.join(costs)})",
        f"{_STATUS[f.status][1]}: {title} [{f.id}]（{'、'.join(costs)}）",
    )


def more_line(more: int, lang: str = "en") -> str:
    return _t(
        lang,
        f"... and {more} more (see --format json).",
        f"ほか {more} 件（--format json を見てください）。",
    )


def no_ops_line(lang: str = "en") -> str:
    return _t(
        lang,
        "No operator's calls per step changed.",
        "ステップあたりの呼び出し回数が変わった演算子はありません。",
    )


def findings_none(lang: str = "en") -> str:
    return _t(lang, "No finding on either trace.", "どちらのトレースにも所見はありません。")


def headings(lang: str = "en") -> dict[str, str]:
    return {
        "runs": _t(lang, "The runs", "比べた実行"),
        "caveats": _t(lang, "Read with care", "注意して読むこと"),
        "per_step": _t(lang, "Per step", "ステップあたり"),
        "kernels": _t(lang, "Kernels", "カーネル"),
        "operators": _t(lang, "Operators", "演算子"),
        "not_matched": _t(lang, "Not matched", "対応が見つからなかったもの"),
        "findings": _t(lang, "The doctor's findings", "doctor の所見"),
    }


# ---------------------------------------------------------------- text


def _text_table(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(clean(x)) for x in col) for col in zip(head, *rows, strict=True)]
    return [
        "  " + "  ".join(clean(x).ljust(w) for x, w in zip(line, widths, strict=True)).rstrip()
        for line in [head, *rows]
    ]


def render_diff_text(d: Diff, lang: str = "en") -> str:
    h = headings(lang)
    out = [f"== {_t(lang, *DIFF_HEADING)}", clean(run_line(d, "before", lang))]
    out.append(clean(run_line(d, "after", lang)))
    if d.caveats:
        out += ["", h["caveats"]]
        out += [f"  ! {clean(_t(lang, en, ja))}" for en, ja in d.caveats]
    out += ["", h["per_step"], definition(lang), ""]
    out += _text_table(metrics_head(lang), [change_row(c, lang) for c in d.changes])
    out += ["", h["kernels"], matching_rule(lang), ""]
    out += _text_table(family_head(lang), family_rows(d, lang))
    out.append("")
    listed, more, _ = listed_kernels(d)
    for k in listed:
        row = kernel_row(k, lang)
        out.append(f"  [{clean(row[0])}] {row[1]}; {_t(lang, 'change', '変化')} {row[4]}")
        out.append(f"    {_side_name(lang, 'before')}: {clean(row[2])}")
        out.append(f"    {_side_name(lang, 'after')}: {clean(row[3])}")
    if more:
        out.append(f"  {more_line(more, lang)}")
    line = same_line(d, lang)
    if line:
        out.append(line)
    rows = op_rows(d, lang)
    out += ["", h["operators"]]
    if rows:
        out += _text_table(ops_head(lang), rows)
    else:
        out.append(no_ops_line(lang))
    out += ["", h["not_matched"]]
    out += [clean(s) for s in not_matched_lines(d, lang)]
    out += ["", h["findings"]]
    out += [f"  - {clean(finding_line(f, lang))}" for f in d.findings] or [findings_none(lang)]
    out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------- Markdown


def md_cell(text: object) -> str:
    """A trace's string in Markdown (the doctor's md_cell), with what could still start a link,
    emphasis or strike-through escaped: brackets, underscores, tildes (and backslashes first)."""
    out = _md_cell(text).replace("\\", "\\\\")
    for ch in "[]_~":
        out = out.replace(ch, "\\" + ch)
    return out


def _md_table(head: list[str], rows: list[list[str]], numeric_from: int = 1) -> list[str]:
    align = ["---" if i < numeric_from else "---:" for i in range(len(head))]
    out = ["| " + " | ".join(md_cell(x) for x in head) + " |", "| " + " | ".join(align) + " |"]
    out += ["| " + " | ".join(md_cell(x) for x in row) + " |" for row in rows]
    return out


def render_diff_markdown(d: Diff, lang: str = "en") -> str:
    h = headings(lang)
    out = [f"## {_t(lang, *DIFF_HEADING)}", ""]
    out += [f"- {md_cell(run_line(d, 'before', lang))}", f"- {md_cell(run_line(d, 'after', lang))}"]
    if d.caveats:
        out += ["", f"### {h['caveats']}", ""]
        out += [f"- {md_cell(_t(lang, en, ja))}" for en, ja in d.caveats]
    out += ["", f"### {h['per_step']}", "", md_cell(definition(lang)), ""]
    out += _md_table(metrics_head(lang), [change_row(c, lang) for c in d.changes])
    out += ["", f"### {h['kernels']}", "", md_cell(matching_rule(lang)), ""]
    out += _md_table(family_head(lang), family_rows(d, lang))
    out.append("")
    listed, more, _ = listed_kernels(d)
    if listed:
        out += _md_table(kernels_head(lang), [kernel_row(k, lang) for k in listed], numeric_from=4)
    if more:
        out += ["", md_cell(more_line(more, lang))]
    line = same_line(d, lang)
    if line:
        out += ["", md_cell(line)]
    rows = op_rows(d, lang)
    out += ["", f"### {h['operators']}", ""]
    if rows:
        out += _md_table(ops_head(lang), rows)
    else:
        out.append(md_cell(no_ops_line(lang)))
    out += ["", f"### {h['not_matched']}", ""]
    out += [f"- {md_cell(s)}" for s in not_matched_lines(d, lang)]
    out += ["", f"### {h['findings']}", ""]
    out += [f"- {md_cell(finding_line(f, lang))}" for f in d.findings] or [
        md_cell(findings_none(lang))
    ]
    out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------- JSON


def render_diff_json(d: Diff) -> str:
    return json.dumps(d.to_json(), indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- HTML


def _html_table(head: list[str], rows: list[list[str]], cls: str) -> str:
    parts = [f'<div class="scroll"><table class="{cls}"><thead><tr>']
    parts += [f"<th>{_e(x)}</th>" for x in head]
    parts.append("</tr></thead><tbody>")
    parts += ["<tr>" + "".join(f"<td>{_e(x)}</td>" for x in row) + "</tr>" for row in rows]
    parts.append("</tbody></table></div>")
    return "".join(parts)


def _html_kernels(d: Diff, lang: str) -> str:
    listed, _, _ = listed_kernels(d)
    parts = ['<div class="scroll"><table class="diff-kernels"><thead><tr>']
    parts += [f"<th>{_e(x)}</th>" for x in kernels_head(lang)]
    parts.append("</tr></thead><tbody>")
    for k in listed:
        row = kernel_row(k, lang)
        cells = [f"<td>{_e(row[0])}</td>", f"<td>{_e(row[1])}</td>"]
        for side, text in ((k.before, row[2]), (k.after, row[3])):
            full = f' title="{_e(side.name)}"' if side is not None else ""
            cells.append(f'<td class="what"{full}>{_e(text)}</td>')
        cells.append(f"<td>{_e(row[4])}</td>")
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</tbody></table></div>")
    return "".join(parts)


def render_diff_html(d: Diff, lang: str = "en") -> str:
    """One self-contained HTML file: no script, its style allowed by hash."""
    style = _STYLE.read_text(encoding="utf-8")
    csp = f"default-src 'none'; style-src {_csp_hash(style)}; img-src 'self' data:"
    h = headings(lang)
    title = _t(lang, *DIFF_HEADING)
    names = _e(f"{Path(d.before.path).name} → {Path(d.after.path).name}")
    body = [
        f"<h1>{title}</h1>",
        f'<section id="runs"><h2>{h["runs"]}</h2><ul>',
        f"<li>{_e(run_line(d, 'before', lang))}</li>",
        f"<li>{_e(run_line(d, 'after', lang))}</li></ul></section>",
    ]
    if d.caveats:
        body.append(f'<section class="trust" id="caveats"><h2>{h["caveats"]}</h2><ul>')
        body += [f'<li class="trust--caution">{_e(_t(lang, en, ja))}</li>' for en, ja in d.caveats]
        body.append("</ul></section>")
    body.append(f'<section id="per-step"><h2>{h["per_step"]}</h2><p>{_e(definition(lang))}</p>')
    body.append(
        _html_table(metrics_head(lang), [change_row(c, lang) for c in d.changes], "diff-metrics")
    )
    body.append("</section>")
    body.append(
        f'<section id="kernels"><h2>{h["kernels"]}</h2><p>{_e(matching_rule(lang))}</p>'
        + _html_table(family_head(lang), family_rows(d, lang), "diff-families")
        + _html_kernels(d, lang)
    )
    _, more, _ = listed_kernels(d)
    if more:
        body.append(f"<p>{_e(more_line(more, lang))}</p>")
    line = same_line(d, lang)
    if line:
        body.append(f"<p>{_e(line)}</p>")
    body.append("</section>")
    rows = op_rows(d, lang)
    body.append(f'<section id="operators"><h2>{h["operators"]}</h2>')
    body.append(
        _html_table(ops_head(lang), rows, "diff-operators")
        if rows
        else f"<p>{_e(no_ops_line(lang))}</p>"
    )
    body.append("</section>")
    body.append(f'<section id="not-matched"><h2>{h["not_matched"]}</h2><ul>')
    body += [f"<li>{_e(s)}</li>" for s in not_matched_lines(d, lang)]
    body.append("</ul></section>")
    body.append(f'<section id="findings"><h2>{h["findings"]}</h2><ul>')
    body += [f"<li>{_e(finding_line(f, lang))}</li>" for f in d.findings] or [
        f"<li>{_e(findings_none(lang))}</li>"
    ]
    body.append("</ul></section>")
    return f"""<!doctype html>
<html lang="{_t(lang, "en", "ja")}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}: {names}</title>
<style>{style}</style>
</head>
<body>
<main>
{chr(10).join(body)}
</main>
</body>
</html>
"""


def render_diff(d: Diff, fmt: str, lang: str = "en") -> str:
    """The report in ``fmt`` (text, markdown, json or html)."""
    if fmt == "json":
        return render_diff_json(d)
    if fmt == "html":
        return render_diff_html(d, lang)
    if fmt == "markdown":
        return render_diff_markdown(d, lang)
    return render_diff_text(d, lang)
