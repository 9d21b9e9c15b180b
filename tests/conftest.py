"""Shared test fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Exact counts and byte-for-byte derives are pinned to the offline engine, whatever this machine
# has cached or could download (an explicit choice in the environment still wins).
os.environ.setdefault("PROFILING_GUIDE_TP_ENGINE", "wasm")

REPO = Path(__file__).resolve().parent.parent
REFERENCE_TRACES = (REPO / ".." / "shared" / "reference-traces").resolve()


def reference_trace_paths() -> list[Path]:
    """The real GPU traces kept next to the repository (fails the test if they are missing)."""
    paths = sorted(REFERENCE_TRACES.glob("*.json.gz"))
    if not paths:
        pytest.fail(
            f"no reference traces in {REFERENCE_TRACES} (expected ../shared/reference-traces/)"
        )
    return paths


@pytest.fixture(scope="session")
def reference_traces() -> list[Path]:
    return reference_trace_paths()
