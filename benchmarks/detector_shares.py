"""Each detector's share of the doctor's examine time on a few vendored reference traces.

    python benchmarks/detector_shares.py [--runs 5]

Opens each trace as the doctor's command line does (its engine tuned to the trace's size, the
light client), runs every detector on it (``examine``, Python's garbage collector paused), and
records the seconds of the examination and each detector's share of them: the median share
over the runs, taken in turn trace by trace. Writes benchmarks/detector_shares.json, which
``tests/test_detector_shares.py`` holds the doctor to: a detector whose share on one of these
traces grows past ``GROWTH_MAX`` times its recorded share (a share under ``FLOOR_PCT`` counting
as that floor, so that a detector of a few milliseconds may jitter) fails it. Shares, not
seconds, so that a faster or slower machine passes alike; a detector that starts to grow with
the trace faster than the others shows as a larger share.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from generators.doctor.detectors import load_detectors  # noqa: E402
from generators.doctor.examine import examine  # noqa: E402
from generators.doctor.tuning import engine_options  # noqa: E402
from generators.tp import open_trace  # noqa: E402

OUT_JSON = REPO / "benchmarks" / "detector_shares.json"
#: Vendored reference traces (tests/data/reference-traces/) on which most detectors have work:
#: a training loop with launch flows, copies and dropped events (V100), and a loop without flows
#: that runs NCCL kernels and synchronises. Smaller ones examine in a tenth of a second, where a
#: pause of the machine of a few milliseconds would take a detector past its limit.
TRACES = (
    "tests/data/reference-traces/v100-resnet-train.json.gz",
    "tests/data/reference-traces/gpu-unlisted-no-flows.json.gz",
)
#: How many times its recorded share a detector's share may grow before the test fails.
GROWTH_MAX = 3.0
#: Shares under this (%) count as this much: a detector of a few milliseconds jitters by more
#: than its share.
FLOOR_PCT = 5.0


def measure(path: Path) -> tuple[float, dict[str, float]]:
    """The doctor's examination of one trace: its seconds, and each detector's share of them
    (%), from one fresh opening of the trace."""
    detectors = load_detectors()
    with open_trace(path, client="light", **engine_options(path)) as tp:
        enabled = gc.isenabled()
        gc.disable()
        try:
            report = examine(tp, path, detectors)
        finally:
            if enabled:
                gc.enable()
    seconds = report.seconds or 0.0
    shares = {k: 100 * v / seconds for k, v in report.detector_seconds.items()} if seconds else {}
    return seconds, shares


def limit_pct(recorded_pct: float) -> float:
    """The largest share a detector may take now, given the share it had when recorded."""
    return GROWTH_MAX * max(recorded_pct, FLOOR_PCT)


def record(runs: int) -> dict[str, Any]:
    """Every trace measured ``runs`` times, in turn, and the medians."""
    samples: dict[str, list[tuple[float, dict[str, float]]]] = {t: [] for t in TRACES}
    load = [os.getloadavg()[0]]
    for _ in range(runs):
        for trace in TRACES:
            samples[trace].append(measure(REPO / trace))
    load.append(os.getloadavg()[0])
    traces = {}
    for trace, runs_of in samples.items():
        ids = sorted({d for _, shares in runs_of for d in shares})
        traces[Path(trace).name] = {
            "examine_s": [round(s, 4) for s, _ in runs_of],
            "shares_pct": {
                d: round(statistics.median(shares.get(d, 0.0) for _, shares in runs_of), 2)
                for d in ids
            },
            "max_shares_pct": {
                d: round(max(shares.get(d, 0.0) for _, shares in runs_of), 2) for d in ids
            },
        }
    return {
        "command": f"python benchmarks/detector_shares.py --runs {runs}",
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, load average {load[0]:.1f} / {load[1]:.1f}",
        "runs": runs,
        "growth_max": GROWTH_MAX,
        "floor_pct": FLOOR_PCT,
        "traces": traces,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("-o", "--output", type=Path, default=OUT_JSON)
    args = parser.parse_args(argv)
    data = record(args.runs)
    args.output.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
