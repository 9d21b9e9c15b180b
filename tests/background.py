"""Slow work that a test needs, started when the run begins and waited for by the test.

A fresh derive of every committed trace takes minutes, nearly all of it in the trace processor,
and nothing else in the run depends on it. Started in a process of its own as soon as the tests
are collected (when the test that compares its output is among them), it runs beside the other tests
(which mostly keep one core busy); the test then only waits for what is left of it.

The derive runs on a copy of the committed artifacts with the workers ``make derive`` uses
(generators/parallel.py), so that the byte-for-byte comparison covers the path readers run. Its
output and exit code are kept whole for the test to report.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"
#: The test that compares a fresh derive with the committed files (tests/test_derive.py).
REDERIVE_TEST = "tests/test_derive.py::test_fresh_derive_reproduces_committed_files"
#: A whole derive takes two to four minutes on two cores; far longer means it hangs.
REDERIVE_TIMEOUT_S = 1200


@dataclass
class Rederive:
    """A ``python -m generators derive`` running on a copy of the committed artifacts."""

    folder: Path
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def artifacts(self) -> Path:
        return self.folder / "artifacts"

    def wait(self) -> tuple[int, str]:
        """Its exit code and the tail of what it printed, once it has ended."""
        try:
            code = self.proc.wait(timeout=REDERIVE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = -9
        return code, self.log.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


_running: dict[str, Rederive] = {}


def start_rederive() -> Rederive:
    """Copy the committed artifacts and start deriving them afresh (once per run)."""
    if "rederive" not in _running:
        folder = Path(tempfile.mkdtemp(prefix="profiling-guide-rederive-"))
        shutil.copytree(ARTIFACTS, folder / "artifacts", ignore=shutil.ignore_patterns(".*"))
        log = folder / "derive.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "generators",
                    "--artifacts",
                    str(folder / "artifacts"),
                    "derive",
                ],
                cwd=REPO,
                env=os.environ.copy(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        _running["rederive"] = Rederive(folder, proc, log)
    return _running["rederive"]


def stop_all() -> None:
    for job in _running.values():
        job.stop()
    _running.clear()
