"""A Kineto trace repeated N times one after another: the same job, N times as long.

    python benchmarks/tile_trace.py TRACE N OUT

For timing how the doctor grows with a trace's length when no longer real trace is at hand. Each
copy is shifted by the trace's span (plus 1 ms); its flow ids, correlation ids, external ids and
event indices are offset so that no two copies share one, and its ``ProfilerStep#K`` becomes
``ProfilerStep#K+1000i``. Metadata events appear once. Not a capture: the output is a benchmark
input, never a lesson's trace.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

STEP = re.compile(r"ProfilerStep#(\d+)$")
ID_ARGS = ("correlation", "External id", "Ev Idx")
OFFSET = 10_000_000


def tile(events: list[dict], n: int) -> list[dict]:
    timed = [e for e in events if e.get("ph") != "M" and "ts" in e]
    span = max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed) + 1000
    out = [e for e in events if e.get("ph") == "M"]
    for i in range(n):
        for event in events:
            if event.get("ph") == "M":
                continue
            e = dict(event)
            if "ts" in e:
                e["ts"] = e["ts"] + i * span
            if isinstance(e.get("id"), int):
                e["id"] += i * OFFSET
            if isinstance(e.get("args"), dict):
                e["args"] = {
                    k: v + i * OFFSET if k in ID_ARGS and isinstance(v, int) else v
                    for k, v in e["args"].items()
                }
            step = STEP.match(e.get("name", ""))
            if step:
                e["name"] = f"ProfilerStep#{int(step.group(1)) + 1000 * i}"
            out.append(e)
    return out


def main() -> None:
    src, n, dst = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    opener = gzip.open if src.suffix == ".gz" else open
    with opener(src, "rt") as f:
        trace = json.load(f)
    trace["traceEvents"] = tile(trace["traceEvents"], n)
    with gzip.open(dst, "wt") as f:
        json.dump(trace, f)


if __name__ == "__main__":
    main()
