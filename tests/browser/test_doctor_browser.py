""" "Check your trace in your browser" (docs/javascripts/doctor-browser.js) against a local
Perfetto UI: the findings drawn as tracks and listed in a tab are the command-line doctor's.

A harness page holds the widget exactly as the site build renders it (docs/hooks/doctor.py),
served with the script from one origin, the Perfetto UI from another; every other host is
refused, so the test also shows the trace goes nowhere else.
"""

from __future__ import annotations

import base64
import gzip
import importlib.util
import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from generators.doctor.detectors import load_detectors
from generators.doctor.examine import examine
from generators.doctor.trust import check_file, world_size
from generators.tp import open_trace
from tests import reference_traces as ref
from tests import test_doctor_fuzz as fuzz
from tests.browser.perfetto_ui import (
    STEP_TIMEOUT_MS,
    TOLERANCE_NS,
    TRACE_READY_JS,
    VISIBLE_WINDOW_JS,
)
from tests.reference_traces import H100_BERT

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

    from tests.serving import StaticServer

    from .conftest import ConsoleErrors

pytestmark = pytest.mark.browser

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "docs" / "javascripts" / "doctor-browser.js"
HOSTILE = REPO_ROOT / "tests" / "data" / "doctor-traces" / "hostile-names.json"
TITLES_JS = "els => els.map(e => e.textContent.trim())"
RESULTS = REPO_ROOT / "test-results"


def _hook():
    spec = importlib.util.spec_from_file_location("doctor_hook", REPO_ROOT / "docs/hooks/doctor.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _harness_page(
    tmp_path_factory: pytest.TempPathFactory,
    static_server: StaticServer,
    perfetto_ui: str,
    lang: str,
) -> str:
    """The widget as the edition in ``lang`` renders it, served beside the script."""
    folder = tmp_path_factory.mktemp(f"doctor-browser-{lang}") / "check-in-browser"
    folder.mkdir()
    widget = _hook().render_browser(
        "check-in-browser/",
        {"extra": {"perfetto_origin": perfetto_ui}, "theme": {"language": lang}},
    )
    (folder / "index.html").write_text(
        f"<!doctype html><html lang='{lang}'><body>{widget}"
        "<script src='doctor-browser.js'></script></body></html>",
        encoding="utf-8",
    )
    shutil.copyfile(SCRIPT, folder / SCRIPT.name)
    return static_server(folder.parent) + "/check-in-browser/"


@pytest.fixture(scope="module")
def harness(
    tmp_path_factory: pytest.TempPathFactory, static_server: StaticServer, perfetto_ui: str
) -> str:
    return _harness_page(tmp_path_factory, static_server, perfetto_ui, "en")


@pytest.fixture(scope="module")
def harness_ja(
    tmp_path_factory: pytest.TempPathFactory, static_server: StaticServer, perfetto_ui: str
) -> str:
    return _harness_page(tmp_path_factory, static_server, perfetto_ui, "ja")


def _check(context: BrowserContext, harness: str, console: ConsoleErrors, trace: Path) -> Page:
    page = console.watch(context.new_page(), "harness")
    page.goto(harness)
    with context.expect_page(timeout=STEP_TIMEOUT_MS) as popup:
        page.set_input_files(".pg-doctor-browser__file", str(trace))
    ui = console.watch(popup.value, "perfetto")
    ui.wait_for_function(TRACE_READY_JS, timeout=60_000)
    return ui


@dataclass(frozen=True)
class Found:
    """What the command-line doctor finds for one detector, in one edition's words."""

    detector: str
    title: str
    rows: int
    cost: str  # milliseconds with the unit, as the summary tab shows it


def _doctor_found(trace: Path, lang: str = "en") -> list[Found]:
    """The command line's findings as the browser page sees the trace: without reading the file
    again for the events the importer dropped (the page does not recover dropped step markers;
    its trust tab says so)."""
    with open_trace(trace) as tp:
        report = examine(tp, trace, load_detectors(), read_dropped=False)
    return [
        Found(
            f.detector.id,
            f.detector.text("title", lang),
            len(f.rows),
            f"{f.cost_ns / 1e6:.2f} ms",
        )
        for f in report.findings
    ]


