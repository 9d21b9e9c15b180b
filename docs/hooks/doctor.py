"""MkDocs hook: the doctor on the site, from its detector files and its gallery artifacts.

Placeholders (each alone on a line)::

    {{ doctor_detectors() }}   one section per detector, from generators/detectors/*.sql
    {{ doctor_gallery() }}     the doctor's report on every gallery trace (artifacts/doctor/)
    {{ doctor_example("slug") }}  one gallery trace's report, shortened (render_example)

Every lesson page a detector names (its ``guide:`` header) gets a "check your own trace" note
under that section's heading, so lesson and detector link both ways without a hand-kept list.
Names from traces are escaped: the gallery's text goes through ``html.escape``; the example
report is a fenced code block.

The build's language (``theme.language``) picks the edition's text: in the Japanese edition the
detectors' ``_ja`` fields, the gallery's ``seen_ja`` / ``text_ja`` / ``label_ja`` and each fixed
string below in its Japanese (``_t``). Links to pages stay relative, so they stay in the edition.
Each edition publishes the gallery's reports in its own language under its own
``artifacts/doctor/`` (``<slug>.html`` in English, ``<slug>.ja.html`` in Japanese), where their
links back to the guide land in the same edition.
"""

from __future__ import annotations

import html
import json
import posixpath
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from generators import env  # noqa: E402
from generators.doctor.browser import widget_html  # noqa: E402
from generators.doctor.detectors import Detector, ja_twin, load_detectors  # noqa: E402
from generators.doctor.gallery import GALLERY_DIR, GALLERY_FILE  # noqa: E402
from generators.doctor.render import (  # noqa: E402
    _slug,
    breakdown_heading,
    guide_section,
    severity_label,
)
from generators.i18n import edition_language  # noqa: E402
from generators.i18n import translated as _t  # noqa: E402
from generators.markdown import fenced  # noqa: E402
from generators.table_cells import markdown_text  # noqa: E402
from generators.units import format_duration_ns  # noqa: E402

ARTIFACTS_DIR = Path(env.ARTIFACTS_DIR.get() or REPO_ROOT / "artifacts")
DOCTOR_PAGE = "check-your-trace.md"
PLACEHOLDER = re.compile(
    r"^(?P<indent>[ \t]*)\{\{\s*(?P<func>doctor_[a-z_]+)\((?P<args>[^)]*)\)\s*\}\}\s*$", re.M
)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _rel(page_url: str, target: str) -> str:
    """A link from the page at ``page_url`` to a site path (MkDocs directory URLs)."""
    start = page_url if page_url.endswith("/") else posixpath.dirname(page_url)
    return posixpath.relpath(target, start or ".")


def _md_link(from_page: str, target_page: str, anchor: str = "") -> str:
    """A Markdown link between two pages' source files (MkDocs checks and rewrites it)."""
    rel = posixpath.relpath(target_page, posixpath.dirname(from_page) or ".")
    return rel + (f"#{anchor}" if anchor else "")


def _gallery() -> dict:
    path = ARTIFACTS_DIR / GALLERY_DIR / GALLERY_FILE
    if not path.exists():
        raise PluginError(f"{path} is missing: run `make derive`")
    return json.loads(path.read_text(encoding="utf-8"))


#: What a detector needs from a trace (its ``needs:`` header), as the Japanese edition says it;
#: the header's word follows as code.
NEEDS_JA = {
    "gpu": "GPU のアクティビティ",
    "flows": "起動のフロー",
    "shapes": "入力形状",
    "steps": "ステップの目印",
    "device": "GPU のモデル",
}


def _detector_section(det: Detector, page: str, lang: str = "en") -> str:
    rel_sql = det.path.relative_to(REPO_ROOT).as_posix()
    params = "".join(f"\n- `{p.name}` = {p.value}: {p.meaning(lang)}" for p in det.params)
    params = _t(lang, "**Thresholds:**", "**しきい値:**") + f"\n{params}" if params else ""
    needs = (
        ", ".join(det.needs)
        if lang == "en"
        else "、".join(f"{NEEDS_JA[n]}（`{n}`）" for n in det.needs)
    ) or _t(lang, "nothing beyond a trace", "トレースだけ")
    lesson = (
        ""
        if det.guide_page == DOCTOR_PAGE
        else "\n"
        + _t(lang, "**The lesson:** ", "**レッスン:** ")
        + f"[{guide_section(det, lang)}]({_md_link(page, det.guide_page, det.guide_anchor)})\n"
    )
    body = "\n".join(fenced(det.sql(), "sql", indent="    "))
    severity, needs_label = _t(lang, "severity", "重大度"), _t(lang, "needs", "必要なもの")
    # --fail-on takes the English word: the Japanese edition gives it beside its own.
    severity_shown = _t(
        lang,
        f"**{det.severity}**",
        f"**{severity_label(det.severity, lang)}**（`{det.severity}`）",
    )
    return f"""### {det.text("title", lang)} {{ #{det.id} }}

`{det.id}` · {severity} {severity_shown} · {needs_label}: {needs}

{det.text("why", lang)}

{_t(lang, "**What to try.**", "**対策:**")} {det.text("try_", lang)}

{_t(lang, "**After.**", "**改善後:**")} {det.text("after", lang)}

{_t(lang, "**Known false positives.**", "**既知の誤検出:**")} {det.text("false_positives", lang)}
{lesson}
{params}

??? note "{_t(lang, "The SQL", "この検出器の SQL")}: `{rel_sql}`"

{body}
"""


