"""Shared test fixtures."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from generators import env
from generators.perfetto_ui import PerfettoUINotFound, StaticServers, web_dist
from tests import background
from tests.open_traces import POOL
from tests.reference_traces import all_traces
from tests.serving import built_site, perfetto_ui, static_server  # noqa: F401 (fixtures)

# Exact counts and byte-for-byte derives are pinned to the offline engine, whatever this machine
# has cached or could download (an explicit choice in the environment still wins).
os.environ.setdefault(env.TP_ENGINE.name, "wasm")

REPO = Path(__file__).resolve().parent.parent
BROWSER_TESTS = "tests/browser/"
#: The browser test files that read the tours of the site (tests/browser/tour.py).
TOUR_TESTS = frozenset(
    f"{BROWSER_TESTS}{name}.py"
    for name in ("test_figures", "test_tables", "test_site", "test_japanese")
)
#: The longest browser file after the tours: every Perfetto button's hand-off.
HANDOFF_TESTS = f"{BROWSER_TESTS}test_perfetto_handoff.py"


@pytest.fixture(scope="session")
def reference_traces() -> list[Path]:
    return all_traces()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-expected",
        action="store_true",
        default=False,
        help="rewrite the expected CSVs of tests/sql_cases/ from what the SQL returns now "
        "(on purpose only: review the diff before committing)",
    )


def _in_a_worker(config: pytest.Config) -> bool:
    """Whether this process is one of xdist's workers."""
    return hasattr(config, "workerinput")


def _owns_the_run(config: pytest.Config) -> bool:
    """Whether this process owns the run: the xdist controller, or the only process."""
    return not hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    # The owning process makes the folder the run's processes share and serves the Perfetto UI
    # for all of them (tests/background.py); workers inherit both through the environment.
    if not _owns_the_run(config) or config.option.collectonly:
        return
    shared = Path(tempfile.mkdtemp(prefix="profiling-guide-test-run-"))
    os.environ[background.RUN_DIR] = str(shared)
    config.add_cleanup(lambda: shutil.rmtree(shared, ignore_errors=True))
    try:
        dist = web_dist()
    except PerfettoUINotFound:
        return  # the perfetto_ui fixture fails with the reason, in the tests that need it
    servers = StaticServers()
    config.add_cleanup(servers.close)
    os.environ[background.PERFETTO_UI] = servers.serve(dist)
    # The folder the site built for a sub-path is served from (tests/browser/test_subpath.py):
    # served from the start, so that the build, started in the background, knows its address.
    host = shared / "sub-path-host"
    host.mkdir()
    os.environ[background.SUB_PATH_ORIGIN] = servers.serve(host)


# tryfirst: xdist's worker turns each test's xdist_group mark into the "@group" suffix of its id
# in a hook of its own, registered after this file; the marks added here must be there before.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The tests that wait for a background job (the fresh derive, the notebooks) run after the
    # others, so that the tests before them keep the process busy while the jobs run on the
    # other core, instead of waiting for them halfway through the run. In one process the
    # browser tests run last of all: Chromium lays pages out and runs the Perfetto UI in
    # processes of its own, which use the second core best once the background jobs have ended;
    # single-threaded Python tests are what shares two cores best with the jobs. With worker
    # processes they come first instead, longest first (the tours, then the Perfetto hand-off):
    # xdist hands the groups out in this order, one at a time to whichever worker is free, so
    # the longest start at once and the many short files even out the workers' ends.
    in_a_worker = _in_a_worker(config)

    def order(item: pytest.Item) -> tuple[int, int]:
        path = item.nodeid.split("::")[0]
        if path.startswith(BROWSER_TESTS):
            if not in_a_worker:
                return (3, 0)
            return (0, 0 if path in TOUR_TESTS else 1 if path == HANDOFF_TESTS else 2)
        return (2 if background.waits_for_a_job(item.nodeid) else 1, 0)

    items.sort(key=order)  # stable: each group keeps its collection order
    # With worker processes (make test TEST_WORKERS=N, --dist loadgroup), a worker takes a whole
    # group at a time. Every test file is a group of its own unless it names one (the files that
    # share a trace family), so that no two workers import the same traces; the browser files
    # that read the tours of the site (tests/browser/tour.py) are one group, so that each tour
    # is taken once.
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            path = item.nodeid.split("::")[0]
            group = "browser-tours" if path in TOUR_TESTS else path
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_collection_finish(session: pytest.Session) -> None:
    # Run alone (no xdist), the process starts the background jobs (the fresh derive that
    # test_derive compares with the committed files, the notebooks) as soon as it knows which of
    # their tests are to run (tests/background.py).
    if session.config.option.collectonly or not _owns_the_run(session.config):
        return
    background.start_for([item.nodeid for item in session.items])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: object, ids: list[str]) -> None:
    # The xdist controller collects nothing itself: it starts the background jobs when the first
    # worker reports the tests it collected (each job starts once).
    background.start_for(ids)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    POOL.close()
    if _owns_the_run(session.config):
        background.stop_all()
