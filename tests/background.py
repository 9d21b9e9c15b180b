"""What one test run shares between its processes, and slow work started as the run begins.

``make test TEST_WORKERS=N`` runs the tests in N worker processes (pytest-xdist); ``make test``
and a plain ``pytest`` call run them in one. Either way one process owns the run: the xdist
controller, or the single process. It makes a folder for the run (:data:`RUN_DIR`, passed on to
the workers in the environment, removed when the run ends) and starts there what every worker
shares:

- the Perfetto UI, served on 127.0.0.1 for the whole run (:func:`perfetto_ui_origin`), so that a
  site built by one worker, whose buttons name that origin, works in any worker;
- the fresh derive that ``tests/test_derive.py`` compares with the committed files
  (:func:`start_rederive`): a whole derive takes minutes, nearly all of it in the trace processor,
  and nothing else in the run depends on it, so it starts as soon as the run knows that test is
  to run and runs beside the other tests; the test only waits for what is left of it.

The derive runs on a copy of the committed artifacts with the workers ``make derive`` uses
(generators/parallel.py), so that the byte-for-byte comparison covers the path readers run. Its
output and exit code are kept whole for the test to report.
"""

from __future__ import annotations

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
#: A whole derive takes two to four minutes on two cores; far longer means it hangs.
REDERIVE_TIMEOUT_S = 1200


def run_dir() -> Path:
    """The folder this run's processes share (made on first use when no process owns a run,
    e.g. a test module imported outside pytest)."""
    if not os.environ.get(RUN_DIR):
        os.environ[RUN_DIR] = tempfile.mkdtemp(prefix="profiling-guide-test-run-")
    return Path(os.environ[RUN_DIR])


@dataclass
class Rederive:
    """A ``python -m generators derive`` on a copy of the committed artifacts, in ``folder``:
    ``derive.log`` holds what it printed, ``exit-code`` appears once it has ended."""

    folder: Path

    @property
    def artifacts(self) -> Path:
        return self.folder / "artifacts"

    @property
    def log(self) -> Path:
        return self.folder / "derive.log"

    @property
    def exit_code_file(self) -> Path:
        return self.folder / "exit-code"

    def wait(self) -> tuple[int, str]:
        """Its exit code and the tail of what it printed, once it has ended (-9: it ran past
        :data:`REDERIVE_TIMEOUT_S`)."""
        deadline = time.monotonic() + REDERIVE_TIMEOUT_S
        while not self.exit_code_file.exists():
            if time.monotonic() > deadline:
                return -9, self._tail()
            time.sleep(0.5)
        return int(self.exit_code_file.read_text()), self._tail()

    def _tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""


#: The script of the background job: copy, derive, then write the exit code (written last and
#: renamed into place, so that a waiting test never reads half of it).
_JOB = """
import pathlib, shutil, subprocess, sys
artifacts, folder = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
shutil.copytree(artifacts, folder / "artifacts", ignore=shutil.ignore_patterns(".*"))
with open(folder / "derive.log", "wb") as log:
    code = subprocess.call(
        [sys.executable, "-m", "generators", "--artifacts", str(folder / "artifacts"), "derive"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )
(folder / "exit-code.part").write_text(str(code))
(folder / "exit-code.part").replace(folder / "exit-code")
"""

_jobs: list[subprocess.Popen[bytes]] = []


def rederive() -> Rederive:
    """The run's fresh derive (started here if the owning process has not started it)."""
    job = Rederive(run_dir() / "rederive")
    if not job.folder.exists():
        start_rederive()
    return job


def start_rederive() -> None:
    """Start the fresh derive in the background, once per run (a no-op if it has started)."""
    folder = run_dir() / "rederive"
    try:
        folder.mkdir()
    except FileExistsError:
        return
    _jobs.append(
        subprocess.Popen(
            [sys.executable, "-c", _JOB, str(ARTIFACTS), str(folder)],
            cwd=REPO,
            env=os.environ.copy(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            # Its own process group, so that stopping the run stops the derive's workers too.
            start_new_session=True,
        )
    )


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
