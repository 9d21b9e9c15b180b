"""No detector's cost grows out of step with the others: each detector's share of the doctor's
examine time on two vendored reference traces, against the shares recorded in
benchmarks/detector_shares.json (``python benchmarks/detector_shares.py`` records them).

A share, not a time: a slower or busier machine slows every detector alike. A detector whose SQL
starts to search per row (a join that grows with the rows times the events) takes a larger share
of the same trace; past ``GROWTH_MAX`` times its recorded share (a share under ``FLOOR_PCT``
counting as that floor) the test fails and names it. One examination per trace.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.detector_shares import (
    FLOOR_PCT,
    GROWTH_MAX,
    OUT_JSON,
    REPO,
    TRACES,
    limit_pct,
    measure,
)
from generators.doctor.detectors import load_detectors

RECORDED = json.loads(OUT_JSON.read_text())


def test_the_record_is_of_these_traces_and_detectors() -> None:
    """The record names the traces and the detectors of today, with the test's own limits."""
    assert RECORDED["growth_max"] == GROWTH_MAX and RECORDED["floor_pct"] == FLOOR_PCT
    assert set(RECORDED["traces"]) == {t.rsplit("/", 1)[-1] for t in TRACES}
    ids = {d.id for d in load_detectors()}
    for name, entry in RECORDED["traces"].items():
        assert set(entry["shares_pct"]) <= ids, name
        # Most detectors run on each of these traces: the guard reaches them.
        assert len(entry["shares_pct"]) >= len(ids) - 4, name


@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t.rsplit("/", 1)[-1])
def test_no_detector_takes_a_growing_share(trace: str) -> None:
    recorded = RECORDED["traces"][trace.rsplit("/", 1)[-1]]["shares_pct"]
    seconds, shares = measure(REPO / trace)
    assert seconds > 0
    grown = {
        d: f"{share:.1f} % of {seconds:.2f} s (recorded {recorded.get(d, 0.0):.1f} %, "
        f"limit {limit_pct(recorded.get(d, 0.0)):.1f} %)"
        for d, share in shares.items()
        if share > limit_pct(recorded.get(d, 0.0))
    }
    assert not grown, f"detectors whose share of the examination grew on {trace}: {grown}"
