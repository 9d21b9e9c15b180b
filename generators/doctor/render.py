"""A doctor's report as text, Markdown, JSON or one self-contained HTML file.

Every string that comes from a trace (kernel, operator and thread names, args) is escaped for
the format it lands in: HTML-escaped in HTML (and the page's Content-Security-Policy allows only
this module's own script, by hash, so markup that slipped through could not run), pipes and
backticks neutralised in Markdown, control characters dropped in text.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any

from generators.doctor.detectors import Detector
from generators.doctor.examine import Finding, Report
from generators.units import format_duration_ns, format_value

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = REPO_ROOT / "docs"
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


def page_headings(page: str) -> tuple[str | None, dict[str, str]]:
    """A page's title and its section headings by anchor (empty when the page is not here)."""
    path = DOCS / page
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


def guide_section(det: Detector) -> str:
    """'Page title › Section' for a detector's guide link, as the pages name them."""
    title, sections = page_headings(det.guide_page)
    section = sections.get(det.guide_anchor)
    return " › ".join(t for t in (title, section) if t) or det.guide


def zoom_window(row: dict[str, Any]) -> tuple[int, int]:
    """The [start, end] (absolute trace ns) Perfetto opens on for an evidence row."""
    ts, dur = int(row["ts"]), max(int(row["dur"] or 0), 0)
    margin = max(int(dur * ZOOM_MARGIN), (ZOOM_MIN_NS - dur) // 2, 0)
    return ts - margin, ts + dur + margin


def _extra_columns(f: Finding) -> list[str]:
    """Columns beyond the evidence ones that tell rows apart (a total repeated on every row is
    already in the finding's sentence)."""
    skip = {"ts", "dur", "location", "what", "cost_ns", "evidence"}
    if not f.rows:
        return []
    return [c for c in f.rows[0] if c not in skip and len({repr(r.get(c)) for r in f.rows}) > 1]


# ---------------------------------------------------------------- JSON


def to_json_obj(report: Report, base: str) -> dict[str, Any]:
    def finding(f: Finding) -> dict[str, Any]:
        d = f.detector
        return {
            "id": d.id,
            "title": d.title,
            "severity": d.severity,
            "cost_ns": f.cost_ns,
            "rows": len(f.rows),
            "seen": f.seen,
            "why": d.why,
            "try": d.try_,
            "after": d.after,
            "false_positives": d.false_positives,
            "guide": {"url": guide_url(d, base), "section": guide_section(d)},
            "params": {p.name: p.value for p in d.params},
            "breakdown": [{"value": v, "rows": n, "cost_ns": c} for v, n, c in f.breakdown],
            "evidence": [
                {
                    **{k: v for k, v in r.items() if k != "evidence"},
                    "perfetto_window_ns": list(zoom_window(r)),
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
        "seconds": None if report.seconds is None else round(report.seconds, 3),
        "worst_severity": report.worst(),
        "findings": [finding(f) for f in report.findings],
        "cannot_see": [
            {"id": lim.id, "text": lim.text, "detectors_skipped": list(lim.skipped)}
            for lim in report.limitations
        ],
        "silent": [d.id for d in report.silent],
        "not_run": [d.id for d in report.skipped],
        "failed": [{"id": d.id, "error": e} for d, e in report.failed],
    }


def render_json(reports: list[Report], base: str) -> str:
    return json.dumps([to_json_obj(r, base) for r in reports], indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- text and Markdown


def _when(report: Report, ns: int) -> str:
    return f"+{(ns - report.trace_start_ns) / 1e6:.3f} ms"


def _summary_line(report: Report) -> str:
    n = len(report.findings) + len(report.silent) + len(report.skipped) + len(report.failed)
    gpu = report.gpu or "no GPU"
    line = (
        f"{len(report.findings)} findings from {n} detectors ({len(report.silent)} silent, "
        f"{len(report.skipped)} could not run, {len(report.failed)} failed); {gpu}"
    )
    return line if report.seconds is None else f"{line}; examined in {report.seconds:.1f} s"


def render_text(reports: list[Report], base: str) -> str:
    out: list[str] = []
    for report in reports:
        out.append(f"== {clean(report.path)}")
        out.append(_summary_line(report))
        for i, f in enumerate(report.findings, 1):
            d = f.detector
            out.append("")
            out.append(
                f"{i}. {d.severity.upper()}: {d.title} [{d.id}], {format_duration_ns(f.cost_ns)}"
            )
            out.append(f"   Seen:  {clean(f.seen)}")
            for label, val in (("Why", d.why), ("Try", d.try_), ("After", d.after)):
                out.append(f"   {label + ':':6} {val}")
            if f.breakdown:
                parts = [
                    f"{clean(v)}: {n} × {format_duration_ns(c)}" for v, n, c in f.breakdown[:6]
                ]
                out.append(f"   By {d.breakdown}: " + "; ".join(parts))
            out.append(f"   Guide: {guide_url(d, base)} ({guide_section(d)})")
            out.append(f"   Evidence ({len(f.evidence)} of {len(f.rows)}; start from trace start):")
            for r in f.evidence:
                out.append(
                    f"     {_when(report, r['ts']):>14}  {format_duration_ns(r['dur'] or 0):>9}  "
                    f"{clean(r['location'])}: {clean(r['what'])}"
                )
        if report.limitations:
            out.append("")
            out.append("What this trace cannot show:")
            out += [f"  - {clean(lim.text)}" for lim in report.limitations]
        for d, e in report.failed:
            out.append(f"  ! detector {d.id} failed on this trace: {clean(e)}")
        if report.silent:
            out.append("")
            out.append("Checked, nothing found: " + ", ".join(d.id for d in report.silent))
        out.append("")
    return "\n".join(out)


def md_cell(text: object) -> str:
    """A trace's string inside a Markdown table cell: no pipes, no markup, no line breaks."""
    s = clean(text).replace("\n", " ")
    return html.escape(s).replace("|", "&#124;").replace("`", "&#96;").replace("*", "&#42;")


def render_markdown(reports: list[Report], base: str) -> str:
    out: list[str] = []
    for report in reports:
        out.append(f"## {md_cell(report.path.name)}")
        out.append("")
        out.append(_summary_line(report) + ".")
        for f in report.findings:
            d = f.detector
            out += ["", f"### {d.severity.capitalize()}: {d.title} (`{d.id}`)", ""]
            out.append(f"**Seen.** {md_cell(f.seen)}")
            out += ["", f"**Why it matters.** {d.why}", "", f"**What to try.** {d.try_}"]
            out += ["", f"**After.** {d.after}", ""]
            out.append(f"Guide: [{guide_section(d)}]({guide_url(d, base)})")
            if f.breakdown:
                out += ["", f"| {d.breakdown} | rows | time |", "| --- | ---: | ---: |"]
                out += [
                    f"| {md_cell(v)} | {n} | {format_duration_ns(c)} |"
                    for v, n, c in f.breakdown[:10]
                ]
            out += ["", "| start | duration | where | what |", "| ---: | ---: | --- | --- |"]
            out += [
                f"| {_when(report, r['ts'])} | {format_duration_ns(r['dur'] or 0)} | "
                f"{md_cell(r['location'])} | {md_cell(r['what'])} |"
                for r in f.evidence
            ]
            if f.unlisted:
                out.append(f"\n{f.unlisted} more rows not listed.")
        if report.limitations:
            out += ["", "**What this trace cannot show.**", ""]
            out += [f"- {md_cell(lim.text)}" for lim in report.limitations]
        if report.silent:
            out += ["", "Checked, nothing found: " + ", ".join(f"`{d.id}`" for d in report.silent)]
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


def _html_finding(report: Report, f: Finding, base: str, index: int) -> str:
    d = f.detector
    extra = _extra_columns(f)
    parts = [
        f'<section class="finding finding--{d.severity}" id="{_e(report.key)}-{d.id}">',
        f'<h3><span class="sev">{d.severity}</span> {_e(d.title)} <code>{d.id}</code>'
        f' <span class="cost">{format_duration_ns(f.cost_ns)}</span></h3>',
        f"<p><strong>Seen.</strong> {_e(f.seen)}</p>",
        f"<p><strong>Why it matters.</strong> {_prose(d.why)}</p>",
        f"<p><strong>What to try.</strong> {_prose(d.try_)}</p>",
        f"<p><strong>After.</strong> {_prose(d.after)}</p>",
        f'<p><strong>Guide:</strong> <a href="{_e(guide_url(d, base))}">'
        f"{_e(guide_section(d))}</a></p>",
    ]
    if f.breakdown:
        parts.append(
            f'<table class="breakdown"><thead><tr><th>{_e(d.breakdown)}</th>'
            "<th>rows</th><th>time</th></tr></thead><tbody>"
        )
        parts += [
            f"<tr><td>{_e(v)}</td><td>{n}</td><td>{format_duration_ns(c)}</td></tr>"
            for v, n, c in f.breakdown[:10]
        ]
        parts.append("</tbody></table>")
    parts.append(
        '<div class="scroll"><table class="evidence"><thead><tr><th>start</th>'
        "<th>duration</th><th>where</th><th>what</th>"
    )
    parts += [f"<th>{_e(c)}</th>" for c in extra]
    parts.append("<th></th></tr></thead><tbody>")
    for r in f.evidence:
        start, end = zoom_window(r)
        cells = "".join(f"<td>{_e(format_value(r.get(c), c))}</td>" for c in extra)
        parts.append(
            f"<tr><td>{_when(report, r['ts'])}</td><td>{format_duration_ns(r['dur'] or 0)}</td>"
            f'<td>{_e(r["location"])}</td><td class="what">{_e(r["what"])}</td>{cells}'
            f'<td><button type="button" class="open" data-trace="{_e(report.key)}" '
            f'data-vis-start="{start}" data-vis-end="{end}">Open in Perfetto</button></td></tr>'
        )
    parts.append("</tbody></table></div>")
    if f.unlisted:
        parts.append(
            f'<p class="more">{f.unlisted} more rows not listed (see the JSON report).</p>'
        )
    parts.append(
        f"<details><summary>The SQL behind this finding ({_e(d.path.name)})</summary>"
        f"<pre><code>{html.escape(f.sql)}</code></pre></details>"
    )
    parts.append("</section>")
    return "\n".join(parts)


def render_html(
    reports: list[Report],
    base: str,
    perfetto_origin: str = DEFAULT_PERFETTO_ORIGIN,
    *,
    with_findings: bool = True,
) -> str:
    """One self-contained HTML file. ``with_findings`` adds the "open with the findings drawn
    as tracks" widget (the site's "check in your browser" page, with the detectors' SQL inside:
    about 100 KB), which the gallery's reports leave out (the site has the page)."""
    script = _SCRIPT.read_text(encoding="utf-8")
    style = _STYLE.read_text(encoding="utf-8")
    scripts = [script]
    widget = ""
    if with_findings:
        from generators.doctor.browser import widget_html

        scripts.append(_BROWSER_SCRIPT.read_text(encoding="utf-8"))
        widget = (
            '<section class="with-findings"><h2>Open in Perfetto with the findings</h2>'
            "<p>Perfetto opens the whole trace with one pinned track per finding, its evidence "
            "as slices, and a tab listing the findings.</p>"
            + widget_html(perfetto_origin, base.rstrip("/") + "/")
            + "</section>"
        )
    for s in scripts:  # an inline script must not close its own element
        if "</script" in s.lower():
            raise ValueError("an inlined script contains '</script'")
    csp = (
        f"default-src 'none'; script-src {' '.join(_csp_hash(s) for s in scripts)}; "
        f"style-src {_csp_hash(style)}; connect-src 'self'; img-src 'self' data:"
    )
    body: list[str] = []
    for report in reports:
        body.append(
            f'<article class="trace" data-trace="{_e(report.key)}" '
            f'data-file-name="{_e(report.path.name)}">'
        )
        body.append(f"<h2>{_e(report.path.name)}</h2>")
        body.append(f"<p>{_e(_summary_line(report))}.</p>")
        body.append(
            '<p class="picker"><label>To open evidence in Perfetto, choose this trace file: '
            f'<input type="file" accept=".json,.gz,application/json,application/gzip" '
            f'data-trace="{_e(report.key)}"></label> <span class="status" role="status"></span></p>'
        )
        if report.findings:
            body.append("<nav><ol>")
            body += [
                f'<li><a href="#{_e(report.key)}-{f.detector.id}">{_e(f.detector.title)}</a> '
                f"({f.detector.severity}, {format_duration_ns(f.cost_ns)})</li>"
                for f in report.findings
            ]
            body.append("</ol></nav>")
        body += [_html_finding(report, f, base, i) for i, f in enumerate(report.findings, 1)]
        if report.limitations:
            body.append("<h3>What this trace cannot show</h3><ul>")
            body += [f"<li>{_e(lim.text)}</li>" for lim in report.limitations]
            body.append("</ul>")
        if report.failed:
            body.append("<h3>Detectors that failed on this trace</h3><ul>")
            body += [f"<li><code>{d.id}</code>: {_e(e)}</li>" for d, e in report.failed]
            body.append("</ul>")
        if report.silent:
            body.append(
                "<p>Checked, nothing found: "
                + ", ".join(f"<code>{d.id}</code>" for d in report.silent)
                + ".</p>"
            )
        body.append("</article>")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Trace report: {_e(", ".join(r.path.name for r in reports))}</title>
<style>{style}</style>
</head>
<body data-perfetto-origin="{_e(perfetto_origin)}">
<header><h1>Trace report</h1>
<p>Found by the profiling guide's detectors; every finding links to the guide's lesson.
"Open in Perfetto" hands the trace file you choose to the Perfetto UI in your browser
({_e(perfetto_origin)}); nothing is uploaded elsewhere. Browsers only allow that from a page
served over http: if nothing happens, serve this folder (<code>python -m http.server</code>)
and open the report from there.</p></header>
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
