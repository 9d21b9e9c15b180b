"""A doctor's report as text, Markdown, JSON or one self-contained HTML file.

Every string that comes from a trace (kernel, operator and thread names, args) is escaped for
the format it lands in: HTML-escaped in HTML (and the page's Content-Security-Policy allows only
this module's own script, by hash, so markup that slipped through could not run), pipes and
backticks neutralised in Markdown, control characters dropped in text.

Text, Markdown and HTML reports come in English (``lang="en"``) or Japanese (``lang="ja"``):
the detectors' prose from their ``_ja`` fields, the evidence's texts from their ``_ja`` columns
(``what_ja``, ``location_ja``, a breakdown column's twin), the columns' titles from the
detectors' ``columns``/``columns_ja`` headers, each fixed string here beside its English. The
JSON report is data: its fields in English, each text the reader sees with its ``_ja`` twin
beside it (``seen_ja``, ``text_ja``, ``value_ja``, the evidence rows' ``_ja`` columns).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any

from generators.doctor.detectors import JA_SUFFIX, Detector, ja_twin
from generators.doctor.examine import Finding, Group, Limitation, Report
from generators.doctor.ranks import UNBUCKETED_MIN_PER_STEP, Collective, CrossRank, Job
from generators.doctor.render_kernels import kernels_html, kernels_markdown, kernels_text
from generators.i18n import translated as _t
from generators.units import format_bytes, format_count, format_duration_ns, format_value

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = REPO_ROOT / "docs"
#: The Japanese edition's pages (same paths and section anchors as ``docs/``).
DOCS_JA = REPO_ROOT / "docs-ja"
DEFAULT_PERFETTO_ORIGIN = "https://ui.perfetto.dev"
#: Perfetto's zoom on one evidence row: the row, plus this share of its width on each side.
ZOOM_MARGIN = 0.25
#: The smallest window a zoom opens (ns), so that a 2 µs kernel is shown with its neighbours.
ZOOM_MIN_NS = 20_000
EXIT_CODES = {
    0: "no finding at or above the --fail-on severity (or no --fail-on)",
    1: "a finding at or above the --fail-on severity",
    2: "a trace could not be read, or the command line was wrong",
}

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


#: The severities as a Japanese report names them (``--fail-on`` takes the English ones).
SEVERITY_JA = {"info": "情報", "warning": "警告", "error": "エラー"}


def severity_label(severity: str, lang: str = "en") -> str:
    """A severity in ``lang``: the English word, or its Japanese."""
    return SEVERITY_JA.get(severity, severity) if lang == "ja" else severity


def breakdown_heading(d: Detector, lang: str = "en") -> str:
    """What a finding's breakdown groups its rows by: "By cause: " in English, "原因別: " in
    Japanese (the column's title)."""
    title = d.column_title(d.breakdown or "", lang)
    if lang == "ja":
        return f"{title}別: "
    # "Kind of copy" reads "By kind of copy"; an acronym ("GPU") keeps its capitals.
    return f"By {title if title[1:2].isupper() else title[:1].lower() + title[1:]}: "


def count_text(n: int, lang: str = "en") -> str:
    """A count as a reader sees it: grouped (46,041) in Japanese, as the seen line's counts are;
    the English report keeps its plain digits."""
    return format_count(n) if lang == "ja" else str(n)


def id_list(ids: list[str], lang: str = "en") -> str:
    """Detector ids as a list in ``lang``: comma-separated in English, with 「、」 in Japanese."""
    return _t(lang, ", ", "、").join(ids)


def breakdown_parts(groups: list[Group], lang: str = "en") -> list[tuple[str, int, int]]:
    """A breakdown's groups as (label in ``lang``, rows, cost_ns)."""
    return [(g.label(lang), g.rows, g.cost_ns) for g in groups]


def finding_seen(f: Finding, lang: str = "en") -> str:
    """A finding's sentence with its numbers, in ``lang``."""
    return f.seen_ja if lang == "ja" else f.seen


def limitation_text(lim: Limitation, lang: str = "en") -> str:
    return lim.text_ja if lang == "ja" else lim.text


#: The trust gate's heading, in every format.
TRUST_HEADING = ("Can I trust this trace?", "このトレースは信頼できるか？")


def trust_consequence(lim: Limitation, lang: str = "en") -> str:
    """What a trust line does to the detectors: which could not run, which it weakens."""
    parts = []
    if lim.skipped:
        ids = id_list(lim.skipped, lang)
        parts.append(_t(lang, f"could not run: {ids}", f"実行できず: {ids}"))
    if lim.weakens:
        ids = id_list(lim.weakens, lang)
        parts.append(_t(lang, f"weakens: {ids}", f"弱まる検出器: {ids}"))
    return "; ".join(parts) if lang == "en" else "。".join(parts)


def trust_lines(report: Report, lang: str = "en") -> list[tuple[str, str, str]]:
    """The trust gate as (level, text, consequence) lines, cautions first; one "nothing to
    doubt" line when the trace gives no reason."""
    lims = sorted(report.limitations, key=lambda lim: lim.level != "caution")
    if not lims:
        return [
            (
                "info",
                _t(
                    lang,
                    "Nothing in the trace itself gives a reason to doubt the findings.",
                    "トレース自体には、所見を疑う理由は見当たりません。",
                ),
                "",
            )
        ]
    return [(lim.level, limitation_text(lim, lang), trust_consequence(lim, lang)) for lim in lims]


def demotion_text(f: Finding, lang: str = "en") -> str | None:
    if not f.demoted:
        return None
    return f.demoted[1] if lang == "ja" else f.demoted[0]


def clean(text: object) -> str:
    """A trace's string for plain text: control characters (terminal escapes) dropped."""
    return _CONTROL.sub("", str(text))


def guide_url(det: Detector, base: str) -> str:
    """The URL of the page section that teaches a detector's lesson (MkDocs directory URLs)."""
    page, _, anchor = det.guide.partition("#")
    path = page.removesuffix(".md")
    path = "" if path == "index" else path + "/"
    return f"{base.rstrip('/')}/{path}#{anchor}"


def _slug(heading: str) -> str:
    text = re.sub(r"`([^`]*)`", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return re.sub(r"[\s]+", "-", text)


def page_headings(page: str, lang: str = "en") -> tuple[str | None, dict[str, str]]:
    """A page's title and its section headings by anchor (empty when the page is not here),
    from the English pages or, for ``lang="ja"``, the Japanese edition's."""
    path = (DOCS_JA if lang == "ja" else DOCS) / page
    if not path.exists():
        return None, {}
    title, sections = None, {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^(#{1,4}) (.+?)(?:\s*\{\s*#([\w-]+)\s*\})?\s*$", line)
        if not m:
            continue
        text = re.sub(r"`([^`]*)`", r"\1", m.group(2)).strip()
        if m.group(1) == "#" and title is None:
            title = text
        sections[m.group(3) or _slug(m.group(2))] = text
    return title, sections


def guide_section(det: Detector, lang: str = "en") -> str:
    """'Page title › Section' for a detector's guide link, as the pages (of the edition in
    ``lang``, else the English ones) name them."""
    title, sections = page_headings(det.guide_page, lang)
    if lang != "en" and title is None:
        title, sections = page_headings(det.guide_page)
    section = sections.get(det.guide_anchor)
    return " › ".join(t for t in (title, section) if t) or det.guide


def zoom_window(row: dict[str, Any], bounds: tuple[int, int] | None = None) -> tuple[int, int]:
    """The [start, end] (absolute trace ns) Perfetto opens on for an evidence row, kept inside
    the trace's ``bounds`` when given (the UI would clip a window that runs past them, and a
    row as long as the trace, a whole step, has margins that do)."""
    ts, dur = int(row["ts"]), max(int(row["dur"] or 0), 0)
    margin = max(int(dur * ZOOM_MARGIN), (ZOOM_MIN_NS - dur) // 2, 0)
    start, end = ts - margin, ts + dur + margin
    if bounds is not None and bounds[1] > bounds[0]:
        start, end = max(start, bounds[0]), min(end, bounds[1])
    return start, end


def _extra_columns(f: Finding) -> list[str]:
    """Columns beyond the evidence ones that tell rows apart (a total repeated on every row is
    already in the finding's sentence)."""
    skip = {"ts", "dur", "location", "what", "cost_ns", "evidence"}
    if not f.rows:
        return []
    return [
        c
        for c in f.rows[0]
        if c not in skip and not c.endswith(JA_SUFFIX) and len({repr(r.get(c)) for r in f.rows}) > 1
    ]


# ---------------------------------------------------------------- JSON


def to_json_obj(report: Report, base: str, timings: bool = False) -> dict[str, Any]:
    """The report as JSON data; ``timings``: with the seconds of each phase (``--timings``)."""

    def finding(f: Finding) -> dict[str, Any]:
        d = f.detector
        return {
            "id": d.id,
            "title": d.title,
            "severity": f.severity,
            "detector_severity": d.severity,
            "demoted": f.demoted[0] if f.demoted else None,
            "cost_ns": f.cost_ns,
            "rows": len(f.rows),
            "seen": f.seen,
            "seen_ja": f.seen_ja,
            "why": d.why,
            "try": d.try_,
            "after": d.after,
            "false_positives": d.false_positives,
            "guide": {"url": guide_url(d, base), "section": guide_section(d)},
            "params": {p.name: p.value for p in d.params},
            "breakdown": [
                {
                    "value": g.value,
                    **({"value_ja": g.value_ja} if g.value_ja is not None else {}),
                    "rows": g.rows,
                    "cost_ns": g.cost_ns,
                }
                for g in f.breakdown
            ],
            "evidence": [
                {
                    **{k: v for k, v in r.items() if k != "evidence"},
                    "perfetto_window_ns": list(zoom_window(r, report.bounds)),
                }
                for r in f.evidence
            ],
            "evidence_not_listed": f.unlisted,
            "sql": f.sql,
        }

    return {
        "trace": str(report.path),
        "trace_bytes": report.size_bytes,
        "trace_start_ns": report.trace_start_ns,
        "gpu": report.gpu,
        "device": report.device,
        "seconds": None if report.seconds is None else round(report.seconds, 3),
        "worst_severity": report.worst(),
        # The trust gate, first in the report: what in the trace bends or blocks which detectors.
        "trust": [
            {
                "id": lim.id,
                "level": lim.level,
                "text": lim.text,
                "text_ja": lim.text_ja,
                "detectors_skipped": list(lim.skipped),
                "detectors_weakened": list(lim.weakens),
            }
            for lim in report.limitations
        ],
        "findings": [finding(f) for f in report.findings],
        "silent": [d.id for d in report.silent],
        "not_run": [d.id for d in report.skipped],
        "failed": [{"id": d.id, "error": e} for d, e in report.failed],
        "kernels": report.kernels.to_json() if report.kernels else None,
        **({"timings": timings_obj(report)} if timings else {}),
    }


def timings_obj(report: Report) -> dict[str, Any]:
    """The seconds of each phase of a report: the engine's import of the trace, the file's
    checks and the trust gate where they were timed, and each detector that ran (by id, in the
    order they ran)."""
    phases = {k: round(v, 4) for k, v in report.timings.items() if ":" not in k}
    detectors = {k: round(v, 4) for k, v in report.detector_seconds.items()}
    return {**phases, "detectors": detectors}


def render_json(
    reports: list[Report],
    base: str,
    ranks: CrossRank | Job | None = None,
    timings: bool = False,
) -> str:
    """The reports as a JSON list; for the ranks of one job, an object: the reports under
    ``traces``, the cross-rank section beside them (``job``, ``ranks``, one entry per rank,
    ``collectives`` and ``unbucketed_all_reduces``). ``timings``: each report with the seconds
    of its phases (``timings``)."""
    traces = [to_json_obj(r, base, timings) for r in reports]
    data: Any = {"traces": traces, **ranks.to_json()} if isinstance(ranks, CrossRank) else traces
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def render_timings(reports: list[Report], render_s: float | None, lang: str = "en") -> str:
    """What ``--timings`` prints on stderr after the report: for each trace, the seconds of each
    phase (the engine's import, the trust gate, each detector), slowest first, and the share of
    the trace's total each takes; then the rendering of the whole report."""
    lines: list[str] = []
    for report in reports:
        phases = sorted(report.timings.items(), key=lambda kv: (-kv[1], kv[0]))
        total = sum(report.timings.values())
        lines.append(
            _t(lang, f"timings of {report.path} (seconds):", f"{report.path} の所要時間（秒）:")
        )
        width = max((len(name) for name, _ in phases), default=0)
        for name, seconds in phases:
            share = f"{100 * seconds / total:5.1f} %" if total else ""
            lines.append(f"  {name:{width}}  {seconds:8.3f}  {share}")
        lines.append(f"  {_t(lang, 'total', '合計'):{width}}  {total:8.3f}")
    if render_s is not None:
        lines.append(
            _t(lang, f"rendering the report: {render_s:.3f}", f"レポートの出力: {render_s:.3f}")
        )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- text and Markdown


def _when(report: Report, ns: int) -> str:
    return f"+{(ns - report.trace_start_ns) / 1e6:.3f} ms"


def _summary_line(report: Report, lang: str = "en") -> str:
    n = len(report.findings) + len(report.silent) + len(report.skipped) + len(report.failed)
    if lang == "ja":
        line = (
            f"検出器 {n} 個で所見 {len(report.findings)} 件（所見なし {len(report.silent)}、"
            f"実行できず {len(report.skipped)}、失敗 {len(report.failed)}）、"
            f"{report.device_ja or report.gpu or 'GPU なし'}"
        )
        return line if report.seconds is None else f"{line}、所要時間 {report.seconds:.1f} s"
    gpu = report.device or report.gpu or "no GPU"
    line = (
        f"{len(report.findings)} findings from {n} detectors ({len(report.silent)} silent, "
        f"{len(report.skipped)} could not run, {len(report.failed)} failed); {gpu}"
    )
    return line if report.seconds is None else f"{line}; examined in {report.seconds:.1f} s"


def render_text(
    reports: list[Report], base: str, lang: str = "en", ranks: CrossRank | Job | None = None
) -> str:
    out: list[str] = render_ranks_text(ranks, lang)
    labels = {
        "Seen": _t(lang, "Seen:  ", "観測: "),
        "Why": _t(lang, "Why:   ", "理由: "),
        "Try": _t(lang, "Try:   ", "対策: "),
        "After": _t(lang, "After: ", "改善後: "),
    }
    for report in reports:
        out.append(f"== {clean(report.path)}")
        out.append(_summary_line(report, lang))
        out.append("")
        out.append(_t(lang, *TRUST_HEADING))
        for level, text, consequence in trust_lines(report, lang):
            mark = "!" if level == "caution" else "-"
            out.append(f"  {mark} {clean(text)}")
            if consequence:
                out.append(_t(lang, f"    ({consequence})", f"    （{consequence}）"))
        for i, f in enumerate(report.findings, 1):
            d = f.detector
            out.append("")
            out.append(
                f"{i}. {severity_label(f.severity, lang).upper()}: {d.text('title', lang)} "
                + _t(
                    lang,
                    f"[{d.id}], {format_duration_ns(f.cost_ns)}",
                    f"[{d.id}]（{format_duration_ns(f.cost_ns)}）",
                )
            )
            if f.demoted:
                out.append(f"   {demotion_text(f, lang)}")
            out.append(f"   {labels['Seen']}{clean(finding_seen(f, lang))}")
            for label, val in (("Why", "why"), ("Try", "try_"), ("After", "after")):
                out.append(f"   {labels[label]}{d.text(val, lang)}")
            if f.breakdown:
                parts = [
                    _t(
                        lang,
                        f"{clean(v)}: {n} × {format_duration_ns(c)}",
                        f"{clean(v)}: {count_text(n, lang)} 回、計 {format_duration_ns(c)}",
                    )
                    for v, n, c in breakdown_parts(f.breakdown[:6], lang)
                ]
                out.append(f"   {breakdown_heading(d, lang)}" + _t(lang, "; ", "、").join(parts))
            out.append(
                _t(lang, "   Guide: ", "   ガイド: ")
                + guide_url(d, base)
                + _t(lang, f" ({guide_section(d, lang)})", f"（{guide_section(d, lang)}）")
            )
            out.append(
                _t(
                    lang,
                    f"   Evidence ({len(f.evidence)} of {len(f.rows)}; start from trace start):",
                    f"   証拠（{count_text(len(f.rows), lang)} 行中 {len(f.evidence)} 行、"
                    "開始はトレースの先頭から）:",
                )
            )
            for r in f.evidence:
                out.append(
                    f"     {_when(report, r['ts']):>14}  {format_duration_ns(r['dur'] or 0):>9}  "
                    f"{clean(ja_twin(r, 'location', lang))}: {clean(ja_twin(r, 'what', lang))}"
                )
        for d, e in report.failed:
            out.append(
                _t(
                    lang,
                    f"  ! detector {d.id} failed on this trace: {clean(e)}",
                    f"  ! 検出器 {d.id} はこのトレースで失敗しました: {clean(e)}",
                )
            )
        if report.silent:
            out.append("")
            out.append(
                _t(lang, "Checked, nothing found: ", "確認済み、所見なし: ")
                + id_list([d.id for d in report.silent], lang)
            )
        out += [clean(line) for line in kernels_text(report.kernels, lang)]
        out.append("")
    return "\n".join(out)


def md_cell(text: object) -> str:
    """A trace's string inside a Markdown table cell: no pipes, no markup, no line breaks."""
    s = clean(text).replace("\n", " ")
    return html.escape(s).replace("|", "&#124;").replace("`", "&#96;").replace("*", "&#42;")


def render_markdown(
    reports: list[Report], base: str, lang: str = "en", ranks: CrossRank | Job | None = None
) -> str:
    out: list[str] = render_ranks_markdown(ranks, lang)
    for report in reports:
        out.append(f"## {md_cell(report.path.name)}")
        out.append("")
        out.append(_summary_line(report, lang) + _t(lang, ".", "。"))
        out += ["", f"### {_t(lang, *TRUST_HEADING)}", ""]
        for level, text, consequence in trust_lines(report, lang):
            mark = _t(lang, "**Caution.** ", "**注意:** ") if level == "caution" else ""
            more = (
                _t(lang, f" ({md_cell(consequence)})", f"（{md_cell(consequence)}）")
                if consequence
                else ""
            )
            out.append(f"- {mark}{md_cell(text)}{more}")
        for f in report.findings:
            d = f.detector
            title = d.text("title", lang)
            out += [
                "",
                _t(
                    lang,
                    f"### {f.severity.capitalize()}: {title} (`{d.id}`)",
                    f"### {title}（`{d.id}`、{severity_label(f.severity, lang)}）",
                ),
                "",
            ]
            if f.demoted:
                out += [f"*{md_cell(demotion_text(f, lang))}*", ""]
            out.append(_t(lang, "**Seen.** ", "**観測:** ") + md_cell(finding_seen(f, lang)))
            out += [
                "",
                _t(lang, "**Why it matters.** ", "**なぜ問題か:** ") + d.text("why", lang),
                "",
                _t(lang, "**What to try.** ", "**対策:** ") + d.text("try_", lang),
            ]
            out += ["", _t(lang, "**After.** ", "**改善後:** ") + d.text("after", lang), ""]
            out.append(
                _t(lang, "Guide: ", "ガイド: ")
                + f"[{guide_section(d, lang)}]({guide_url(d, base)})"
            )
            if f.breakdown:
                out += [
                    "",
                    f"| {md_cell(d.column_title(d.breakdown or '', lang))} | "
                    + _t(lang, "rows | time |", "行数 | 時間 |"),
                    "| --- | ---: | ---: |",
                ]
                out += [
                    f"| {md_cell(v)} | {count_text(n, lang)} | {format_duration_ns(c)} |"
                    for v, n, c in breakdown_parts(f.breakdown[:10], lang)
                ]
            out += [
                "",
                _t(lang, "| start | duration | where | what |", "| 開始 | 長さ | 場所 | 内容 |"),
                "| ---: | ---: | --- | --- |",
            ]
            out += [
                f"| {_when(report, r['ts'])} | {format_duration_ns(r['dur'] or 0)} | "
                f"{md_cell(ja_twin(r, 'location', lang))} | {md_cell(ja_twin(r, 'what', lang))} |"
                for r in f.evidence
            ]
            if f.unlisted:
                out.append(
                    _t(
                        lang,
                        f"\n{f.unlisted} more rows not listed.",
                        f"\nほかに {count_text(f.unlisted, lang)} 行あります"
                        "（一覧にはありません）。",
                    )
                )
        if report.silent:
            out += [
                "",
                _t(lang, "Checked, nothing found: ", "確認済み、所見なし: ")
                + id_list([f"`{d.id}`" for d in report.silent], lang),
            ]
        out += kernels_markdown(report.kernels, lang, md_cell)
        out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------- HTML

_SCRIPT = Path(__file__).with_name("report.js")
_STYLE = Path(__file__).with_name("report.css")
_BROWSER_SCRIPT = DOCS / "javascripts" / "doctor-browser.js"


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _e(text: object) -> str:
    return html.escape(clean(text), quote=True)


def _prose(text: str) -> str:
    """A detector's own prose (never a trace's text) in HTML: escaped, `code` as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", _e(text))


def _num(value: object) -> str:
    """The class of a cell that holds a number (kept on one line: "+0.425 ms", "12.5 µs")."""
    return ' class="num"' if isinstance(value, int | float) else ""


def _html_finding(report: Report, f: Finding, base: str, index: int, lang: str = "en") -> str:
    d = f.detector
    extra = _extra_columns(f)
    parts = [
        f'<section class="finding finding--{f.severity}" id="{_e(report.key)}-{d.id}">',
        f'<h3><span class="sev">{severity_label(f.severity, lang)}</span> '
        f"{_e(d.text('title', lang))} <code>{d.id}</code>"
        f' <span class="cost">{format_duration_ns(f.cost_ns)}</span></h3>',
        *([f'<p class="demoted">{_e(demotion_text(f, lang))}</p>'] if f.demoted else []),
        f"<p><strong>{_t(lang, 'Seen.', '観測:')}</strong> {_e(finding_seen(f, lang))}</p>",
        f"<p><strong>{_t(lang, 'Why it matters.', 'なぜ問題か:')}</strong> "
        f"{_prose(d.text('why', lang))}</p>",
        f"<p><strong>{_t(lang, 'What to try.', '対策:')}</strong> "
        f"{_prose(d.text('try_', lang))}</p>",
        f"<p><strong>{_t(lang, 'After.', '改善後:')}</strong> {_prose(d.text('after', lang))}</p>",
        f"<p><strong>{_t(lang, 'Guide:', 'ガイド:')}</strong> "
        f'<a href="{_e(guide_url(d, base))}">{_e(guide_section(d, lang))}</a></p>',
    ]
    if f.breakdown:
        parts.append(
            '<div class="scroll"><table class="breakdown"><thead><tr>'
            f"<th>{_e(d.column_title(d.breakdown or '', lang))}</th>"
            + _t(lang, "<th>Rows</th><th>Time</th>", "<th>行数</th><th>時間</th>")
            + "</tr></thead><tbody>"
        )
        parts += [
            f'<tr><td class="what">{_e(v)}</td><td class="num">{count_text(n, lang)}</td>'
            f'<td class="num">{format_duration_ns(c)}</td></tr>'
            for v, n, c in breakdown_parts(f.breakdown[:10], lang)
        ]
        parts.append("</tbody></table></div>")
    parts.append(
        '<div class="scroll"><table class="evidence"><thead><tr>'
        + _t(
            lang,
            "<th>Start</th><th>Duration</th><th>Where</th><th>What</th>",
            "<th>開始</th><th>長さ</th><th>場所</th><th>内容</th>",
        )
    )
    parts += [f"<th>{_e(d.column_title(c, lang))}</th>" for c in extra]
    parts.append("<th></th></tr></thead><tbody>")
    for r in f.evidence:
        start, end = zoom_window(r, report.bounds)
        cells = "".join(
            f"<td{_num(ja_twin(r, c, lang))}>{_e(format_value(ja_twin(r, c, lang), c))}</td>"
            for c in extra
        )
        parts.append(
            f'<tr><td class="num">{_when(report, r["ts"])}</td>'
            f'<td class="num">{format_duration_ns(r["dur"] or 0)}</td>'
            f"<td>{_e(ja_twin(r, 'location', lang))}</td>"
            f'<td class="what">{_e(ja_twin(r, "what", lang))}</td>{cells}'
            f'<td><button type="button" class="open" data-trace="{_e(report.key)}" '
            f'data-vis-start="{start}" data-vis-end="{end}">'
            f"{_t(lang, 'Open in Perfetto', 'Perfetto で開く')}</button></td></tr>"
        )
    parts.append("</tbody></table></div>")
    if f.unlisted:
        parts.append(
            '<p class="more">'
            + _t(
                lang,
                f"{f.unlisted} more rows not listed (see the JSON report).",
                f"ほかに {count_text(f.unlisted, lang)} 行あります（一覧にはありません。"
                "JSON のレポートを見てください）。",
            )
            + "</p>"
        )
    parts.append(
        "<details><summary>"
        + _t(
            lang,
            f"The SQL behind this finding ({_e(d.path.name)})",
            f"この所見の元になった SQL（{_e(d.path.name)}）",
        )
        + f"</summary><pre><code>{html.escape(f.sql)}</code></pre></details>"
    )
    parts.append("</section>")
    return "\n".join(parts)


def _html_trust(report: Report, lang: str = "en") -> str:
    """The trust gate as an HTML section: one item per line, cautions marked."""
    items = []
    for level, text, consequence in trust_lines(report, lang):
        more = (
            _t(
                lang,
                f' <span class="weakens">({_e(consequence)})</span>',
                f'<span class="weakens">（{_e(consequence)}）</span>',
            )
            if consequence
            else ""
        )
        # _prose: escaped like any trace text, its `commands` set as code.
        items.append(f'<li class="trust--{_e(level)}">{_prose(text)}{more}</li>')
    return (
        f'<section class="trust" id="{_e(report.key)}-trust"><h3>{_t(lang, *TRUST_HEADING)}</h3>'
        f"<ul>{''.join(items)}</ul></section>"
    )


def render_html(
    reports: list[Report],
    base: str,
    perfetto_origin: str = DEFAULT_PERFETTO_ORIGIN,
    *,
    with_findings: bool = True,
    lang: str = "en",
    ranks: CrossRank | Job | None = None,
) -> str:
    """One self-contained HTML file. ``with_findings`` adds the "open with the findings drawn
    as tracks" widget (the site's "check in your browser" page, with the detectors' SQL inside:
    about 100 KB), which the gallery's reports leave out (the site has the page). Its scripts
    speak the page's language (``<html lang>``)."""
    script = _SCRIPT.read_text(encoding="utf-8")
    style = _STYLE.read_text(encoding="utf-8")
    scripts = [script]
    widget = ""
    if with_findings:
        from generators.doctor.browser import widget_html

        scripts.append(_BROWSER_SCRIPT.read_text(encoding="utf-8"))
        widget = (
            '<section class="with-findings">'
            + _t(
                lang,
                "<h2>Open in Perfetto with the findings</h2>"
                "<p>Perfetto opens the whole trace with one pinned track per finding, its evidence "
                "as slices, and a tab listing the findings.</p>",
                "<h2>所見つきで Perfetto で開く</h2>"
                "<p>Perfetto がトレース全体を開き、所見ごとに固定されたトラック"
                "（証拠がスライスとして並びます）と、所見の一覧を示すタブを加えます。</p>",
            )
            + widget_html(perfetto_origin, base.rstrip("/") + "/", lang=lang)
            + "</section>"
        )
    for s in scripts:  # an inline script must not close its own element
        if "</script" in s.lower():
            raise ValueError("an inlined script contains '</script'")
    csp = (
        f"default-src 'none'; script-src {' '.join(_csp_hash(s) for s in scripts)}; "
        f"style-src {_csp_hash(style)}; connect-src 'self'; img-src 'self' data:"
    )
    body: list[str] = [render_ranks_html(ranks, lang)] if ranks is not None else []
    for report in reports:
        body.append(
            f'<article class="trace" data-trace="{_e(report.key)}" '
            f'data-file-name="{_e(report.path.name)}">'
        )
        body.append(f"<h2>{_e(report.path.name)}</h2>")
        if report.provenance:
            body.append(
                '<p class="provenance">'
                + _t(
                    lang,
                    "Another project's trace, not a measurement of this guide's: ",
                    "このガイドの測定ではなく、ほかのプロジェクトのトレースです: ",
                )
                + f"{_e(report.provenance)}</p>"
            )
        body.append(f"<p>{_e(_summary_line(report, lang))}{_t(lang, '.', '。')}</p>")
        body.append(_html_trust(report, lang))
        body.append(
            '<p class="picker"><label>'
            + _t(
                lang,
                "To open evidence in Perfetto, choose this trace file: ",
                "証拠を Perfetto で開くには、このトレースのファイルを選んでください: ",
            )
            + '<input type="file" accept=".json,.gz,application/json,application/gzip" '
            f'data-trace="{_e(report.key)}"></label> <span class="status" role="status"></span></p>'
        )
        if report.findings:
            body.append("<nav><ol>")
            body += [
                f'<li><a href="#{_e(report.key)}-{f.detector.id}">'
                f"{_e(f.detector.text('title', lang))}</a>"
                + _t(
                    lang,
                    f" ({f.severity}, {format_duration_ns(f.cost_ns)})",
                    f"（{severity_label(f.severity, lang)}、{format_duration_ns(f.cost_ns)}）",
                )
                + "</li>"
                for f in report.findings
            ]
            body.append("</ol></nav>")
        body += [_html_finding(report, f, base, i, lang) for i, f in enumerate(report.findings, 1)]
        if report.failed:
            body.append(
                _t(
                    lang,
                    "<h3>Detectors that failed on this trace</h3>",
                    "<h3>このトレースで失敗した検出器</h3>",
                )
                + "<ul>"
            )
            body += [f"<li><code>{d.id}</code>: {_e(e)}</li>" for d, e in report.failed]
            body.append("</ul>")
        if report.silent:
            body.append(
                _t(lang, "<p>Checked, nothing found: ", "<p>確認済み、所見なし: ")
                + id_list([f"<code>{d.id}</code>" for d in report.silent], lang)
                + _t(lang, ".</p>", "</p>")
            )
        body.append(kernels_html(report.kernels, lang))
        body.append("</article>")
    names = _e(", ".join(r.path.name for r in reports))
    header = _t(
        lang,
        f"""<title>Trace report: {names}</title>
<style>{style}</style>
</head>
<body data-perfetto-origin="{_e(perfetto_origin)}">
<header><h1>Trace report</h1>
<p>Found by the profiling guide's detectors; every finding links to the guide's lesson.
"Open in Perfetto" hands the trace file you choose to the Perfetto UI in your browser
({_e(perfetto_origin)}); nothing is uploaded elsewhere. Browsers only allow that from a page
served over http: if nothing happens, serve this folder (<code>python -m http.server</code>)
and open the report from there.</p></header>""",
        f"<title>トレースのレポート: {names}</title>\n<style>{style}</style>\n</head>\n"
        f'<body data-perfetto-origin="{_e(perfetto_origin)}">\n'
        "<header><h1>トレースのレポート</h1>\n<p>プロファイリングガイドの検出器が見つけた所見です。"
        "どの所見もガイドのレッスンにリンクしています。"
        "「Perfetto で開く」は、選んだトレースのファイルをブラウザの Perfetto UI"
        f"（{_e(perfetto_origin)}）に渡します。ほかの場所には何もアップロードしません。"
        "ブラウザがこれを許すのは http で配信されたページからだけです。何も起きないときは、"
        "このフォルダを配信し（<code>python -m http.server</code>）、"
        "そこからレポートを開いてください。</p></header>",
    )
    return f"""<!doctype html>
<html lang="{_t(lang, "en", "ja")}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
{header}
<main>
{widget}
{chr(10).join(body)}
</main>
{"".join(f"<script>{s}</script>" for s in scripts)}
</body>
</html>
"""


RENDERERS = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
}


# ---------------------------------------------------------------- across the ranks

#: The cross-rank section's heading, in every format.
RANKS_HEADING = ("Across the ranks", "ランク間の比較")
#: Aligned collectives listed with their arrivals, the widest spread first.
LISTED_COLLECTIVES = 5
#: Arrivals listed per collective (a job of more ranks lists the latest ones).
LISTED_ARRIVALS = 8


def _dur(ns: int | None) -> str:
    return "–" if ns is None else format_duration_ns(ns)


def _pct(value: float | None) -> str:
    return "–" if value is None else format_value(value, "x_pct")


def rank_table(cross: CrossRank, lang: str = "en") -> tuple[list[str], list[list[str]]]:
    """The per-rank table: column titles and rows, as plain text (each format escapes it)."""
    head = [
        _t(lang, "rank", "ランク"),
        _t(lang, "trace", "トレース"),
        _t(lang, "steps", "ステップ"),
        _t(lang, "step time", "ステップ時間"),
        _t(lang, "GPU busy", "GPU 稼働率"),
        _t(lang, "communication", "通信"),
        _t(lang, "exposed communication", "計算と重なっていない通信"),
        _t(lang, "waiting in collectives", "集団通信での待ち"),
        _t(lang, "last to arrive", "最後に到着"),
        _t(lang, "all-reduces per step", "ステップあたりの all-reduce"),
    ]
    rows = []
    for r in cross.ranks:
        rows.append(
            [
                str(r.rank),
                Path(r.trace).name,
                str(r.steps),
                _dur(r.step_ns),
                _pct(r.busy_pct),
                _dur(r.comm_ns),
                f"{_dur(r.exposed_ns)} ({_pct(r.exposed_pct)})",
                _dur(r.wait_ns),
                f"{r.last_arrivals} / {r.aligned}",
                format_value(r.all_reduces_per_step, "n"),
            ]
        )
    return head, rows


def ranks_definition(lang: str = "en") -> str:
    """What the per-rank numbers measure."""
    return _t(
        lang,
        "Inside each rank's profiled steps. GPU busy and communication are unions of intervals "
        "(work on several streams at once counts once); exposed communication is communication "
        "kernel time that no compute kernel on the same GPU overlapped (its share of the steps in "
        "brackets); waiting in collectives is, at the aligned collectives, the time from a rank's "
        "kernel start to the last rank's; last to arrive counts the aligned collectives at which "
        "the rank came last.",
        "各ランクのプロファイルされたステップの中で測ります。GPU 稼働率と通信は区間の和集合です"
        "（複数のストリームで同時に動いた仕事は 1 回だけ数えます）。計算と重なっていない通信は、"
        "同じ GPU で計算カーネルが動いていなかった通信カーネルの時間です（括弧内はステップに"
        "占める割合）。集団通信での待ちは、そろった集団通信で、そのランクのカーネルの開始から"
        "最後のランクのカーネルの開始までの時間です。最後に到着は、そのランクが最後に来た"
        "そろった集団通信の数です。",
    )


def _collective_name(c: Collective, lang: str = "en") -> str:
    group = f", {_t(lang, 'group', 'グループ')} {c.process_group}" if c.process_group else ""
    return f"{c.kind} #{c.seq}{group}"


def collectives_summary(cross: CrossRank, lang: str = "en") -> list[str]:
    """Sentences on the collectives: how many matched and aligned, who came last most often."""
    total, aligned = len(cross.collectives), len(cross.aligned)
    if not total:
        return [
            _t(
                lang,
                "No communication kernel in any rank's trace: nothing to match across the ranks.",
                "どのランクのトレースにも通信カーネルがないため、ランク間で突き合わせるものは"
                "ありません。",
            )
        ]
    out = [
        _t(
            lang,
            f"Collectives: {total} matched across the ranks by process group, kind and order; "
            f"{aligned} aligned (every rank ran it, and its kernels overlap in time on every "
            "rank, as one collective's must).",
            f"集団通信: プロセスグループ、種類、順番でランク間に {total} 個を突き合わせ、"
            f"そのうち {aligned} 個がそろっています（どのランクも実行し、1 つの集団通信らしく"
            "全ランクのカーネルが時間的に重なっています）。",
        )
    ]
    if aligned < total:
        out.append(
            _t(
                lang,
                f"{total - aligned} are not aligned: a rank did not run it, or its kernels do not "
                "all overlap in time, so the match by order paired different collectives (a trace "
                "with events missing, as a sampled trace has) or the ranks' clocks disagree. Their "
                "arrivals are left out of the waits below.",
                f"{total - aligned} 個はそろっていません。実行していないランクがあるか、カーネルが"
                "時間的に重なっていないため、順番による突き合わせが別々の集団通信を組み合わせた"
                "（イベントが欠けたトレース、たとえば間引かれたトレース）か、ランクの時計が"
                "ずれています。以下の待ち時間には含めません。",
            )
        )
    if aligned:
        worst = max(cross.ranks, key=lambda r: (r.last_arrivals, r.late_ns, -r.rank))
        out.append(
            _t(
                lang,
                f"Most often last to arrive: rank {worst.rank}, at {worst.last_arrivals} of the "
                f"{aligned} aligned collectives; the first rank waited {_dur(worst.late_ns)} for "
                "it in all (a union of intervals).",
                f"最も多く最後に到着したのはランク {worst.rank} で、そろった {aligned} 個の集団通信"
                f"のうち {worst.last_arrivals} 個です。最初のランクがこのランクを待った時間は"
                f"合計 {_dur(worst.late_ns)}（区間の和集合）です。",
            )
        )
    return out


def straggler_lines(cross: CrossRank, lang: str = "en") -> list[str]:
    """The aligned collectives with the widest spread: the straggler, how late, each arrival."""
    out = []
    for c in cross.stragglers[:LISTED_COLLECTIVES]:
        latest = sorted(c.arrivals.items(), key=lambda kv: (-kv[1], kv[0]))[:LISTED_ARRIVALS]
        arrivals = ", ".join(
            f"{_t(lang, 'rank', 'ランク')} {r} +{_dur(ns)}" for r, ns in sorted(latest)
        )
        more = len(c.arrivals) - len(latest)
        if more:
            arrivals += _t(
                lang, f" (and {more} earlier)", f"（ほかに {more} ランクがより早く到着）"
            )
        out.append(
            _t(
                lang,
                f"{_collective_name(c, lang)}: rank {c.straggler} arrived last, "
                f"{_dur(c.spread_ns)} after the first; arrivals: {arrivals}",
                f"{_collective_name(c, lang)}: ランク {c.straggler} が最後に到着し、"
                f"最初のランクから {_dur(c.spread_ns)} 遅れました。到着: {arrivals}",
            )
        )
    return out


def unbucketed_lines(cross: CrossRank, lang: str = "en") -> list[str]:
    """The call-out on unbucketed all-reduces (none: one line saying so, where any ran)."""
    out = []
    for r in cross.unbucketed:
        if r.all_reduce_median_bytes is not None:
            size = _t(
                lang,
                f"median {format_bytes(r.all_reduce_median_bytes)}",
                f"中央値 {format_bytes(r.all_reduce_median_bytes)}",
            )
        else:
            size = _t(
                lang,
                f"sizes not recorded, median kernel {_dur(r.all_reduce_median_ns)}",
                f"サイズの記録なし、カーネルの中央値 {_dur(r.all_reduce_median_ns)}",
            )
        per_step = format_value(r.all_reduces_per_step, "n")
        out.append(
            _t(
                lang,
                f"Unbucketed all-reduces on rank {r.rank}: {per_step} all-reduce kernels per step "
                f"({size}). Gradients are all-reduced tensor by tensor, and each all-reduce pays "
                "its fixed cost: bucket them (DDP does, `bucket_cap_mb`, 25 MiB by default; by "
                "hand, flatten the gradients into one buffer first).",
                f"ランク {r.rank} のバケット化されていない all-reduce: ステップあたり {per_step} 個"
                f"の all-reduce カーネル（{size}）。勾配をテンソルごとに all-reduce しており、"
                "1 回ごとに固定のコストがかかります。バケットにまとめてください（DDP はそうします。"
                "`bucket_cap_mb`、既定は 25 MiB。手で書くなら、先に勾配を 1 つのバッファに"
                "まとめます）。",
            )
        )
    if not out and any(r.all_reduces for r in cross.ranks):
        out.append(
            _t(
                lang,
                f"No rank runs {UNBUCKETED_MIN_PER_STEP} or more small all-reduces per step: the "
                "gradients travel in buckets.",
                f"ステップあたり {UNBUCKETED_MIN_PER_STEP} 個以上の小さな all-reduce を実行する"
                "ランクはありません。勾配はバケットにまとめて送られています。",
            )
        )
    return out


def render_ranks_text(ranks: CrossRank | Job | None, lang: str = "en") -> list[str]:
    """The cross-rank section as plain-text lines (none when the question does not arise)."""
    if ranks is None:
        return []
    job = ranks.job if isinstance(ranks, CrossRank) else ranks
    out = [f"== {_t(lang, *RANKS_HEADING)}", clean(_t(lang, job.reason, job.reason_ja))]
    if not isinstance(ranks, CrossRank):
        return [*out, ""]
    out += ["", ranks_definition(lang), ""]
    head, rows = rank_table(ranks, lang)
    widths = [max(len(clean(x)) for x in col) for col in zip(head, *rows, strict=True)]
    for line in [head, *rows]:
        out.append("  " + "  ".join(clean(x).ljust(w) for x, w in zip(line, widths, strict=True)))
    out.append("")
    out += [clean(s) for s in collectives_summary(ranks, lang)]
    out += [f"  - {clean(s)}" for s in straggler_lines(ranks, lang)]
    unbucketed = unbucketed_lines(ranks, lang)
    if unbucketed:
        out.append("")
        out += [clean(s) for s in unbucketed]
    out.append("")
    return out


def render_ranks_markdown(ranks: CrossRank | Job | None, lang: str = "en") -> list[str]:
    """The cross-rank section as Markdown lines."""
    if ranks is None:
        return []
    job = ranks.job if isinstance(ranks, CrossRank) else ranks
    out = [f"## {_t(lang, *RANKS_HEADING)}", "", md_cell(_t(lang, job.reason, job.reason_ja))]
    if not isinstance(ranks, CrossRank):
        return [*out, ""]
    out += ["", md_cell(ranks_definition(lang)), ""]
    head, rows = rank_table(ranks, lang)
    out.append("| " + " | ".join(md_cell(h) for h in head) + " |")
    out.append("| ---: | --- |" + " ---: |" * (len(head) - 2))
    out += ["| " + " | ".join(md_cell(x) for x in row) + " |" for row in rows]
    out.append("")
    out += [md_cell(s) for s in collectives_summary(ranks, lang)]
    stragglers = straggler_lines(ranks, lang)
    if stragglers:
        out.append("")
        out += [f"- {md_cell(s)}" for s in stragglers]
    unbucketed = unbucketed_lines(ranks, lang)
    if unbucketed:
        out.append("")
        out += [_md_prose(s) for s in unbucketed]
    out.append("")
    return out


def _md_prose(text: str) -> str:
    """The doctor's own sentence with a trace's numbers in Markdown: escaped, `code` kept."""
    parts = re.split(r"(`[^`]+`)", text)
    return "".join(p if p.startswith("`") and p.endswith("`") else md_cell(p) for p in parts)


def render_ranks_html(ranks: CrossRank | Job | None, lang: str = "en") -> str:
    """The cross-rank section as one HTML section ('' when the question does not arise)."""
    if ranks is None:
        return ""
    job = ranks.job if isinstance(ranks, CrossRank) else ranks
    parts = [
        '<section class="ranks" id="ranks">',
        f"<h2>{_t(lang, *RANKS_HEADING)}</h2>",
        f"<p>{_e(_t(lang, job.reason, job.reason_ja))}</p>",
    ]
    if isinstance(ranks, CrossRank):
        head, rows = rank_table(ranks, lang)
        parts.append(f"<p>{_e(ranks_definition(lang))}</p>")
        parts.append('<div class="scroll"><table class="ranks-table"><thead><tr>')
        parts += [f"<th>{_e(h)}</th>" for h in head]
        parts.append("</tr></thead><tbody>")
        parts += ["<tr>" + "".join(f"<td>{_e(x)}</td>" for x in row) + "</tr>" for row in rows]
        parts.append("</tbody></table></div>")
        parts += [f"<p>{_e(s)}</p>" for s in collectives_summary(ranks, lang)]
        stragglers = straggler_lines(ranks, lang)
        if stragglers:
            parts.append("<ul>" + "".join(f"<li>{_e(s)}</li>" for s in stragglers) + "</ul>")
        parts += [f"<p>{_prose(s)}</p>" for s in unbucketed_lines(ranks, lang)]
    parts.append("</section>")
    return "\n".join(parts)
