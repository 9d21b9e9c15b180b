"""The real GPU traces from other public projects that the tests read (test inputs only).

They live in ``tests/data/reference-traces/`` with their provenance and licences (see the README
there): a clone of this repository needs nothing beside it. Never shown as this project's
measurements.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REFERENCE_TRACES = Path(__file__).resolve().parent / "data" / "reference-traces"

A100_ADD = REFERENCE_TRACES / "a100-simple-add.json.gz"
A100_TRITON = REFERENCE_TRACES / "a100-triton-compiled.json.gz"
H100_BERT = REFERENCE_TRACES / "h100-bert-small-inference.json.gz"
MI300X = REFERENCE_TRACES / "mi300x-compiled-triton.json.gz"
V100 = REFERENCE_TRACES / "v100-resnet-train.json.gz"
MI250_TRAIN = REFERENCE_TRACES / "hta-amd_trace-mi250-minitoy-train.json.gz"
SAMPLED_TRAIN = REFERENCE_TRACES / "hta-timeline_analysis-sampled-rank-0.json.gz"
#: The training loops of other projects: no `record_function` labels of the guide's own.
FOREIGN_TRAINING = (V100, MI250_TRAIN, SAMPLED_TRAIN)


def all_traces() -> list[Path]:
    """Every vendored reference trace, sorted (fails the test if there are none)."""
    paths = sorted(REFERENCE_TRACES.glob("*.json.gz"))
    if not paths:
        pytest.fail(f"no reference traces in {REFERENCE_TRACES}")
    return paths
