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
3. ``dev.perfetto.RunQueryAndShowTab``: the trust gate ("Can I trust this trace?",
   :func:`trust_query`), one row per reason to doubt the findings and the detectors it weakens;
4. ``dev.perfetto.RunQueryAndShowTab``: one row per finding with its evidence count, cost in
   milliseconds and the guide's page on it (its tab in front);
5. ``dev.perfetto.ExpandTracksByRegex``: every track group open.
"""

from __future__ import annotations

import re
from pathlib import Path

from generators.doctor.detectors import Detector, load_detectors
from generators.i18n import translated as _t
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
    """Each detector's evidence rows as its own query: ts, dur, name (the row's `what`, or
    `what_ja` in Japanese) and finding (the detector's title, the pivot).

    One track command per detector, named by the detector's short id: the UI names a pivoted
    track "<name>: finding = <title>" and cuts the middle out of a long one, so the id goes
    first, where it stays readable. A detector that found nothing has no pivot value, so no
    track.
    """
    return [
        {
            "id": d.id,
            "sql": f"SELECT ts, MAX(dur, 0) AS dur, {_t(lang, 'what', 'what_ja')} AS name, "
            f"{_sql_text(d.text('title', lang))} AS finding FROM (\n"
            f"{_without_includes(d.sql())}\n) WHERE ts IS NOT NULL",
        }
        for d in detectors
    ]


def _severity_sql(d: Detector) -> str:
    """A detector's severity in the summary: a finding about the step loop is information on a
    trace without step markers, and a per-step check's on a trace of one real step, as in the
    command line's report."""
    if d.severity == "info":
        return _sql_text(d.severity)
    if d.per_step:
        return (
            "IIF((SELECT COUNT(*) FROM guide_windows_real_loop WHERE step IS NOT NULL) = 1, "
            f"'info', {_severity_loop_sql(d)})"
        )
    return _severity_loop_sql(d)


def _severity_loop_sql(d: Detector) -> str:
    if d.scope != "loop":
        return _sql_text(d.severity)
    return (
        "IIF(EXISTS (SELECT 1 FROM guide_windows_loop WHERE step IS NOT NULL), "
        f"{_sql_text(d.severity)}, 'info')"
    )


def summary_query(detectors: list[Detector], guide_base: str, lang: str = "en") -> str:
    """One row per finding: detector, severity, title, evidence rows, time, guide page URL."""
    from generators.doctor.render import guide_url

    parts = [
        f"SELECT {_sql_text(d.id)} AS detector, {_severity_sql(d)} AS severity, "
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


def trust_query(detectors: list[Detector], lang: str = "en") -> str:
    """The trust gate ("Can I trust this trace?") as one query the Perfetto UI runs on the
    trace: one row per reason to doubt, each with the detectors it weakens. The same checks as
    the command line's gate (generators/doctor/examine.py), less what needs the file itself:
    which events the importer dropped (the UI's importer drops the same ones) and the step
    markers among them, which only the command line recovers."""

    def ids(*what: str) -> str:
        found = [d.id for d in detectors if set(what) & (set(d.relies) | set(d.needs))]
        return _sql_text(", ".join(found))

    ja = lang == "ja"

    counts = {
        "dropped": "SELECT value FROM dropped",
        "mtia": "SELECT n FROM mtia",
        "steps": "SELECT n FROM steps",
    }

    def text(en: str, ja_text: str) -> str:
        """A line as a SQL expression: its {name} placeholders are the counts above."""
        parts = re.split(r"\{(\w+)\}", ja_text if ja else en)
        return " || ".join(
            f"({counts[part]})" if i % 2 else _sql_text(part) for i, part in enumerate(parts)
        )

    loop = _sql_text(", ".join(d.id for d in detectors if d.scope == "loop"))
    rows = [
        (
            "(SELECT value FROM dropped) > 0",
            "'dropped-events'",
            text(
                "The importer dropped {dropped} events that partly "
                "overlap another on their thread; which ones (kernels? step markers?) only the "
                "command line tells (python -m generators.doctor TRACE), and it recovers dropped "
                "step markers.",
                "インポータが、同じスレッド上の別のイベントと部分的に重なるイベントを {dropped} "
                "個落としました。どれか（カーネル？ステップの目印？）"
                "はコマンドライン（python -m generators.doctor TRACE）だけが示し、落ちたステップの"
                "目印も取り戻します。",
            ),
            ids("kernels", "operators", "steps"),
        ),
        (
            "(SELECT n FROM gpu) > 0 AND NOT EXISTS (SELECT 1 FROM guide_kineto_launch_link)",
            "'no-flows'",
            text(
                "No ac2g flows: no kernel can be traced back to its launch.",
                "ac2g のフローがありません。どのカーネルも起動までたどれません。",
            ),
            ids("flows"),
        ),
        (
            "(SELECT n FROM gpu) = 0 AND (SELECT n FROM mtia) > 0",
            "'accelerator-not-read'",
            text(
                "MTIA accelerator events ({mtia}), which the checks do not "
                "read: a quiet report says nothing about the accelerator.",
                "MTIA アクセラレータのイベント（{mtia} 個）はチェックが読み"
                "ません。所見がなくてもアクセラレータについては何もわかりません。",
            ),
            ids("gpu"),
        ),
        (
            "(SELECT n FROM gpu) > 0 AND NOT EXISTS (SELECT 1 FROM guide_trace_device)",
            "'no-device'",
            text(
                "GPU model unknown: kernels but no deviceProperties.",
                "GPU のモデルは不明です（カーネルはあるが deviceProperties がない）。",
            ),
            ids("device"),
        ),
        (
            "(SELECT n FROM steps) = 0",
            "'no-steps'",
            text(
                "No ProfilerStep#N markers: the whole trace stands for the loop, one-time work "
                "included.",
                "ProfilerStep#N の目印がありません。トレース全体をループとみなすため、一度きりの"
                "仕事も含まれます。",
            ),
            loop,
        ),
        (
            "(SELECT n FROM steps) BETWEEN 1 AND 2",
            "'steps'",
            text(
                "Only {steps} profiled steps: a cold first step cannot be told from a slow one.",
                "プロファイルされたステップは {steps} 個だけです。コールド"
                "な最初のステップと遅いステップの区別がつきません。",
            ),
            # The checks that read the loop step by step (they use the cold-step table).
            _sql_text(", ".join(d.id for d in detectors if d.per_step and d.severity != "info")),
        ),
        (
            "EXISTS (SELECT 1 FROM guide_windows_cold_step)",
            "'cold-step'",
            text(
                "The first step ran cold (3× the median of the others or more): per-step checks "
                "leave it out.",
                "最初のステップはコールドでした（ほかの中央値の 3 倍以上）。ステップごとのチェック"
                "はこれを除きます。",
            ),
            "''",
        ),
        (
            "(SELECT n FROM python) > 0",
            "'with-stack'",
            text(
                "Captured with with_stack=True: CPU-side durations read longer than they run "
                "without it.",
                "with_stack=True でキャプチャされています。CPU 側の時間は、それなしより長く"
                "見えます。",
            ),
            ids("cpu-time"),
        ),
        (
            "(SELECT n FROM capture) > 0",
            "'graph-capture'",
            text(
                "CUDA/HIP graph capture: launches inside a capture are recorded, not run.",
                "CUDA/HIP グラフのキャプチャがあります。キャプチャ内の起動は記録されるだけで"
                "実行されません。",
            ),
            ids("execution"),
        ),
    ]
    selects = "\nUNION ALL\n".join(
        f"SELECT {check} AS check_id, {what} AS reason, {weakens} AS weakens WHERE {cond}"
        for cond, check, what, weakens in rows
    )
    heading = "このトレースは信頼できるか" if ja else "can_i_trust_this_trace"
    return f"""WITH
  dropped AS (
    SELECT COALESCE(SUM(value), 0) AS value FROM stats
    WHERE name = 'slice_drop_overlapping_complete_event'
  ),
  gpu AS (SELECT COUNT(*) AS n FROM guide_kineto_gpu_activity),
  mtia AS (SELECT COUNT(*) AS n FROM slice WHERE category GLOB 'mtia*'),
  steps AS (SELECT COUNT(*) AS n FROM guide_windows_real_loop WHERE step IS NOT NULL),
  python AS (SELECT COUNT(*) AS n FROM slice WHERE category = 'python_function'),
  capture AS (
    SELECT COUNT(*) AS n FROM guide_kineto_runtime_call
    WHERE name GLOB '*BeginCapture*' OR name GLOB '*EndCapture*' OR name GLOB '*GraphInstantiate*'
  ),
  lines AS (
{selects}
  )
SELECT check_id AS "{heading}", reason, weakens FROM lines"""


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
        "trust": trust_query(detectors, lang),
        "detectors": [
            {"id": d.id, "title": d.text("title", lang), "severity": d.severity} for d in detectors
        ],
    }
