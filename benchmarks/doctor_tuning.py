"""The doctor's engine tuning by trace size: whole-process wall time with each tuning.

The doctor opens a trace with V8's baseline code only, and a large one with V8's own dynamic
tier-up (``engine_options`` in generators/doctor/tuning.py). This measures both tunings on
traces of several sizes, so that the threshold between them rests on figures: the doctor's
whole process (``-q --format json``, its engine started before its imports, as the
command does), each tuning forced in turn, runs alternating, medians.

    python benchmarks/doctor_tuning.py [--runs 3]

Writes benchmarks/doctor_tuning.json and .md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from generators.doctor.tuning import engine_options, json_bytes, tuning_label  # noqa: E402

OUT_JSON = REPO / "benchmarks" / "doctor_tuning.json"
OUT_MD = REPO / "benchmarks" / "doctor_tuning.md"
#: Traces from one MB to over a hundred MB of JSON (the reference trace, the guide's own).
TRACES = (
    "tests/data/reference-traces/h100-bert-small-inference.json.gz",
    "artifacts/cuda/attention/sweep/trace.json.gz",
    "artifacts/cpu/train/memory_fp32/trace.json.gz",
    "artifacts/cpu/train/memory/trace.json.gz",
    "artifacts/cpu/llm/eager_b1/trace.json.gz",
    "artifacts/cuda/train/compiled/trace.json.gz",
    "tests/data/reference-traces/v100-resnet-train.json.gz",
    "artifacts/cuda/llm/static_compiled_b1/trace.json.gz",
    "artifacts/cuda/train/naive/trace.json.gz",
    "artifacts/cuda/llm/eager_b1/trace.json.gz",
)
TUNINGS = {
    "baseline only": {"tier_up": False},
    "V8 tier-up": {"tier_up": True},
}
#: The doctor's command with one tuning forced: its engine started before the doctor's imports,
#: as ``python -m generators.doctor`` does, then the doctor's own main().
DRIVER = """
import json, sys
from generators import tp_launch
from generators.doctor import tuning
forced = json.loads(sys.argv[1])
tp_launch.start_early(**(tuning.engine_options(sys.argv[2]) | forced))
import generators.doctor.__main__ as doctor
doctor.engine_options = lambda path: tuning.engine_options(path) | forced
sys.exit(doctor.main(sys.argv[2:]))
"""


def timed(cmd: list[str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if result.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed:\n{result.stderr[-3000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    python = str(REPO / ".venv" / "bin" / "python")
    rows = []
    for n, name in enumerate(TRACES, 1):
        trace = REPO / name
        print(f"[{n}/{len(TRACES)}] {name}", file=sys.stderr)
        cmds = {
            label: [python, "-c", DRIVER, json.dumps(forced), str(trace), "-q", "--format", "json"]
            for label, forced in TUNINGS.items()
        }
        samples: dict[str, list[float]] = {label: [] for label in TUNINGS}
        for cmd in cmds.values():
            timed(cmd)  # untimed: page cache, compiled bytecode
        for _ in range(args.runs):
            for label, cmd in cmds.items():
                samples[label].append(timed(cmd))
        rows.append(
            {
                "trace": name,
                "json_bytes": json_bytes(trace),
                "doctor_chooses": tuning_label(engine_options(trace)),
                "samples_s": {label: sorted(s) for label, s in samples.items()},
                "median_s": {label: statistics.median(s) for label, s in samples.items()},
            }
        )
    result = {
        "command": f"python benchmarks/doctor_tuning.py --runs {args.runs}",
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "runs": args.runs,
        "rows": rows,
    }
    OUT_JSON.write_text(json.dumps(result, indent=1) + "\n")
    OUT_MD.write_text(render(result))
    print(OUT_MD.read_text())


def render(result: dict[str, Any]) -> str:
    labels = list(TUNINGS)
    lines = [
        "# The doctor's engine tuning by trace size",
        "",
        f"Command: `{result['command']}` ({result['date']}; {result['machine']}). Whole-process "
        f"wall time of `python -m generators.doctor TRACE -q --format json` with each tuning "
        f"forced, median of {result['runs']} alternating runs after one untimed run of each. "
        "**Bold**: the tuning the doctor chooses for that trace.",
        "",
        "| trace | JSON | " + " | ".join(labels) + " |",
        "| --- | ---: | " + " | ".join("---:" for _ in labels) + " |",
    ]
    for row in result["rows"]:
        cells = []
        for label in labels:
            cell = f"{row['median_s'][label]:.2f} s"
            cells.append(f"**{cell}**" if label == row["doctor_chooses"] else cell)
        mb = row["json_bytes"] / 1e6
        lines.append(f"| `{row['trace']}` | {mb:.0f} MB | " + " | ".join(cells) + " |")
    lines += [
        "",
        "*baseline only*: V8's baseline compiler's code, no tier-up. *V8 tier-up*: V8's "
        "default, which optimises the functions that run most in background threads.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
