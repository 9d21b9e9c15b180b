"""The code base stays ruff clean: lint rules and formatting, as configured in pyproject.toml."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )


def test_ruff_check() -> None:
    result = ruff("check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = ruff("format", "--no-cache", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr
