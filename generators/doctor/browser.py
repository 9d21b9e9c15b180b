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
from generators.doctor.trust import FileCheck
from generators.doctor.trust_lines import TEXTS, overflow_keys
from generators.i18n import translated as _t
from generators.sql_sources import SQL_DIR
from generators.tp import DROP_STAT

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
    # The trust gate needs the hardware module (is the GPU one the guide knows?); keep it even
    # if no detector includes it.
    visit("hardware")
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


#: The table the page makes from its own scan of the file's bytes (doctor-browser.js:
#: fileCheck), the same counts as :func:`generators.doctor.trust.check_file`, and the world size
#: of the file's ``distributedInfo``: one row.
FILE_CHECK_TABLE = "guide_trace_file_check"
FILE_CHECK_COLUMNS = (
    ("overflowing", "LONG"),
    ("overflow_keys", "STRING"),
    ("without_pid_or_tid", "LONG"),
    ("pid_or_tid_twice", "LONG"),
    ("invalid_utf8_bytes", "LONG"),
    ("error", "STRING"),
    ("world_size", "LONG"),
)


def file_check_table_sql(checked: FileCheck | None, ranks: int | None) -> str:
    """The file-check table as the page creates it, from the command line's own reading of the
    file (``checked``: :func:`~generators.doctor.trust.check_file`; ``ranks``:
    :func:`~generators.doctor.trust.world_size`): what the tests compare the page's scan with."""

    def num(value: int | None) -> str:
        return "NULL" if value is None else str(int(value))

    values = [
        num(sum(checked.overflowing.values())) if checked else "NULL",
        _sql_text(overflow_keys(checked.overflowing)) if checked else "NULL",
        num(checked.without_pid_or_tid) if checked else "NULL",
        num(checked.pid_or_tid_twice) if checked else "NULL",
        num(checked.invalid_utf8_bytes) if checked else "NULL",
        _sql_text(checked.error) if checked and checked.error else "NULL",
        num(ranks),
    ]
    columns = ", ".join(f"{name} {kind}" for name, kind in FILE_CHECK_COLUMNS)
    selected = ", ".join(
        f"{v} AS {name}" for v, (name, _) in zip(values, FILE_CHECK_COLUMNS, strict=True)
    )
    return f"CREATE PERFETTO TABLE {FILE_CHECK_TABLE}({columns}) AS SELECT {selected};"


