"""The doctor's time on traces with communication kernels, at two commits, side by side.

    .venv/bin/python benchmarks/comm_exposed.py --before DIR [--runs 3] TRACE...

``DIR`` is a checkout of the earlier commit with the same virtual environment (``git worktree add
DIR COMMIT && ln -s $PWD/.venv DIR/.venv``); this checkout is the later one. For each trace, the
doctor runs twice per round, once per checkout, alternating: with ``--only comm-exposed`` and with
every detector. Each run is a fresh process; recorded are its wall time and the report's own
``seconds`` (from the opened trace to the report, the import left out). The comm-exposed finding
(its rows' cost and communication time) must be the same at both commits, else the script stops.
Writes benchmarks/comm_exposed.json (or ``-o``); prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT_JSON = REPO / "benchmarks" / "comm_exposed.json"
MODES = {"comm-exposed": ["--only", "comm-exposed"], "all": []}


def run_doctor(tree: Path, trace: Path, extra: list[str]) -> tuple[float, float, object]:
    """Wall time, the report's own seconds, and the comm-exposed finding (or None)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [".venv/bin/python", "-m", "generators.doctor", "-q", "--format", "json"]
        began = time.perf_counter()
        done = subprocess.run(
            [*cmd, "-o", str(out), *extra, str(trace)], cwd=tree, env=env, capture_output=True
        )
        wall = time.perf_counter() - began
        if done.returncode not in (0, 1):
            sys.exit(f"{tree}: {trace.name}: {done.stderr.decode()[-2000:]}")
        report = json.loads(out.read_text())[0]
    finding = next((f for f in report["findings"] if f["id"] == "comm-exposed"), None)
    # What the finding measured: its cost, its rows, its sums (in `seen`) and its evidence.
    measured = finding and [finding[k] for k in ("cost_ns", "rows", "seen", "evidence")]
    return wall, report["seconds"], measured


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="checkout of the earlier commit")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-o", "--output", type=Path, default=OUT_JSON)
    ap.add_argument("traces", type=Path, nargs="+")
    args = ap.parse_args()
    trees = {"before": args.before.resolve(), "after": REPO}
    results = []
    for trace in args.traces:
        trace = trace.resolve()
        load = os.getloadavg()[0]
        for mode, extra in MODES.items():
            wall: dict[str, list[float]] = {t: [] for t in trees}
            own: dict[str, list[float]] = {t: [] for t in trees}
            found = {}
            for _ in range(args.runs):
                for name, tree in trees.items():
                    w, s, found[name] = run_doctor(tree, trace, extra)
                    wall[name].append(w)
                    own[name].append(s)
            if found["before"] != found["after"]:
                sys.exit(f"{trace.name}: the comm-exposed finding differs between the commits")
            results.append(
                {
                    "trace": trace.name,
                    "bytes": trace.stat().st_size,
                    "mode": mode,
                    "load_before": load,
                    "load_after": os.getloadavg()[0],
                    **{f"{t}_wall": wall[t] for t in trees},
                    **{f"{t}_seconds": own[t] for t in trees},
                }
            )
            r = results[-1]
            print(
                f"| `{r['trace']}` | {r['bytes'] / 1e6:.1f} MB | {mode} "
                f"| {statistics.median(r['before_wall']):.2f} s "
                f"| {statistics.median(r['after_wall']):.2f} s "
                f"| {statistics.median(r['before_seconds']):.2f} s "
                f"| {statistics.median(r['after_seconds']):.2f} s "
                f"| {r['load_before']:.1f} / {r['load_after']:.1f} |",
                flush=True,
            )
    args.output.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