def render_detectors(page: str, lang: str = "en") -> str:
    return "\n".join(_detector_section(d, page, lang) for d in load_detectors())


def render_gallery(page_url: str, lang: str = "en") -> str:
    gallery = _gallery()
    detectors = {d.id: d for d in load_detectors()}
    groups = {"guide": [], "reference": []}
    for entry in gallery["traces"]:
        groups[entry["origin"]].append(entry)
    doctor_url = _rel(page_url, "check-your-trace/")
    out = []
    titles = {
        "guide": _t(lang, "The guide's own traces", "このガイド自身のトレース"),
        "reference": _t(
            lang,
            "Public reference traces (other projects' measurements, not ours)",
            "公開されている参照トレース（ほかのプロジェクトの測定で、このガイドの測定ではありません）",
        ),
    }

    def title(f: dict) -> str:
        return detectors[f["id"]].text("title", lang) if lang == "ja" else f["title"]

    for origin in ("guide", "reference"):
        # Markdown headings, so that the page's table of contents lists every trace.
        out.append(f"## {titles[origin]} {{ #gallery-{origin} }}")
        for entry in groups[origin]:
            report = _rel(
                page_url, f"artifacts/{GALLERY_DIR}/{entry[_t(lang, 'report', 'report_ja')]}"
            )
            findings = entry["findings"]
            items = "".join(
                f'<li><span class="pg-doctor__sev pg-doctor__sev--{_e(f["severity"])}">'
                f"{_e(severity_label(f['severity'], lang))}</span> "
                f'<a href="{_e(doctor_url)}#{_e(f["id"])}">{_e(title(f))}</a>'
                + _t(lang, " ({}): ", "（{}）: ").format(_e(format_duration_ns(f["cost_ns"])))
                + f"{_e(f[_t(lang, 'seen', 'seen_ja')])}</li>"
                for f in findings
            )
            trust = "".join(
                f'<li class="pg-doctor__trust--{_e(c["level"])}">'
                f"{_e(c[_t(lang, 'text', 'text_ja')])}</li>"
                for c in sorted(entry["trust"], key=lambda c: c["level"] != "caution")
            )
            cautions = sum(c["level"] == "caution" for c in entry["trust"])
            out.append(
                f"### {markdown_text(entry[_t(lang, 'label', 'label_ja')])} {{ #{entry['slug']} }}"
            )
            out.append(
                '<section class="pg-doctor__trace" data-search-exclude>'
                f'<p class="pg-doctor__source">{_t(lang, "Source", "出典")}: '
                f"<code>{_e(entry['source'])}</code> · "
                f'<a href="{_e(report)}">{_t(lang, "full report", "レポート全体")}</a></p>'
                + (
                    '<details class="pg-doctor__trust"><summary>'
                    + _t(
                        lang,
                        f"Can I trust this trace? ({cautions} cautions)",
                        f"このトレースは信頼できるか？（注意 {cautions} 件）",
                    )
                    + f"</summary><ul>{trust}</ul></details>"
                    if trust
                    else ""
                )
                + (
                    f"<ul>{items}</ul>"
                    if findings
                    else _t(lang, "<p>No findings.</p>", "<p>所見はありません。</p>")
                )
                + "</section>"
            )
    return "\n\n".join(out)


