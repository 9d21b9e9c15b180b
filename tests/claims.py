"""Read the artifacts a page shows, the way the site's hook picks them, for claim tests.

A page shows the CUDA capture of a variant when there is one, else the CPU capture: the rule is
``generators.devices.shown_device``, shared with the hook. A claim test checks what the prose
says against exactly that artifact, so when the CUDA set lands the same tests run against it
(and fail loudly if the prose no longer holds).
"""

from __future__ import annotations

import csv
import functools
import io
import json
from pathlib import Path

import pytest

from generators import devices
from generators.derive import Rows

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "artifacts"


def manifest(device: str) -> dict | None:
    path = ARTIFACTS / device / "MANIFEST.json"
    return json.loads(path.read_text()) if path.exists() else None


def shown_device(step: str, variant: str, *, cpu_ok: bool = True) -> str | None:
    """The device set whose artifact the page shows for this variant (None: needs CUDA)."""

    def has_capture(device: str) -> bool:
        m = manifest(device)
        return bool(m) and variant in m.get("variants", {}).get(step, {})

    return devices.shown_device(has_capture, cpu_ok=cpu_ok)


def needs_cuda(step: str, *variants: str) -> pytest.MarkDecorator:
    """Skip a claim about GPU-only concepts until every variant named has a CUDA capture."""
    missing = [v for v in variants if shown_device(step, v, cpu_ok=False) is None]
    return pytest.mark.skipif(
        bool(missing), reason=f"no CUDA capture of {step}/{', '.join(missing)} committed yet"
    )


def variant_dir(step: str, variant: str, *, cpu_ok: bool = True) -> Path:
    device = shown_device(step, variant, cpu_ok=cpu_ok)
    assert device, f"no artifact for {step}/{variant} (cpu_ok={cpu_ok})"
    return ARTIFACTS / device / step / variant


def values(step: str, variant: str, *, cpu_ok: bool = True) -> dict[str, dict[str, object]]:
    return json.loads((variant_dir(step, variant, cpu_ok=cpu_ok) / "values.json").read_text())


def table(step: str, variant: str, query: str, *, cpu_ok: bool = True) -> list[dict[str, str]]:
    path = variant_dir(step, variant, cpu_ok=cpu_ok) / f"{query}.csv"
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def capture_record(step: str, variant: str, *, cpu_ok: bool = True) -> dict:
    return json.loads((variant_dir(step, variant, cpu_ok=cpu_ok) / "capture.json").read_text())


@functools.cache
def _trace_query(step: str, variant: str, query: str, cpu_ok: bool) -> Rows:
    from generators.derive import run_query
    from generators.queries import load_query
    from tests.open_traces import shared_trace

    with shared_trace(variant_dir(step, variant, cpu_ok=cpu_ok) / "trace.json.gz") as tp:
        return run_query(tp, load_query(query))


def trace_table(
    step: str, variant: str, query: str, *, cpu_ok: bool = True
) -> list[dict[str, str]]:
    """A query asked of the trace itself, for claims that rest on rows no page prints.

    Same shape as :func:`table` (CSV text cells), so the two read alike in tests.
    """
    from generators.derive import to_csv

    text = to_csv(_trace_query(step, variant, query, cpu_ok))
    return list(csv.DictReader(io.StringIO(text)))


def trace_values(step: str, variant: str, query: str, *, cpu_ok: bool = True) -> dict[str, object]:
    """The one row of a values query, asked of the trace itself (native Python types)."""
    rows = _trace_query(step, variant, query, cpu_ok).rows
    assert len(rows) == 1, f"{query} returned {len(rows)} rows"
    return rows[0]


@functools.lru_cache(maxsize=2)
def trace_events(step: str, variant: str, *, exact: bool) -> list[dict]:
    """The events of a variant's CUDA trace file (no CPU fallback), parsed in Python (the
    claims a test checks against the file itself, apart from the trace processor): ``exact``
    with numbers as Decimals (:func:`generators.trace_json.load_events`), otherwise as floats,
    as the importer reads them (:func:`~generators.trace_json.load_trace_fast`). A large trace
    takes seconds to parse and several claims read the same one in a row: the last two are kept
    (hundreds of MB each for an LLM trace; a test module that reads them calls
    ``trace_events.cache_clear()`` as it ends). The lists are shared: a test must not change
    them."""
    from generators.trace_json import load_events, load_trace_fast

    path = variant_dir(step, variant, cpu_ok=False) / "trace.json.gz"
    return load_events(path) if exact else load_trace_fast(path)