def trust_query(detectors: list[Detector], lang: str = "en") -> str:
    """The trust gate ("Can I trust this trace?") as one query the Perfetto UI runs on the
    trace: one row per reason to doubt, each with the detectors it weakens or leaves without
    ground. The command line's gate (generators/doctor/examine.py) in its words
    (:mod:`generators.doctor.trust_lines`), its file checks read from the table the page fills
    from its own scan of the file (:data:`FILE_CHECK_TABLE`), less what needs the file parsed:
    which events the importer dropped (the UI's importer drops the same ones) and the step
    markers among them, which only the command line recovers."""

    def needing(*what: str) -> list[str]:
        return [d.id for d in detectors if set(what) & set(d.needs)]

    def relying(*what: str) -> list[str]:
        return [d.id for d in detectors if set(what) & (set(d.relies) | set(d.needs))]

    def ids(*groups: list[str]) -> str:
        """The detectors in any of ``groups``, in the detectors' order, as a SQL literal (listed
        as the command line lists them: 「、」 between them in Japanese)."""
        chosen = {i for g in groups for i in g}
        return _sql_text(("、" if ja else ", ").join(d.id for d in detectors if d.id in chosen))

    ja = lang == "ja"

    def text(key: str, **values: str) -> str:
        """A line as a SQL expression: its {name} placeholders are the SQL in ``values``."""
        en_text, ja_text = TEXTS[key]
        parts = re.split(r"\{(\w+)\}", ja_text if ja else en_text)
        return " || ".join(
            f"({values[part]})" if i % 2 else _sql_text(part)
            for i, part in enumerate(parts)
            if i % 2 or part
        )

    def legacy(en: str, ja_text: str, **values: str) -> str:
        """A line the page words itself (what it cannot tell as the command line does)."""
        parts = re.split(r"\{(\w+)\}", ja_text if ja else en)
        return " || ".join(
            f"({values[part]})" if i % 2 else _sql_text(part) for i, part in enumerate(parts)
        )

    every = [d.id for d in detectors]
    flows_skipped = [i for i in needing("flows") if i not in needing("gpu")] or needing("flows")
    shared_ids = text(
        "shared-correlations/ids", n="shared", is_are="IIF(shared = 1, ' is', 's are each')"
    )
    per_step = [d.id for d in detectors if d.per_step and d.severity != "info"]
    rows = [
        (
            "overflowing > 0",
            "'ids-overflow'",
            text("ids-overflow", n="overflowing", keys="overflow_keys"),
            ids(every),
        ),
        (
            "without_pid_or_tid > 0",
            "'no-pid-tid'",
            text("no-pid-tid", n="without_pid_or_tid"),
            ids(every),
        ),
        (
            "pid_or_tid_twice > 0",
            "'pid-tid-twice'",
            text("pid-tid-twice", n="pid_or_tid_twice"),
            ids(every),
        ),
        ("invalid_utf8_bytes > 0", "'not-utf8'", text("not-utf8", n="invalid_utf8_bytes"), "''"),
        (
            "error IS NOT NULL",
            "'file-check-partial'",
            text("file-check-partial", error="error"),
            "''",
        ),
        (
            "shared > 0",
            "'shared-correlations'",
            f"IIF(procs > 1, {text('shared-correlations/processes', ids=shared_ids, procs='procs')}"
            f", {text('shared-correlations/one-process', ids=shared_ids)})",
            ids(every),
        ),
        (
            "gpu = 0 AND mtia > 0",
            "'accelerator-not-read'",
            text("accelerator-not-read", mtia="mtia"),
            ids(needing("gpu"), relying("kernels", "flows")),
        ),
        ("gpu = 0 AND mtia = 0", "'no-gpu'", text("no-gpu"), ids(needing("gpu"), relying("flows"))),
        (
            "gpu > 0 AND NOT links AND shared = 0",
            "'no-flows'",
            text("no-flows"),
            ids(flows_skipped, relying("flows")),
        ),
        ("cpu_ops > 0 AND NOT shapes", "'no-shapes'", text("no-shapes"), ids(needing("shapes"))),
        (
            "dropped > 0",
            "'dropped-events'",
            legacy(
                "The importer dropped {dropped} events that partly "
                "overlap another on their thread; which ones (kernels? step markers?) only the "
                "command line tells (python -m generators.doctor TRACE), and it recovers dropped "
                "step markers.",
                "インポータが、同じスレッド上の別のイベントと部分的に重なるイベントを {dropped} "
                "個落としました。どの種類のイベントか（カーネルか、ステップの目印か）は、"
                "コマンドライン（python -m generators.doctor TRACE）だけが示します。"
                "コマンドラインは落とされたステップの目印も取り戻します。",
                dropped="dropped",
            ),
            ids(relying("kernels", "operators", "steps")),
        ),
        (
            "steps = 0",
            "'no-steps'",
            text("no-steps"),
            ids(needing("steps"), [d.id for d in detectors if d.scope == "loop"]),
        ),
        (
            "steps BETWEEN 1 AND 2",
            "'steps'",
            legacy(
                "Only {steps} profiled steps: a cold first step cannot be told from a slow one.",
                "プロファイルされたステップは {steps} 個だけです。コールド"
                "な最初のステップと遅いステップの区別がつきません。",
                steps="steps",
            ),
            # The checks that read the loop step by step (they use the cold-step table).
            ids(per_step),
        ),
        (
            "cold",
            "'cold-step'",
            legacy(
                "The first step ran cold (3× the median of the others or more): per-step checks "
                "leave it out.",
                "最初のステップはコールドでした（ほかの中央値の 3 倍以上）。ステップごとのチェック"
                "はこれを除きます。",
            ),
            "''",
        ),
        (
            "python > 0",
            "'with-stack'",
            text("with-stack", python="python"),
            ids(relying("cpu-time")),
        ),
        (
            "capture > 0",
            "'graph-capture'",
            f"{text('graph-capture', capture='capture')} || IIF(replays > 0, "
            f"{text('graph-capture/replays', replays='replays')}, "
            f"{text('graph-capture/no-replays')})",
            ids(relying("execution")),
        ),
        (
            "gpu > 0 AND COALESCE(gpu_name, '') = ''",
            "'no-device'",
            text("no-device", kernels="kernels"),
            ids(needing("device")),
        ),
        (
            "COALESCE(gpu_name, '') != '' AND known_gpu IS NULL",
            "'unknown-gpu'",
            text("unknown-gpu", gpu="gpu_name"),
            "''",
        ),
        (
            "world_size > 1",
            "'one-rank'",
            text("one-rank", ranks="world_size"),
            ids(["comm-exposed"]),
        ),
    ]
    selects = "\nUNION ALL\n".join(
        f"SELECT {check} AS check_id, {what} AS reason, {weakens} AS weakens FROM facts "
        f"WHERE {cond}"
        for cond, check, what, weakens in rows
    )
    # Importer problems other than the drops, one line each, as the command line lists them.
    importer = text("importer", value="value", name="name")
    heading = "このトレースは信頼できるか" if ja else "can_i_trust_this_trace"
    file_columns = ", ".join(name for name, _ in FILE_CHECK_COLUMNS)
    return f"""WITH
  facts AS (
    SELECT
      (SELECT COALESCE(SUM(value), 0) FROM stats WHERE name = '{DROP_STAT}') AS dropped,
      (SELECT COUNT(*) FROM guide_kineto_gpu_activity) AS gpu,
      (SELECT COUNT(*) FROM guide_kineto_gpu_activity WHERE category = 'kernel') AS kernels,
      EXISTS (SELECT 1 FROM guide_kineto_launch_link) AS links,
      (SELECT COUNT(*) FROM guide_kineto_shared_correlation) AS shared,
      (SELECT COUNT(*) FROM guide_kineto_launch_process) AS procs,
      (SELECT COUNT(*) FROM slice WHERE category GLOB 'mtia*') AS mtia,
      (SELECT COUNT(*) FROM slice WHERE category = 'cpu_op') AS cpu_ops,
      EXISTS (SELECT 1 FROM args WHERE key GLOB 'args.Input Dims*') AS shapes,
      (SELECT COUNT(*) FROM guide_windows_real_loop WHERE step IS NOT NULL) AS steps,
      EXISTS (SELECT 1 FROM guide_windows_cold_step) AS cold,
      (SELECT COUNT(*) FROM slice WHERE category = 'python_function') AS python,
      (SELECT COUNT(*) FROM guide_kineto_runtime_call
       WHERE name GLOB '*BeginCapture*' OR name GLOB '*EndCapture*'
         OR name GLOB '*GraphInstantiate*') AS capture,
      (SELECT COUNT(*) FROM guide_kineto_runtime_call WHERE name GLOB '*GraphLaunch*')
        AS replays,
      (SELECT name FROM guide_trace_device ORDER BY device LIMIT 1) AS gpu_name,
      (SELECT gpu FROM guide_hardware_device) AS known_gpu,
      f.*
    FROM (SELECT {file_columns} FROM {FILE_CHECK_TABLE}
          UNION ALL SELECT {", ".join("NULL" for _ in FILE_CHECK_COLUMNS)}
          LIMIT 1) AS f
  ),
  lines AS (
{selects}
UNION ALL
SELECT 'importer-' || name AS check_id, {importer} AS reason, '' AS weakens FROM (
  SELECT name, SUM(value) AS value FROM stats
  WHERE value > 0 AND severity IN ('error', 'data_loss') AND name != '{DROP_STAT}'
  GROUP BY name ORDER BY name
)
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
