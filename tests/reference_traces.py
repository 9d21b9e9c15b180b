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
MI250_TOY = REFERENCE_TRACES / "mi250-minitoy-train.json.gz"
A100_CPU_SIDE = REFERENCE_TRACES / "a100-cpu-side-train-step.json.gz"
GPU_UNLISTED = REFERENCE_TRACES / "gpu-unlisted-no-flows.json.gz"
#: Rank 1 of the same job as GPU_UNLISTED (rank 0), sampled the same way: the cross-rank pair.
GPU_UNLISTED_RANK_1 = REFERENCE_TRACES / "gpu-unlisted-no-flows-rank-1.json.gz"
V100 = REFERENCE_TRACES / "v100-resnet-train.json.gz"
#: One rank of a CPU-only gloo job: its only step runs no operator (it waits in collectives).
CPU_ONLY_GLOO = REFERENCE_TRACES / "cpu-only-gloo-rank.json.gz"
#: SGLang decoding on ROCm: one hipGraphLaunch replays 544 kernels that no flow links.
MI300X_GRAPH_REPLAY = REFERENCE_TRACES / "mi300x-sglang-graph-replay.json.gz"
#: SGLang capturing a HIP graph: launches recorded during the capture, no graph launch.
MI300X_GRAPH_CAPTURE = REFERENCE_TRACES / "mi300x-sglang-graph-capture.json.gz"
#: The training loops of other projects: no `record_function` labels of the guide's own.
FOREIGN_TRAINING = (V100, MI250_TOY, GPU_UNLISTED)

#: The traces that lack what most GPU traces hold, kept for the doctor's trust gate: the
#: CPU-side capture has no GPU activity (so no launches, kernels or flows), the other kernels
#: and launches but no ac2g flows.
WITHOUT_GPU_ACTIVITY = frozenset({A100_CPU_SIDE.name, CPU_ONLY_GLOO.name})
WITHOUT_FLOWS = frozenset(
    {A100_CPU_SIDE.name, CPU_ONLY_GLOO.name, GPU_UNLISTED.name, GPU_UNLISTED_RANK_1.name}
)


#: Traces too large to open in every test that walks the reference traces (17 MB of JSON): only
#: the tests that name them open them.
BY_NAME_ONLY = frozenset({MI300X_GRAPH_CAPTURE.name})


def all_traces() -> list[Path]:
    """Every vendored reference trace but the large ones, sorted (fails the test if none)."""
    paths = sorted(p for p in REFERENCE_TRACES.glob("*.json.gz") if p.name not in BY_NAME_ONLY)
    if not paths:
        pytest.fail(f"no reference traces in {REFERENCE_TRACES}")
    return paths