def _doctor_findings(trace: Path) -> dict[str, int]:
    return {f.title: f.rows for f in _doctor_found(trace)}


def _summary_rows(ui: Page, expected: int) -> list[list[str]]:
    """The summary tab's rows (detector, severity, finding, evidence rows, cost, guide)."""
    ui.wait_for_function(
        "n => document.body.innerText.includes('Query result (' + n + ' rows)')",
        arg=expected,
        timeout=STEP_TIMEOUT_MS,
    )
    text = ui.inner_text("body")
    header = "detector\n\t\nseverity\n\t\nfinding\n\t\nevidence_rows\n\t\ncost\n\t\nguide\n"
    assert header in text, "the summary tab's columns are missing"
    table = text.rsplit(header, 1)[1]
    rows = [r.split("\n\t\n") for r in table.strip("\n").split("\n\n\n")]
    return [[cell.strip() for cell in r] for r in rows if len(r) == 6][:expected]


def _doctor_track_titles(ui: Page, expected: int) -> list[str]:
    """The titles of the doctor's tracks, once the UI has drawn ``expected`` of them."""
    deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
    titles: list[str] = []
    while time.monotonic() < deadline:
        titles = ui.eval_on_selector_all(".pf-track__title", TITLES_JS)
        if sum(": finding = " in t for t in titles) >= expected:
            break
        time.sleep(0.2)
    # The UI may join a title's last words with a no-break space.
    return [t.replace("\xa0", " ") for t in titles if ": finding = " in t]


