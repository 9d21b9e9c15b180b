"""What one test run shares between its processes, and slow work started as the run begins.

``make test TEST_WORKERS=N`` runs the tests in N worker processes (pytest-xdist); ``make test``
and a plain ``pytest`` call run them in one. Either way one process owns the run: the xdist
controller, or the single process. It makes a folder for the run (:data:`RUN_DIR`, passed on to
the workers in the environment, removed when the run ends) and starts there what every worker
shares:

- the Perfetto UI, served on 127.0.0.1 for the whole run (:func:`perfetto_ui_origin`), so that a
  site built by one worker, whose buttons name that origin, works in any worker;
- the slow work that needs nothing else of the run, each as a background job
  (:class:`Job`) started as soon as the run knows the test that checks it is to run, so that it
  runs beside the other tests on the second core and its test only waits for what is left of it:
  the fresh derive that ``tests/test_derive.py`` compares with the committed files
  (:func:`start_rederive`: minutes, nearly all of it in the trace processor), and the companion
  notebooks that ``tests/test_notebooks.py`` executes (:func:`start_notebooks`: each a kernel
  that captures a workload on the CPU).

The derive runs on a copy of the committed artifacts with the workers ``make derive`` uses
(generators/parallel.py), so that the byte-for-byte comparison covers the path readers run. Each
job's output and exit code are kept whole for its test to report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"
#: The environment variable naming the run's shared folder (set by the process that owns the run;
#: a name of the tests alone, not one of the settings in generators/env.py).
RUN_DIR = "GUIDE_TESTS_RUN_DIR"
#: The environment variable with the origin of the Perfetto UI the owning process serves.
PERFETTO_UI = "GUIDE_TESTS_PERFETTO_UI"
#: The test that compares a fresh derive with the committed files (tests/test_derive.py).
REDERIVE_TEST = "tests/test_derive.py::test_fresh_derive_reproduces_committed_files"
#: The tests that execute a notebook, one per notebook: ``<prefix><stem>]``.
NOTEBOOK_TEST_PREFIX = "tests/test_notebooks.py::test_notebook_runs_on_cpu["
#: Tests that read the built site (tests/serving.py): the site tests and the browser tests.
SITE_TESTS = ("tests/test_site.py::", "tests/browser/")
#: The browser test of the site built for a sub-path (tests/browser/test_subpath.py).
SUB_PATH_TESTS = "tests/browser/test_subpath.py::"
#: The environment variable with the origin that serves the sub-path build's folder.
SUB_PATH_ORIGIN = "GUIDE_TESTS_SUB_PATH_ORIGIN"
#: The sub-path the site is built for in that test (a GitHub Pages project site's).
SUB_PATH = "guide"
#: A whole derive takes two to four minutes on two cores, the notebooks about as long together;
#: far longer means one hangs.
JOB_TIMEOUT_S = 1200


def run_dir() -> Path:
    """The folder this run's processes share (made on first use when no process owns a run,
    e.g. a test module imported outside pytest)."""
    if not os.environ.get(RUN_DIR):
        os.environ[RUN_DIR] = tempfile.mkdtemp(prefix="profiling-guide-test-run-")
    return Path(os.environ[RUN_DIR])


@dataclass
class Job:
    """A command run in the background in ``folder``: ``job.log`` holds what it printed,
    ``exit-code`` appears once it has ended."""

    folder: Path

    @property
    def log(self) -> Path:
        return self.folder / "job.log"

    @property
    def exit_code_file(self) -> Path:
        return self.folder / "exit-code"

    def wait(self, ready: Path | None = None) -> tuple[int | None, str]:
        """Wait until the job has ended, or until ``ready`` exists if given (a file the job
        writes whole as it goes): the exit code (None: still running, ``ready`` is there; -9: it
        ran past :data:`JOB_TIMEOUT_S`), and the tail of what it printed."""
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while not self.exit_code_file.exists():
            if ready is not None and ready.exists():
                return None, self._tail()
            if time.monotonic() > deadline:
                return -9, self._tail()
            time.sleep(0.5)
        return int(self.exit_code_file.read_text()), self._tail()

    def _tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""


#: The background job's wrapper: run the command, then write its exit code (written last and
#: renamed into place, so that a waiting test never reads half of it).
_WRAPPER = """
import pathlib, subprocess, sys
folder = pathlib.Path(sys.argv[1])
with open(folder / "job.log", "wb") as log:
    code = subprocess.call(sys.argv[2:], stdout=log, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL)
(folder / "exit-code.part").write_text(str(code))
(folder / "exit-code.part").replace(folder / "exit-code")
"""

_jobs: list[subprocess.Popen[bytes]] = []


def _start(name: str, *command: str) -> Job:
    """Start ``command`` in the background as the job ``name``, once per run (a no-op if it has
    started: the folder is the record that it has)."""
    job = Job(run_dir() / name)
    try:
        job.folder.mkdir()
    except FileExistsError:
        return job
    _jobs.append(
        subprocess.Popen(
            [sys.executable, "-c", _WRAPPER, str(job.folder), *command],
            cwd=REPO,
            env=os.environ.copy(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            # Its own process group, so that stopping the run stops the job's children too.
            start_new_session=True,
        )
    )
    return job


#: Copy the committed artifacts into the job's folder, then derive the copy.
_REDERIVE = """
import pathlib, shutil, subprocess, sys
artifacts, folder = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
shutil.copytree(artifacts, folder / "artifacts", ignore=shutil.ignore_patterns(".*"))
sys.exit(subprocess.call(
    [sys.executable, "-m", "generators", "--artifacts", str(folder / "artifacts"), "derive"]))
