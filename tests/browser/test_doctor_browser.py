""" "Check your trace in your browser" (docs/javascripts/doctor-browser.js) against a local
Perfetto UI: the findings drawn as tracks and listed in a tab are the command-line doctor's.

A harness page holds the widget exactly as the site build renders it (docs/hooks/doctor.py),
served with the script from one origin, the Perfetto UI from another; every other host is
refused, so the test also shows the trace goes nowhere else.
"""

from __future__ import annotations

import importlib.util
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from generators.doctor.detectors import load_detectors
from generators.doctor.examine import examine
from generators.tp import open_trace
from tests.browser.perfetto_ui import (
    NON_LOCAL,
    STEP_TIMEOUT_MS,
    TOLERANCE_NS,
    TRACE_READY_JS,
    VISIBLE_WINDOW_JS,
)
from tests.reference_traces import H100_BERT

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, Route

    from tests.serving import StaticServer

    from .conftest import ConsoleErrors

pytestmark = pytest.mark.browser

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "docs" / "javascripts" / "doctor-browser.js"
HOSTILE = REPO_ROOT / "tests" / "data" / "doctor-traces" / "hostile-names.json"
TITLES_JS = "els => els.map(e => e.textContent.trim())"


def _hook():
    spec = importlib.util.spec_from_file_location("doctor_hook", REPO_ROOT / "docs/hooks/doctor.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def harness(
    tmp_path_factory: pytest.TempPathFactory, static_server: StaticServer, perfetto_ui: str
):
    folder = tmp_path_factory.mktemp("doctor-browser") / "check-in-browser"
    folder.mkdir()
    widget = _hook().render_browser(
        "check-in-browser/", {"extra": {"perfetto_origin": perfetto_ui}}
    )
    (folder / "index.html").write_text(
        f"<!doctype html><html><body>{widget}"
        "<script src='doctor-browser.js'></script></body></html>",
        encoding="utf-8",
    )
    shutil.copyfile(SCRIPT, folder / SCRIPT.name)
    return static_server(folder.parent) + "/check-in-browser/"


@pytest.fixture
def context(browser_context: BrowserContext) -> BrowserContext:
    def refuse(route: Route) -> None:
        route.abort("blockedbyclient")

    browser_context.route(NON_LOCAL, refuse)
    return browser_context


def _check(context: BrowserContext, harness: str, console: ConsoleErrors, trace: Path) -> Page:
    page = console.watch(context.new_page(), "harness")
    page.goto(harness)
    with context.expect_page(timeout=STEP_TIMEOUT_MS) as popup:
        page.set_input_files(".pg-doctor-browser__file", str(trace))
    ui = console.watch(popup.value, "perfetto")
    ui.wait_for_function(TRACE_READY_JS, timeout=60_000)
    return ui


def _doctor_findings(trace: Path) -> dict[str, int]:
    with open_trace(trace) as tp:
        report = examine(tp, trace, load_detectors())
    return {f.detector.title: len(f.rows) for f in report.findings}


def _summary_rows(ui: Page, expected: int) -> list[list[str]]:
    """The summary tab's rows (detector, severity, finding, evidence rows, ...)."""
    ui.wait_for_function(
        "n => document.body.innerText.includes('Query result (' + n + ' rows)')",
        arg=expected,
        timeout=STEP_TIMEOUT_MS,
    )
    text = ui.inner_text("body")
    header = "detector\n\t\nseverity\n\t\nfinding\n\t\nevidence_rows\n\t\ncost_ns\n\t\nguide\n"
    assert header in text, "the summary tab's columns are missing"
    table = text.rsplit(header, 1)[1]
    rows = [r.split("\n\t\n") for r in table.strip("\n").split("\n\n\n")]
    return [[cell.strip() for cell in r] for r in rows if len(r) == 6][:expected]


def test_findings_become_tracks_and_a_summary(
    context: BrowserContext, harness: str, console_errors: ConsoleErrors
) -> None:
    expected = _doctor_findings(H100_BERT)
    assert expected, "the reference trace should give the doctor something to find"
    ui = _check(context, harness, console_errors, H100_BERT)
    deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
    titles: list[str] = []
    while time.monotonic() < deadline:
        titles = ui.eval_on_selector_all(".pf-track__title", TITLES_JS)
        if sum("The doctor" in t for t in titles) >= len(expected):
            break
        time.sleep(0.2)
    doctor_tracks = [t for t in titles if "The doctor" in t]
    for title in expected:
        assert any(title in t for t in doctor_tracks), (title, doctor_tracks)
    assert len(doctor_tracks) == len(expected), doctor_tracks  # none for silent detectors
    # Each track holds the same evidence the command line counts. The UI keeps a debug track's
    # rows in a table of its own (this UI build: __debug_track_N, the pivot value per row).
    counts = ui.evaluate(
        """async () => {
          const engine = window.app.trace.engine;
          const tables = await engine.query(
            "SELECT name FROM sqlite_master WHERE name GLOB '__debug_track_*'");
          const out = {};
          for (const t = tables.iter({}); t.valid(); t.next()) {
            const r = await engine.query(
              "SELECT pivot, COUNT(*) AS n FROM " + t.get('name') + " GROUP BY pivot");
            for (const it = r.iter({}); it.valid(); it.next()) {
              out[it.get('pivot')] = Number(it.get('n'));
            }
          }
          return out;
        }"""
    )
    assert counts == expected
    summary = _summary_rows(ui, len(expected))
    assert {row[2]: int(row[3]) for row in summary} == expected
    assert not console_errors.unexpected()


