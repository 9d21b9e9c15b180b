"""Shared test fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reference_traces import REFERENCE_TRACES

# Exact counts and byte-for-byte derives are pinned to the offline engine, whatever this machine
# has cached or could download (an explicit choice in the environment still wins).
os.environ.setdefault("PROFILING_GUIDE_TP_ENGINE", "wasm")

REPO = Path(__file__).resolve().parent.parent


def reference_trace_paths() -> list[Path]:
    """The vendored reference traces (fails the test if they are missing)."""
    paths = sorted(REFERENCE_TRACES.glob("*.json.gz"))
    if not paths:
        pytest.fail(f"no reference traces in {REFERENCE_TRACES}")
    return paths


@pytest.fixture(scope="session")
def reference_traces() -> list[Path]:
    return reference_trace_paths()