"""


def start_rederive() -> Job:
    """The fresh derive, in the background (started once per run); the derived copy of the
    artifacts is ``job.folder / "artifacts"``."""
    folder = run_dir() / "rederive"
    return _start("rederive", sys.executable, "-c", _REDERIVE, str(ARTIFACTS), str(folder))


def start_notebooks(stems: list[str], name: str = "notebooks") -> Job:
    """The notebooks named, executed one after another in the background as the job ``name``
    (started once per run, by the first call): each one's outcome in
    ``job.folder / "<stem>.json"`` (tests/notebook_run.py)."""
    folder = run_dir() / name
    return _start(name, sys.executable, "-m", "tests.notebook_run", str(folder), *stems)


#: Build both editions into the job's folder/site with the variables given as NAME=VALUE
#: (tests/serving.py's build commands, one after the other, stopping at the first that fails).
_BUILD_SITE = """
import os, subprocess, sys
from pathlib import Path
from tests.serving import build_commands
destination = Path(sys.argv[1])
env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **dict(a.split("=", 1) for a in sys.argv[2:])}
for command, cache in build_commands(destination):
    code = subprocess.call(command, env={**env, **cache})
    if code:
        sys.exit(code)
"""


def site_job() -> Job:
    """The background build of the site the site and browser tests share (it may not have
    started: see :func:`start_for`)."""
    return Job(run_dir() / "site-build")


def start_site_build(name: str, destination: Path, **env: str) -> Job:
    """Both editions built in the background into ``destination`` with ``env`` (once per run)."""
    variables = [f"{k}={v}" for k, v in env.items()]
    return _start(name, sys.executable, "-c", _BUILD_SITE, str(destination), *variables)


def sub_path_job() -> Job:
    """The background build of the site for a sub-path of :data:`SUB_PATH_ORIGIN`."""
    return Job(run_dir() / "sub-path-build")


def waits_for_a_job(test_id: str) -> bool:
    """Whether the test waits for a background job that runs for minutes (the fresh derive, the
    notebooks; the site builds are ready long before the first test that needs them)."""
    return test_id == REDERIVE_TEST or test_id.startswith(NOTEBOOK_TEST_PREFIX)


def start_for(test_ids: list[str]) -> None:
    """Start the background jobs that the tests collected (``test_ids``) will wait for."""
    # Worker processes report a test grouped for --dist loadgroup as "<id>@<group>".
    test_ids = [test_id.split("@", 1)[0] for test_id in test_ids]  # no test id holds "@"
    if REDERIVE_TEST in test_ids:
        start_rederive()
    origin = perfetto_ui_origin()
    if origin and any(test_id.startswith(SITE_TESTS) for test_id in test_ids):
        start_site_build(
            site_job().folder.name,
            site_job().folder / "site",
            PROFILING_GUIDE_PERFETTO_ORIGIN=origin,
            PROFILING_GUIDE_SITE_URL="",
        )
    host = os.environ.get(SUB_PATH_ORIGIN)
    if host and any(test_id.startswith(SUB_PATH_TESTS) for test_id in test_ids):
        start_site_build(
            sub_path_job().folder.name,
            run_dir() / "sub-path-host" / SUB_PATH,
            PROFILING_GUIDE_SITE_URL=f"{host}/{SUB_PATH}/",
        )
    stems = [
        test_id.removeprefix(NOTEBOOK_TEST_PREFIX).removesuffix("]")
        for test_id in test_ids
        if test_id.startswith(NOTEBOOK_TEST_PREFIX)
    ]
    if stems:
        start_notebooks(stems)


def notebook_outcome(stem: str) -> dict[str, object]:
    """The outcome of executing the notebook ``stem``: from the run's notebooks job, or, where
    the owning process started none (a test module run outside pytest's hooks), from a job of its
    own started here."""
    job = Job(run_dir() / "notebooks")
    if not job.folder.exists():
        job = start_notebooks([stem], name=f"notebook-{stem}")
    result = job.folder / f"{stem}.json"
    code, output = job.wait(ready=result)
    assert result.exists(), f"the notebooks job ended ({code}) without running {stem}: {output}"
    return json.loads(result.read_text())


def perfetto_ui_origin() -> str | None:
    """The origin of the Perfetto UI served for the whole run, if the owning process serves it."""
    return os.environ.get(PERFETTO_UI) or None


def stop_all() -> None:
    """Stop what this process started (the owning process, as the run ends)."""
    for proc in _jobs:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
        proc.wait()
    _jobs.clear()
