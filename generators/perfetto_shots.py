"""Screenshots of the Perfetto UI on the guide's own traces, with numbered callouts.

    python -m generators.perfetto_shots               # every screenshot
    python -m generators.perfetto_shots --only query  # some of them (comma-separated names)
    python -m generators.perfetto_shots --check       # exit 1 if any is stale, naming it

The page "Reading a trace in Perfetto" teaches the UI with these pictures. Each one is the pinned
Perfetto UI build (``generators/perfetto_ui.py``) showing a committed trace, driven by headless
Chromium, and is an artifact like a figure: ``artifacts/perfetto-ui/<name>.png`` beside
``shots.json``, which records for every screenshot the UI version, the trace's SHA-256, the hash
of this file (where every shot is defined) and the callouts. A browser's pixels are not
reproducible, so freshness is decided by those hashes, never by comparing images; a test fails
when one of them changes and the screenshots were not made again.

The callouts are not drawn into the PNG: each is a number placed at a point this script measured
in the UI (a track's title, a slice's place on the timeline, a panel), and the site draws the
number and its arrow over the picture (``docs/hooks/artifacts.py``), so that they stay sharp and
readable at any width, and the page's prose says what each number shows.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import re
import shutil
import struct
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generators.perfetto_ui import static_servers, ui_version, web_dist
from generators.store import ARTIFACTS_ROOT, atomic_write_text, dump_json, sha256_file

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

log = logging.getLogger("generators.perfetto_shots")

SHOTS_DIR = ARTIFACTS_ROOT / "perfetto-ui"
MANIFEST = SHOTS_DIR / "shots.json"
SOURCE = Path(__file__)
#: The browser the tests use (Debian's chromium); Playwright drives it.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
TRACE_READY_JS = "() => !!(window.app && window.app.trace && !window.app.isLoadingTrace)"
LOAD_TIMEOUT_MS = 60_000
LOCATE_TIMEOUT_MS = 8_000
#: Pixels between a callout's number and the edge of the picture.
MARGIN = 14
#: Height of one slice row in the v52 UI's tracks, and the middle of the first row below the
#: track's title (measured on its slice tracks).
ROW_PX, FIRST_ROW_MID_PX = 18, 10


class ShotError(RuntimeError):
    """A screenshot could not be made (a missing trace, a target not found in the UI)."""


# -- what a callout points at --------------------------------------------------------------------
@dataclass(frozen=True)
class TrackTitle:
    """The title of the track whose title matches ``pattern`` (a regular expression); ``nth``:
    which of those, counted from the top (a pinned track's copy comes first)."""

    pattern: str
    nth: int = 0

    def locate(self, page: Page) -> tuple[float, float]:
        box = _title_box(page, self.pattern, self.nth)
        return box["x"] + min(box["width"], 120) / 2, box["y"] + box["height"] / 2


@dataclass(frozen=True)
class SliceAt:
    """A slice on the timeline: ``sql`` gives its ``ts``, ``dur`` and ``depth``; ``track`` is a
    pattern for its track's title. ``where`` is the point along it: 0 its start, 1 its end."""

    sql: str
    track: str
    where: float = 0.5

    def locate(self, page: Page) -> tuple[float, float]:
        row = _one_row(page, self.sql)
        x = _x_of(page, int(row["ts"]) + self.where * int(row["dur"]))
        title = _title_box(page, self.track)
        return x, title["y"] + FIRST_ROW_MID_PX + ROW_PX * int(row["depth"])


@dataclass(frozen=True)
class Element:
    """The element matching a CSS ``selector`` (the first whose text matches ``text``, if given);
    the point at ``(fx, fy)`` of its box, as fractions of its width and height."""

    selector: str
    text: str | None = None
    fx: float = 0.5
    fy: float = 0.5
    at_x: float | None = None  # a fixed x instead: past a row's value, so nothing is covered

    def locate(self, page: Page) -> tuple[float, float]:
        box = _wait_for(
            page,
            """([selector, text]) => {
              // The innermost visible element whose text matches: the label, not its panel.
              const pattern = text === null ? null : new RegExp(text);
              let best = null;
              for (const e of document.querySelectorAll(selector)) {
                if (pattern && !pattern.test(e.textContent.trim())) continue;
                const r = e.getBoundingClientRect();
                if (!r.width || !r.height || r.bottom < 0 || r.top > innerHeight) continue;
                if (pattern === null) return {x: r.x, y: r.y, width: r.width, height: r.height};
                if (best === null || r.width * r.height < best.width * best.height)
                  best = {x: r.x, y: r.y, width: r.width, height: r.height};
              }
              return best;
            }""",
            [self.selector, self.text],
        )
        if box is None:
            raise ShotError(f"no visible {self.selector!r} matching {self.text!r} in the UI")
        x = box["x"] + self.fx * box["width"] if self.at_x is None else self.at_x
        return x, box["y"] + self.fy * box["height"]


Target = TrackTitle | SliceAt | Element


@dataclass(frozen=True)
class Callout:
    """Number ``number`` is drawn at ``(dx, dy)`` pixels from the point ``target`` locates,
    with an arrow to that point."""

    number: int
    target: Target
    dx: float = -40
    dy: float = -34


@dataclass(frozen=True)
class Shot:
    """One screenshot: a trace, a window onto it, what to do in the UI, and the callouts."""

    name: str
    trace: str  # relative to artifacts/
    viewport: tuple[int, int] = (1280, 720)
    window_sql: str | None = None  # one row: start, end (trace nanoseconds) to zoom on
    sidebar: bool = False
    commands: tuple[dict[str, Any], ...] = ()
    prepare: Callable[[Page], None] | None = None
    route: str = "viewer"  # "query": the query page, once the trace is loaded
    callouts: tuple[Callout, ...] = field(default_factory=tuple)

    @property
    def trace_path(self) -> Path:
        return ARTIFACTS_ROOT / self.trace


# -- helpers that read the UI ---------------------------------------------------------------------
def _title_box(page: Page, pattern: str, nth: int = 0) -> dict[str, float]:
    box = _wait_for(
        page,
        """([pattern, nth]) => {
          const re = new RegExp(pattern);
          let seen = 0;
          for (const e of document.querySelectorAll('.pf-track__title')) {
            // The title's text is followed by a copy in its pop-up; test the first line only.
            const title = e.firstChild ? e.firstChild.textContent.trim() : e.textContent.trim();
            if (!re.test(title)) continue;
            const r = e.getBoundingClientRect();
            if (!r.width || !r.height || seen++ < nth) continue;
            return {x: r.x, y: r.y, width: r.width, height: r.height};
          }
          return null;
        }""",
        [pattern, nth],
    )
    if box is None:
        raise ShotError(f"no track titled like {pattern!r} is visible in the UI")
    return box


def _wait_for(page: Page, js: str, arg: Any) -> Any:
    """The first non-null value of ``js(arg)`` within seconds (the UI draws lazily), or None."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return page.wait_for_function(js, arg=arg, timeout=LOCATE_TIMEOUT_MS).json_value()
    except PlaywrightTimeout:
        return None


def _query(page: Page, sql: str) -> list[dict[str, Any]]:
    """Rows of ``sql`` run by the UI's own trace processor (integers as strings)."""
    return page.evaluate(
        """async sql => {
          const result = await window.app.trace.engine.query(sql);
          const rows = [];
          const columns = result.columns();
          for (const it = result.iter({}); it.valid(); it.next()) {
            const row = {};
            for (const c of columns) {
              const v = it.get(c);
              row[c] = typeof v === 'bigint' ? v.toString() : v;
            }
            rows.push(row);
          }
          return rows;
        }""",
        sql,
    )


def _one_row(page: Page, sql: str) -> dict[str, Any]:
    rows = _query(page, sql)
    if len(rows) != 1:
        raise ShotError(f"expected one row, got {len(rows)}: {sql}")
    return rows[0]


def _x_of(page: Page, ts: float) -> float:
    """The x of trace time ``ts`` (ns) on the timeline's tracks."""
    geometry = page.evaluate(
        """() => {
          const canvas = document.querySelector('.pf-track__canvas').getBoundingClientRect();
          const w = window.app.trace.timeline.visibleWindow;
          return {left: canvas.x, width: canvas.width,
                  start: w.start.integral.toString(), fraction: w.start.fractional,
                  duration: w.duration};
        }"""
    )
    start = int(geometry["start"]) + float(geometry["fraction"])
    return geometry["left"] + (ts - start) / float(geometry["duration"]) * geometry["width"]


# -- the shots ------------------------------------------------------------------------------------
LARGE = "cuda/matmul_add/large_cold/trace.json.gz"
#: Where the details panel's rows end, past their values (x in the 1280 px window).
ROW_END = 300
VARIANCE = "cuda/matmul_add/variance/trace.json.gz"
CPU_THREAD = r"^thread "
GPU_STREAM = r"^stream "
FIRST_STEP_SQL = (
    "SELECT ts, dur, depth FROM slice WHERE name GLOB 'ProfilerStep#*' ORDER BY ts LIMIT 1"
)
# The first GEMM kernel, on the GPU's stream, and the launch call that started it.
FIRST_KERNEL_SQL = (
    "SELECT id, ts, dur, depth FROM slice WHERE category = 'kernel' ORDER BY ts LIMIT 1"
)
FIRST_LAUNCH_SQL = (
    "SELECT s.ts, s.dur, s.depth FROM flow f JOIN slice s ON s.id = f.slice_out "
    f"WHERE f.slice_in = ({FIRST_KERNEL_SQL.replace('id, ts, dur, depth', 'id')})"
)
FIRST_MM_SQL = "SELECT ts, dur, depth FROM slice WHERE name = 'aten::mm' ORDER BY ts LIMIT 1"
# One step, from its start to the end of the last kernel it launched, with a margin.
STEP_WINDOW_SQL = f"""
SELECT step.ts - step.dur / 10 AS start,
       MAX(step.ts + step.dur, MAX(k.ts + k.dur)) + step.dur / 10 AS end
FROM ({FIRST_STEP_SQL}) step
JOIN slice k ON k.category = 'kernel' AND k.ts BETWEEN step.ts AND step.ts + step.dur
"""
EXPAND_ALL = ({"id": "dev.perfetto.ExpandTracksByRegex", "args": [".*"]},)
#: The query the page runs in the UI: every aten::mm of the trace, slowest first.
SLOWEST_MM_SQL = """SELECT id, ts, dur, name
FROM slice
WHERE name = 'aten::mm'
ORDER BY dur DESC
LIMIT 5"""


def _select_first_kernel(page: Page) -> None:
    kernel = _one_row(page, FIRST_KERNEL_SQL)
    page.evaluate(
        "id => window.app.trace.selection.selectSqlEvent('slice', id, "
        "{switchToCurrentSelectionTab: true})",
        int(kernel["id"]),
    )


def _select_kernel_and_show_args(page: Page) -> None:
    _select_first_kernel(page)
    # The details panel over the whole page (Perfetto's FULLSCREEN drawer state).
    page.evaluate("() => window.app.trace.tabs.setTabPanelVisibility(1)")
    page.wait_for_selector("text=Arguments", timeout=10_000)
    page.get_by_text("Arguments", exact=True).first.scroll_into_view_if_needed()


def _select_all_steps_on_cpu(page: Page) -> None:
    span = _one_row(
        page,
        "SELECT MIN(ts) AS start, MAX(ts + dur) AS end FROM slice WHERE name GLOB 'ProfilerStep#*'",
    )
    page.evaluate(
        """([start, end]) => {
          const tracks = window.app.trace.workspace.flatTracks
            .filter(t => /^thread /.test(t.name) && t.uri.startsWith('/slice_'))
            .map(t => t.uri);
          window.app.trace.selection.selectArea({start: BigInt(start), end: BigInt(end),
                                                 trackUris: tracks});
        }""",
        [span["start"], span["end"]],
    )


def _pin_gpu_stream(page: Page) -> None:
    page.evaluate(
        """() => {
          const track = window.app.trace.workspace.flatTracks
            .find(t => /^stream /.test(t.name) && t.uri.startsWith('/slice_'));
          track.pin();
          window.app.raf.scheduleFullRedraw();
        }"""
    )


def _run_slowest_mm_query(page: Page) -> None:
    page.click(".cm-content")
    page.keyboard.insert_text(SLOWEST_MM_SQL)
    page.click(".pf-query-page__toolbar .pf-button--filled")
    page.wait_for_selector("text=aten::mm", timeout=10_000)


SHOTS: tuple[Shot, ...] = (
    Shot(
        name="overview",
        trace=LARGE,
        sidebar=True,
        commands=EXPAND_ALL,
        callouts=(
            Callout(1, Element(".pf-sidebar-button"), dx=-50, dy=30),
            Callout(2, Element(".pf-overview-timeline", fx=0.4, fy=0.6), dx=-60, dy=40),
            Callout(3, TrackTitle(CPU_THREAD), dx=60, dy=40),
            Callout(4, TrackTitle(GPU_STREAM), dx=60, dy=30),
            Callout(5, Element(".pf-omnibox", fx=0.9), dx=60, dy=20),
        ),
    ),
    Shot(
        name="one-step",
        trace=LARGE,
        window_sql=STEP_WINDOW_SQL,
        commands=EXPAND_ALL,
        callouts=(
            Callout(1, SliceAt(FIRST_STEP_SQL, CPU_THREAD, where=0.1), dx=-30, dy=-40),
            Callout(2, SliceAt(FIRST_MM_SQL, CPU_THREAD, where=0.2), dx=-50, dy=20),
            Callout(3, SliceAt(FIRST_LAUNCH_SQL, CPU_THREAD), dx=30, dy=40),
            Callout(4, SliceAt(FIRST_KERNEL_SQL, GPU_STREAM, where=0.6), dx=40, dy=44),
        ),
    ),
    Shot(
        name="kernel-selected",
        trace=LARGE,
        viewport=(1280, 800),
        window_sql=STEP_WINDOW_SQL,
        commands=EXPAND_ALL,
        prepare=_select_first_kernel,
        callouts=(
            Callout(1, SliceAt(FIRST_KERNEL_SQL, GPU_STREAM, where=0.7), dx=40, dy=40),
            Callout(2, SliceAt(FIRST_LAUNCH_SQL, CPU_THREAD, where=1.0), dx=-70, dy=-46),
            Callout(3, Element(".pf-tree-left, td", text=r"^Duration", at_x=ROW_END), dx=70, dy=0),
            Callout(4, Element("*", text=r"^Preceding Flows$", fx=0.3), dx=200, dy=0),
        ),
    ),
    Shot(
        name="kernel-args",
        trace=LARGE,
        viewport=(1280, 900),
        window_sql=STEP_WINDOW_SQL,
        commands=EXPAND_ALL,
        prepare=_select_kernel_and_show_args,
        callouts=(
            # Each number sits right of its row, its arrow ending past the row's value.
            Callout(1, Element(".pf-tree-left, td", text=r"^Duration", at_x=ROW_END), dx=70, dy=0),
            Callout(2, Element("a", text=r"^cuLaunchKernel", at_x=560), dx=50, dy=0),
            Callout(3, Element(".pf-tree-left", text=r"^correlation", at_x=ROW_END), dx=70, dy=0),
            Callout(
                4,
                Element(".pf-tree-left", text=r"^registers per thread", at_x=ROW_END),
                dx=70,
                dy=0,
            ),
            Callout(5, Element(".pf-tree-left", text=r"^grid$", at_x=ROW_END), dx=70, dy=0),
            Callout(
                6,
                Element(".pf-tree-left", text=r"^est. achieved occupancy", at_x=ROW_END),
                dx=70,
                dy=0,
            ),
        ),
    ),
    Shot(
        name="area-selection",
        trace=VARIANCE,
        viewport=(1280, 800),
        commands=EXPAND_ALL,
        prepare=_select_all_steps_on_cpu,
        callouts=(
            Callout(1, TrackTitle(CPU_THREAD), dx=80, dy=-30),
            # In the empty part of each column's title cell, after the title.
            Callout(2, Element("*", text=r"^Wall duration$", at_x=440), dx=40, dy=0),
            Callout(3, Element("*", text=r"^Avg Wall duration$", at_x=960), dx=40, dy=0),
            Callout(4, Element("*", text=r"^Occurrences$", at_x=1180), dx=40, dy=0),
        ),
    ),
    Shot(
        name="pinned",
        trace=LARGE,
        commands=EXPAND_ALL,
        prepare=_pin_gpu_stream,
        callouts=(
            Callout(1, TrackTitle(GPU_STREAM), dx=120, dy=24),
            Callout(2, Element("i.pf-filled", text=r"^push_pin$"), dx=60, dy=40),
            Callout(3, TrackTitle(GPU_STREAM, nth=1), dx=120, dy=24),
        ),
    ),
    Shot(
        name="query",
        trace=LARGE,
        sidebar=True,
        route="query",
        prepare=_run_slowest_mm_query,
        callouts=(
            Callout(
                1, Element(".pf-sidebar a, .pf-sidebar li", text=r"Query \(SQL\)"), dx=60, dy=30
            ),
            Callout(2, Element(".cm-content", fx=0.3, fy=0.3), dx=40, dy=40),
            Callout(3, Element(".pf-query-page__toolbar .pf-button--filled", fx=1.0), dx=290, dy=0),
            Callout(4, Element("th, div, span", text=r"^dur$", fx=1.0), dx=60, dy=0),
        ),
    ),
)


# -- making them ---------------------------------------------------------------------------------
def source_sha256() -> str:
    return sha256_file(SOURCE)


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header."""
    with path.open("rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ShotError(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def _ui_url(ui: str, trace_url: str, shot: Shot) -> str:
    args = {"url": trace_url}
    if shot.commands:
        args["startupCommands"] = json.dumps(list(shot.commands))
    return f"{ui}/#!/viewer?{urllib.parse.urlencode(args, quote_via=urllib.parse.quote)}"


def _zoom(page: Page, sql: str) -> None:
    """Zoom the timeline onto the window that ``sql`` (one row: start, end) gives."""
    window = _one_row(page, sql)
    page.evaluate(
        """([start, end]) => window.app.trace.scrollTo(
             {time: {start: BigInt(start), end: BigInt(end), viewPercentage: 1}})""",
        [window["start"], window["end"]],
    )


def _clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def take(shot: Shot, out_dir: Path, page: Page, ui: str, trace_url: str) -> dict[str, Any]:
    """Make one screenshot into ``out_dir``; returns its manifest entry."""
    page.set_viewport_size({"width": shot.viewport[0], "height": shot.viewport[1]})
    page.goto("about:blank")
    page.goto(_ui_url(ui, trace_url, shot))
    page.wait_for_function(TRACE_READY_JS, timeout=LOAD_TIMEOUT_MS)
    if page.evaluate("() => window.app.sidebar.visible") != shot.sidebar:
        page.evaluate("() => window.app.sidebar.toggleVisibility()")
    if shot.route != "viewer":
        page.evaluate(f"() => window.app.navigate('#!/{shot.route}')")
    page.wait_for_timeout(800)  # the startup commands and the first frames
    if shot.window_sql:
        _zoom(page, shot.window_sql)
    if shot.prepare:
        shot.prepare(page)
    page.wait_for_timeout(800)  # the selection's panel, the query's result
    width, height = shot.viewport
    callouts = []
    for callout in shot.callouts:
        x, y = callout.target.locate(page)
        if not (0 <= x <= width and 0 <= y <= height):
            raise ShotError(f"{shot.name}: callout {callout.number} points outside the picture")
        callouts.append(
            {
                "number": callout.number,
                "x": round(x, 1),
                "y": round(y, 1),
                "label_x": round(_clamp(x + callout.dx, MARGIN, width - MARGIN), 1),
                "label_y": round(_clamp(y + callout.dy, MARGIN, height - MARGIN), 1),
            }
        )
    png = out_dir / f"{shot.name}.png"
    page.screenshot(path=str(png))
    if png_size(png) != (width, height):
        raise ShotError(f"{shot.name}: the screenshot is {png_size(png)}, not {shot.viewport}")
    return {
        "file": png.name,
        "trace": shot.trace,
        "trace_sha256": sha256_file(shot.trace_path),
        "width": width,
        "height": height,
        "callouts": callouts,
    }


def make(
    names: list[str] | None = None, out_dir: Path = SHOTS_DIR, browser: Browser | None = None
) -> dict[str, Any]:
    """Make the screenshots named (all by default) and update the manifest in ``out_dir``.

    ``browser``: a running Chromium to use (a test's); by default one is started and closed."""
    chosen = [s for s in SHOTS if names is None or s.name in names]
    unknown = sorted(set(names or ()) - {s.name for s in SHOTS})
    if unknown:
        raise ShotError(
            f"unknown screenshot {', '.join(unknown)} (known: {', '.join(s.name for s in SHOTS)})"
        )
    for shot in chosen:
        if not shot.trace_path.is_file():
            raise ShotError(f"{shot.name}: trace not found: artifacts/{shot.trace}")
    manifest_path = out_dir / MANIFEST.name
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"shots": {}}
    version = ui_version()
    out_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        staging = Path(
            stack.enter_context(tempfile.TemporaryDirectory(dir=out_dir.parent, prefix=".shots-"))
        )
        servers = stack.enter_context(static_servers())
        ui = servers.serve(web_dist())
        traces = servers.serve(ARTIFACTS_ROOT)
        if browser is None:
            from playwright.sync_api import sync_playwright

            playwright = stack.enter_context(sync_playwright())
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
            stack.callback(browser.close)
        context = browser.new_context(device_scale_factor=1)
        stack.callback(context.close)
        page = context.new_page()
        entries = {}
        for i, shot in enumerate(chosen, 1):
            started = time.monotonic()
            entries[shot.name] = take(shot, staging, page, ui, f"{traces}/{shot.trace}")
            log.info("[%d/%d] %s (%.1f s)", i, len(chosen), shot.name, time.monotonic() - started)
        # Only once every shot is made do the new files replace the old ones.
        for name, entry in entries.items():
            shutil.move(staging / entry["file"], out_dir / entry["file"])
            manifest["shots"][name] = entry
    manifest.update(
        {
            "generated_by": "python -m generators.perfetto_shots",
            "perfetto_ui": version,
            "source_sha256": source_sha256(),
        }
    )
    manifest["shots"] = {
        s.name: manifest["shots"][s.name] for s in SHOTS if s.name in manifest["shots"]
    }
    atomic_write_text(manifest_path, dump_json(manifest))
    return manifest


def stale(manifest_path: Path = MANIFEST) -> list[str]:
    """Why each screenshot is out of date (empty: all current)."""
    if not manifest_path.exists():
        return [f"{manifest_path} is missing: run `python -m generators.perfetto_shots`"]
    manifest = json.loads(manifest_path.read_text())
    problems = []
    if manifest.get("source_sha256") != source_sha256():
        problems.append("generators/perfetto_shots.py changed since the screenshots were made")
    try:
        version = ui_version()
    except RuntimeError as error:
        problems.append(str(error))
    else:
        if manifest.get("perfetto_ui") != version:
            problems.append(
                f"made with Perfetto UI {manifest.get('perfetto_ui')}, pinned is {version}"
            )
    for shot in SHOTS:
        entry = manifest["shots"].get(shot.name)
        if entry is None:
            problems.append(f"{shot.name}: not made yet")
            continue
        png = manifest_path.parent / entry["file"]
        if not png.is_file():
            problems.append(f"{shot.name}: {png.name} is missing")
        elif png_size(png) != (entry["width"], entry["height"]):
            problems.append(f"{shot.name}: {png.name} is not {entry['width']}x{entry['height']}")
        if not shot.trace_path.is_file():
            problems.append(f"{shot.name}: its trace artifacts/{shot.trace} is missing")
        elif entry["trace_sha256"] != sha256_file(shot.trace_path):
            problems.append(f"{shot.name}: artifacts/{shot.trace} changed since")
    extra = sorted(set(manifest["shots"]) - {s.name for s in SHOTS})
    problems += [f"{name}: recorded but no longer defined" for name in extra]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m generators.perfetto_shots", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--only", help="comma-separated screenshot names")
    parser.add_argument("--check", action="store_true", help="only say whether they are current")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.check:
        problems = stale()
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    names = [n for n in re.split(r"[,\s]+", args.only) if n] if args.only else None
    try:
        make(names)
    except ShotError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
