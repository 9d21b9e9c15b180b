"""The doctor's command line as the doctor tests run it: a fresh process, its output kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_doctor(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m generators.doctor ARGS...`` from the repository's root."""
    return subprocess.run(
        [sys.executable, "-m", "generators.doctor", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
