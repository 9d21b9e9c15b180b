"""The doctor inside the Perfetto UI: the plan a web page turns into Perfetto startup commands.

The Perfetto UI runs its own trace processor in the browser, with none of this project's SQL
modules, and runs "startup commands" once a trace has loaded (Perfetto's stable automation
commands). :func:`browser_plan` gathers, from the detector files and the modules they include,
what the page needs: the module definitions in dependency order (``INCLUDE`` lines dropped, since
everything is defined once up front) and each detector's query with its default thresholds. The
page (``docs/javascripts/doctor-browser.js``) adds the one table that comes from the trace file
itself (``guide_trace_device``, from its ``deviceProperties``) and builds the commands:

1. ``dev.perfetto.RunQuery``: the module definitions;
2. ``dev.perfetto.AddDebugSliceTrackWithPivot``, once per detector: its evidence pivoted on the
   finding, so each detector that found something gets a pinned track named
   "<detector id>: finding = <title>" (and a detector that found nothing, none);
3. ``dev.perfetto.RunQueryAndShowTab``: one row per finding with its evidence count, cost in
   milliseconds and the guide's page on it;
4. ``dev.perfetto.ExpandTracksByRegex``: every track group open.
"""

from __future__ import annotations

import re
from pathlib import Path

from generators.doctor.detectors import Detector, load_detectors
from generators.sql_sources import SQL_DIR

#: Stands for the guide's root URL in the summary's links; the page puts its own in.
ROOT_TOKEN = "@@GUIDE_ROOT@@/"
_INCLUDE = re.compile(r"^INCLUDE PERFETTO MODULE guide\.([\w.]+);\s*$", re.M)


def _without_includes(sql: str) -> str:
    return _INCLUDE.sub("", sql).strip()


def module_closure(detectors: list[Detector], sql_dir: Path = SQL_DIR) -> list[str]:
    """The ``guide`` modules the detectors include, with their own includes, dependencies first."""
    order: list[str] = []

    def visit(name: str, stack: tuple[str, ...] = ()) -> None:
        if name in order:
            return
        if name in stack:
            raise ValueError(f"modules include each other: {' -> '.join((*stack, name))}")
        text = (sql_dir / f"{name.replace('.', '/')}.sql").read_text(encoding="utf-8")
        for dep in _INCLUDE.findall(text):
            visit(dep, (*stack, name))
        order.append(name)

    for det in detectors:
        for name in _INCLUDE.findall(det.body):
            visit(name)
    # The doctor's facts need the hardware module; keep it even if no detector includes it.
    return order


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def evidence_queries(detectors: list[Detector], lang: str = "en") -> list[dict[str, str]]:
    """Each detector's evidence rows as its own query: ts, dur, name (the row's `what`) and
    finding (the detector's title, the pivot).

    One track command per detector, named by the detector's short id: the UI names a pivoted
    track "<name>: finding = <title>" and cuts the middle out of a long one, so the id goes
    first, where it stays readable. A detector that found nothing has no pivot value, so no
    track.
    """
    return [
        {
            "id": d.id,
            "sql": f"SELECT ts, MAX(dur, 0) AS dur, what AS name, "
            f"{_sql_text(d.text('title', lang))} AS finding FROM (\n"
            f"{_without_includes(d.sql())}\n) WHERE ts IS NOT NULL",
        }
        for d in detectors
    ]


def summary_query(detectors: list[Detector], guide_base: str, lang: str = "en") -> str:
    """One row per finding: detector, severity, title, evidence rows, time, guide page URL."""
    from generators.doctor.render import guide_url

    parts = [
        f"SELECT {_sql_text(d.id)} AS detector, {_sql_text(d.severity)} AS severity, "
        f"{_sql_text(d.text('title', lang))} AS finding, COUNT(*) AS evidence_rows, "
        f"SUM(cost_ns) AS cost_ns, {_sql_text(guide_url(d, guide_base))} AS guide "
        f"FROM (\n{_without_includes(d.sql())}\n) HAVING COUNT(*) > 0"
        for d in detectors
    ]
    # The cost in milliseconds with its unit, as a reader compares costs; sorted by the number.
    return (
        "SELECT detector, severity, finding, evidence_rows, "
        "printf('%.2f ms', cost_ns / 1e6) AS cost, guide FROM (\n"
        + "\nUNION ALL\n".join(parts)
        + "\n) ORDER BY severity = 'info', cost_ns DESC"
    )


def widget_html(perfetto_origin: str, guide_root: str, *, lang: str = "en") -> str:
    """The "check in your browser" widget: a file picker (and drop zone) carrying the plan.

    Used by the site's page and by the command line's HTML report; the script that brings it to
    life is ``docs/javascripts/doctor-browser.js``. ``guide_root`` is the guide's root URL, or
    a path relative to the page, for the summary's links. ``lang="ja"``: the widget's text and
    the findings' titles in Japanese.
    """
    import html
    import json

    # JSON inside <script>: "</" would end the element, so it is escaped (all our own text).
    plan = browser_plan(ROOT_TOKEN, lang=lang)
    data = json.dumps(plan, ensure_ascii=False).replace("</", "<\\/")
    prompt = (
        "<strong>トレースを選んでください</strong>（<code>.json</code> または "
        "<code>.json.gz</code>）。ここにドロップすることもできます "
        if lang == "ja"
        else "<strong>Choose a trace</strong> (<code>.json</code> or <code>.json.gz</code>), "
        "or drop it here "
    )
    return (
        f'<div class="pg-doctor-browser" data-perfetto-origin="{html.escape(perfetto_origin)}" '
        f'data-guide-root="{html.escape(guide_root)}">\n'
        f'<script type="application/json" class="pg-doctor-browser__plan">{data}</script>\n'
        '<label class="pg-doctor-browser__drop">'
        + prompt
        + '<input type="file" class="pg-doctor-browser__file" accept=".json,.gz"></label>\n'
        '<p class="pg-doctor-browser__status" role="status" hidden></p>\n'
        "</div>"
    )


def browser_plan(
    guide_base: str, detectors: list[Detector] | None = None, *, lang: str = "en"
) -> dict[str, object]:
    """What the browser page needs to build its Perfetto startup commands (JSON-ready); the
    findings' titles in ``lang``."""
    detectors = detectors if detectors is not None else load_detectors()
    modules = module_closure(detectors)
    definitions = "\n\n".join(
        _without_includes((SQL_DIR / f"{m.replace('.', '/')}.sql").read_text(encoding="utf-8"))
        for m in modules
    )
    return {
        "modules": modules,
        "definitions": definitions,
        "evidence": evidence_queries(detectors, lang),
        "summary": summary_query(detectors, guide_base, lang),
        "detectors": [
            {"id": d.id, "title": d.text("title", lang), "severity": d.severity} for d in detectors
        ],
    }
