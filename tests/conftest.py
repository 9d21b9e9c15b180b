"""Shared test fixtures."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from generators import env
from tests import background
from tests.open_traces import POOL
from tests.reference_traces import all_traces
from tests.serving import built_site, perfetto_ui, static_server  # noqa: F401 (fixtures)

# Exact counts and byte-for-byte derives are pinned to the offline engine, whatever this machine
# has cached or could download (an explicit choice in the environment still wins).
os.environ.setdefault(env.TP_ENGINE.name, "wasm")
# What the engine caches (profiles of its hot functions) goes to a folder of this run's, not to
# the user's cache.
if not os.environ.get(env.CACHE_DIR.name):
    _cache = tempfile.mkdtemp(prefix="profiling-guide-test-cache-")
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
    os.environ[env.CACHE_DIR.name] = _cache

REPO = Path(__file__).resolve().parent.parent


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


def pytest_collection_finish(session: pytest.Session) -> None:
    # The fresh derive that test_derive compares with the committed files starts now, in the
    # background (tests/background.py), when that test is to run.
    if session.config.option.collectonly:
        return
    if any(item.nodeid == background.REDERIVE_TEST for item in session.items):
        background.start_rederive()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    POOL.close()
    background.stop_all()