def _short(value: object, limit: int = 60) -> str:
    """A breakdown value as the example shows it: a long kernel name cut, with an ellipsis."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_example(slug: str, lang: str = "en") -> str:
    """A shortened text report of a gallery trace: each finding with what was seen, what to
    try, what its rows add up to and three of them, after the trust gate (the why, after and
    guide lines, and the evidence times, left out)."""
    detectors = {d.id: d for d in load_detectors()}
    for entry in _gallery()["traces"]:
        if entry["slug"] == slug:
            lines = [f"== {entry['trace']}"]
            if entry["trust"]:
                lines.append(_t(lang, "Can I trust this trace?", "このトレースは信頼できるか？"))
                key = "text_ja" if lang == "ja" else "text"
                lines += [
                    f"  {'!' if lim['level'] == 'caution' else '-'} {lim[key]}"
                    for lim in sorted(entry["trust"], key=lambda c: c["level"] != "caution")
                ]
            for i, f in enumerate(entry["findings"], 1):
                det = detectors[f["id"]]
                title, seen, try_ = (
                    (det.text("title", lang), f["seen_ja"], det.text("try_", lang))
                    if lang == "ja"
                    else (f["title"], f["seen"], f["try"])
                )
                lines.append(
                    f"{i}. {severity_label(f['severity'], lang).upper()}: {title} [{f['id']}], "
                    f"{format_duration_ns(f['cost_ns'])}"
                )
                lines.append(_t(lang, "   Seen:  ", "   所見: ") + seen)
                lines.append(_t(lang, "   Try:   ", "   対策: ") + try_)
                if f["breakdown"]:  # what the rows add up to, before three of them
                    parts = [
                        f"{_short(ja_twin(b, 'value', lang))}: {b['rows']:,} × "
                        f"{format_duration_ns(b['cost_ns'])}"
                        for b in f["breakdown"][:4]
                    ]
                    lines.append(
                        f"   {breakdown_heading(det, lang)}" + _t(lang, "; ", "、").join(parts)
                    )
                for r in f["evidence"][:3]:
                    lines.append(
                        f"     {format_duration_ns(r['dur'] or 0):>9}  "
                        f"{ja_twin(r, 'location', lang)}: {ja_twin(r, 'what', lang)}"
                    )
            return "\n".join(fenced("\n".join(lines), "text"))
    raise PluginError(f"doctor_example({slug!r}): no such trace in the gallery")


def render_browser(page_url: str, config: dict) -> str:
    """The "check in your browser" widget, with the doctor's plan for the Perfetto UI."""
    origin = config["extra"].get("perfetto_origin", "https://ui.perfetto.dev")
    return widget_html(origin, _rel(page_url, ".") + "/", lang=edition_language(config))


def _published(name: str, lang: str) -> bool:
    """Whether an edition publishes a gallery file: its language's reports (the English edition
    also gallery.json)."""
    if name.endswith(".ja.html"):
        return lang == "ja"
    return lang == "en" and name.endswith((".html", ".json"))


def on_files(files: Files, config: dict) -> Files:
    folder = ARTIFACTS_DIR / GALLERY_DIR
    lang = edition_language(config)
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if _published(path.name, lang):
                files.append(
                    File.generated(
                        config, f"artifacts/{GALLERY_DIR}/{path.name}", abs_src_path=str(path)
                    )
                )
    return files


def _lesson_notes(markdown: str, page: str, lang: str = "en") -> str:
    """Under each heading a detector names, a note that links to the detector."""
    detectors = [d for d in load_detectors() if d.guide_page == page]
    if not detectors:
        return markdown
    lines = markdown.split("\n")
    out: list[str] = []
    for line in lines:
        out.append(line)
        m = re.match(r"^(#{2,4}) (.+?)(?:\s*\{\s*#([\w-]+)\s*\})?\s*$", line)
        if not m:
            continue
        anchor = m.group(3) or _slug(m.group(2))
        for det in detectors:
            if det.guide_anchor == anchor:
                link = _md_link(page, DOCTOR_PAGE, det.id)
                out += [
                    "",
                    _t(
                        lang,
                        '!!! tip "Check your own trace for this"',
                        '!!! tip "自分のトレースで確かめる"',
                    ),
                    "",
                    _t(
                        lang,
                        f"    The doctor's detector [`{det.id}`]({link}) looks for this in any "
                        "trace: `python -m generators.doctor TRACE`.",
                        f"    doctor（トレース診断）の検出器 [`{det.id}`]({link}) は、どのトレース"
                        "についてもこのパターンを探します。コマンドは "
                        "`python -m generators.doctor TRACE` です。",
                    ),
                    "",
                ]
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:  # type: ignore[no-untyped-def]
    src = page.file.src_uri
    lang = edition_language(config)
    markdown = _lesson_notes(markdown, src, lang)

    def fill(m: re.Match[str]) -> str:
        func, args = m["func"], m["args"].strip()
        if func == "doctor_detectors":
            text = render_detectors(src, lang)
        elif func == "doctor_gallery":
            text = render_gallery(page.file.url, lang)
        elif func == "doctor_browser":
            text = render_browser(page.file.url, config)
        elif func == "doctor_example":
            text = render_example(args.strip("'\""), lang)
        else:
            raise PluginError(f"{src}: unknown placeholder {m[0].strip()}")
        indent = m["indent"]
        return "\n".join(indent + line if line else "" for line in text.split("\n"))

    try:
        return PLACEHOLDER.sub(fill, markdown)
    except (PluginError, OSError, ValueError) as exc:
        raise PluginError(f"{src}: {exc}") from exc