def test_names_from_a_trace_stay_text(
    context: BrowserContext, harness: str, console_errors: ConsoleErrors
) -> None:
    dialogs: list[str] = []
    context.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    ui = _check(context, harness, console_errors, HOSTILE)
    expected = _doctor_findings(HOSTILE)
    rows = _summary_rows(ui, len(expected))
    assert {row[2] for row in rows} == set(expected)
    # The evidence keeps the hostile kernel name as data...
    names = ui.evaluate(
        """async () => {
          const r = await window.app.trace.engine.query(
            "SELECT name FROM slice WHERE name GLOB '*alert*'");
          const out = [];
          for (const it = r.iter({}); it.valid(); it.next()) out.push(it.get('name'));
          return out;
        }"""
    )
    assert any("<script>alert('kernel')</script>" in n for n in names), names
    # ...and nothing in either page ran it or turned it into markup.
    assert dialogs == []
    for page in context.pages:
        assert page.locator("script", has_text="alert(").count() == 0


def test_a_corrupt_file_gets_a_clear_message(
    context: BrowserContext, harness: str, console_errors: ConsoleErrors, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00not gzip at all")
    page = console_errors.watch(context.new_page(), "harness")
    page.goto(harness)
    page.set_input_files(".pg-doctor-browser__file", str(broken))
    status = page.locator(".pg-doctor-browser__status")
    status.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
    page.wait_for_function(
        "() => document.querySelector('.pg-doctor-browser').dataset.state === 'error'",
        timeout=STEP_TIMEOUT_MS,
    )
    assert "Could not check broken.json.gz: the file is not valid gzip" in status.inner_text()
    not_json = tmp_path / "notes.json"
    not_json.write_text("hello, not a trace")
    page.set_input_files(".pg-doctor-browser__file", str(not_json))
    page.wait_for_function(
        "() => document.querySelector('.pg-doctor-browser__status').textContent"
        ".includes('notes.json')",
        timeout=STEP_TIMEOUT_MS,
    )
    assert "it is not a JSON trace" in status.inner_text()


def test_report_evidence_button_opens_perfetto_on_that_moment(
    context: BrowserContext,
    static_server: StaticServer,
    perfetto_ui: str,
    console_errors: ConsoleErrors,
    tmp_path: Path,
) -> None:
    """The command line's HTML report: choose the trace once, then an evidence row's button
    opens the Perfetto UI with the trace, zoomed on that row's window."""
    from generators.doctor.render import render_html

    with open_trace(H100_BERT) as tp:
        report = examine(tp, H100_BERT, load_detectors())
    (tmp_path / "report.html").write_text(
        render_html([report], "http://127.0.0.1:1/", perfetto_ui), encoding="utf-8"
    )
    page = console_errors.watch(context.new_page(), "report")
    page.goto(static_server(tmp_path) + "/report.html")
    page.set_input_files("input[type=file][data-trace='t1']", str(H100_BERT))
    button = page.locator("button.open").first
    start, end = (
        int(button.get_attribute("data-vis-start")),
        int(button.get_attribute("data-vis-end")),
    )
    with context.expect_page(timeout=STEP_TIMEOUT_MS) as popup:
        button.click()
    ui = console_errors.watch(popup.value, "perfetto")
    ui.wait_for_function(TRACE_READY_JS, timeout=60_000)
    ui.wait_for_function(
        "() => window.app.trace.timeline.visibleWindow.duration < 1e9", timeout=STEP_TIMEOUT_MS
    )
    span = ui.evaluate(VISIBLE_WINDOW_JS)
    shown_start = int(span["integral"]) + round(span["fractional"])
    assert abs(shown_start - start) <= TOLERANCE_NS
    assert abs(shown_start + round(span["duration"]) - end) <= TOLERANCE_NS
    page.wait_for_function(
        "() => document.querySelector('.picker .status').textContent.startsWith('Opened')",
        timeout=STEP_TIMEOUT_MS,
    )