def _pivot_counts(ui: Page) -> dict[str, int]:
    """Rows per finding in the UI's debug tracks (this UI build keeps a debug track's rows in a
    table of its own, __debug_track_N, the pivot value per row)."""
    return ui.evaluate(
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


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_findings_become_tracks_and_a_summary(
    context: BrowserContext,
    harness: str,
    harness_ja: str,
    console_errors: ConsoleErrors,
    lang: str,
) -> None:
    found = _doctor_found(H100_BERT, lang)
    assert found, "the reference trace should give the doctor something to find"
    ui = _check(context, harness if lang == "en" else harness_ja, console_errors, H100_BERT)
    doctor_tracks = _doctor_track_titles(ui, len(found))
    # Each track is named finding-first: the short id leads, where the UI's shortening of a long
    # name (it cuts the middle) leaves it readable.
    # (A title element's text may hold its name twice: the name and its tooltip's copy.)
    assert len(doctor_tracks) == len(found), doctor_tracks  # none for silent detectors
    for f in found:
        name = f"{f.detector}: finding = {f.title}"
        assert sum(t.startswith(name) for t in doctor_tracks) == 1, (name, doctor_tracks)
    # Each track holds the same evidence the command line counts.
    assert _pivot_counts(ui) == {f.title: f.rows for f in found}
    summary = _summary_rows(ui, len(found))
    assert {row[2]: int(row[3]) for row in summary} == {f.title: f.rows for f in found}
    # The cost in milliseconds with its unit, the command line's own sum.
    assert {row[0]: row[4] for row in summary} == {f.detector: f.cost for f in found}
    # Beside the summary, the trust gate's tab: the BERT trace was captured with with_stack and
    # its step marker was dropped (the page, unlike the command line, does not recover it).
    heading = "can_i_trust_this_trace" if lang == "en" else "このトレースは信頼できるか"
    tabs = ui.get_by_text(re.compile(r"^Command Query"))
    for i in range(tabs.count()):
        tabs.nth(i).click()
        ui.wait_for_timeout(200)
        if heading in ui.inner_text("body"):
            break
    trust = ui.inner_text("body")
    assert heading in trust and "with-stack" in trust and "dropped-events" in trust
    assert not console_errors.unexpected()
    RESULTS.mkdir(exist_ok=True)
    for width in (1280, 390):
        ui.set_viewport_size({"width": width, "height": 900})
        ui.wait_for_timeout(300)  # let the canvas repaint at the new width
        ui.screenshot(path=str(RESULTS / f"doctor-tracks-{lang}-{width}.png"))


def _trust_tab(ui: Page, heading: str = "can_i_trust_this_trace") -> str:
    """The page's text with the trust gate's tab in front."""
    tabs = ui.get_by_text(re.compile(r"^Command Query"))
    deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        for i in range(tabs.count()):
            tabs.nth(i).click()
            ui.wait_for_timeout(200)
            if heading in ui.inner_text("body"):
                return ui.inner_text("body")
        ui.wait_for_timeout(500)
    raise AssertionError("no trust tab")


@pytest.fixture(scope="module")
def mutated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The fuzz corpus's mutations the command line reports on with a file check's line."""
    raw = gzip.decompress(fuzz.BASE.read_bytes())
    folder = tmp_path_factory.mktemp("mutated")
    out = {}
    for case in ("ids-overflow-int64", "names-not-utf8", "pid-tid-twice", "pid-tid-missing"):
        out[case] = folder / f"{case}.json"
        out[case].write_bytes(fuzz.CASES[case].make(json.loads(raw), raw))
    return out


#: Runs the page's script with no window, as a module: its file scan alone.
SCAN_JS = """async ({source, files}) => {
  const module = {exports: {}};
  new Function("window", "module", source)(undefined, module);
  const out = {};
  for (const [name, data] of Object.entries(files)) {
    const bytes = Uint8Array.from(atob(data), c => c.charCodeAt(0));
    const checked = await module.exports.fileCheck(bytes.buffer);
    let head = bytes;
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      head = new Uint8Array(await new Response(stream).arrayBuffer());
    }
    const text = new TextDecoder().decode(head.subarray(0, 4 << 20));
    checked.worldSize = module.exports.worldSize(text);
    out[name] = checked;
  }
  return out;
}"""


def test_the_page_scans_the_file_as_the_command_line_does(
    context: BrowserContext, harness: str, mutated: dict[str, Path]
) -> None:
    """The page's count of what the importer reads silently (doctor-browser.js's fileCheck) is
    the command line's (trust.check_file), and its world size trust.world_size's, on every
    reference and synthetic trace and on the fuzz corpus's mutations."""
    paths = [*ref.all_traces(), *sorted(HOSTILE.parent.glob("*.json")), *mutated.values()]
    page = context.new_page()
    page.goto(harness)
    files = {p.name: base64.b64encode(p.read_bytes()).decode() for p in paths}
    scanned = page.evaluate(SCAN_JS, {"source": SCRIPT.read_text(encoding="utf-8"), "files": files})
    for path in paths:
        c = check_file(path)
        expected = {
            "events": c.events,
            "pids": c.pids,
            "tids": c.tids,
            "withoutPidOrTid": c.without_pid_or_tid,
            "pidOrTidTwice": c.pid_or_tid_twice,
            "overflowing": dict(c.overflowing),
            "invalidUtf8Bytes": c.invalid_utf8_bytes,
            "error": c.error,
            "worldSize": world_size(path),
        }
        assert scanned[path.name] == expected, path.name
    # The mutations hold what they were made to hold.
    found = {name: scanned[p.name] for name, p in mutated.items()}
    assert found["ids-overflow-int64"]["overflowing"]
    assert found["names-not-utf8"]["invalidUtf8Bytes"] > 0
    assert found["pid-tid-twice"]["pidOrTidTwice"] > 0
    assert found["pid-tid-missing"]["withoutPidOrTid"] > 0


def test_a_file_level_problem_is_in_the_trust_tab(
    context: BrowserContext,
    harness: str,
    console_errors: ConsoleErrors,
    mutated: dict[str, Path],
) -> None:
    """Kernels that state their pid and tid twice: the page finds them in the file's bytes, and
    its trust tab says so in the command line's words."""
    trace = mutated["pid-tid-twice"]
    twice = check_file(trace).pid_or_tid_twice
    ui = _check(context, harness, console_errors, trace)
    trust = _trust_tab(ui)
    assert "pid-tid-twice" in trust
    assert f"At least {twice} events state their pid or tid twice" in trust
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
    # "Reading notes.json…" comes first: wait for the second file's own outcome.
    page.wait_for_function(
        "() => document.querySelector('.pg-doctor-browser').dataset.state === 'error'"
        " && document.querySelector('.pg-doctor-browser__status').textContent"
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
