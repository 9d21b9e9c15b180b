"""The doctor against Holistic Trace Analysis on the same traces, whole process, side by side.

    .venv/bin/python benchmarks/doctor_vs_hta.py --hta-python PATH/TO/venv/bin/python [--runs 5]
        [--corpus DIR]

HTA is not one of this project's dependencies: install it into a virtual environment of its own
(``python -m venv /tmp/hta && /tmp/hta/bin/pip install HolisticTraceAnalysis``) and name that
environment's Python. Each run is a fresh process, so start-up costs count, as they do for a
reader: the doctor opens the trace and runs every detector; HTA loads the trace
(``TraceAnalysis``) and computes ``get_gpu_kernel_breakdown()`` and ``get_idle_time_breakdown()``
on the trace's rank. Wall time and CPU time are both recorded. ``--corpus DIR``: also the
corpus traces of other projects that ``doctor_corpus.md`` lists (``CORPUS``, each in DIR under
its short name there), from 8.6 to 87 MB of JSON.
Runs alternate between the two tools. The machine's load average before and after is recorded:
both tools are CPU-bound, so other work on the machine slows both. Writes
benchmarks/doctor_vs_hta.json and .md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from generators.doctor.tuning import engine_options, json_bytes, tuning_label  # noqa: E402

OUT_JSON = REPO / "benchmarks" / "doctor_vs_hta.json"
OUT_MD = REPO / "benchmarks" / "doctor_vs_hta.md"
TRACES = REPO / "tests" / "data" / "reference-traces"
#: The largest reference trace, and the smallest (where start-up dominates).
CASES = ("v100-resnet-train.json.gz", "a100-triton-compiled.json.gz")
#: Corpus traces (doctor_corpus.md names their sources) that HTA 0.5.0 reads, from 8.6 to 87 MB of
#: JSON: training ranks (DDP, NCCL), inference on H100, B200 and MI300X, graph captures, MTIA.
#: HTA stops with a TypeError (a value too large for int16) on four others: tl-mi300-resnet-ckpt,
#: tl-mi300-timesformer, tl-xdit-flux-capture and tl-vllm-piecewise-capture.
CORPUS = (
    "hta-df-index.json.gz",
    "hta-diff-control.json.gz",
    "hta-diff-test.json.gz",
    "hta-negq.json.gz",
    "hta-ns-resolution.json.gz",
    "hta-nccl.json.gz",
    "hta-mtia-single.json.gz",
    "tl-b200-eager.json.gz",
    "tl-h100-qwen.json.gz",
    "tl-sglang-capture.json.gz",
    "tl-vllm-decode-capture.json.gz",
    "tl-xdit-sd35.json.gz",
)

HTA_SCRIPT = """
import sys
from hta.trace_analysis import TraceAnalysis
analyzer = TraceAnalysis(trace_dir=sys.argv[1])
analyzer.get_gpu_kernel_breakdown(visualize=False)
analyzer.get_idle_time_breakdown(ranks=analyzer.t.get_ranks()[:1], visualize=False)
"""


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, the process and everything it waited for: the
    doctor's engine included) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1):  # the doctor exits 1 only with --fail-on
        sys.exit(f"{' '.join(cmd)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hta-python", required=True, help="a Python with HTA installed")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--corpus", type=Path, help="a folder holding the corpus traces (doctor_corpus.md)"
    )
    args = parser.parse_args()
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    doctor_py = sys.executable  # the project's own (the command runs this script with it)
    load_before = os.getloadavg()[0]
    rows = []
    traces = [TRACES / name for name in CASES]
    if args.corpus:
        traces += [args.corpus / name for name in CORPUS]
    for trace in traces:
        name = trace.name
        # HTA reads every trace in a folder, one per rank: give it a folder holding this one.
        folder = Path(tempfile.mkdtemp(prefix="hta-"))
        shutil.copy(trace, folder / f"rank-0.{name}")
        doctor_cmd = [doctor_py, "-m", "generators.doctor", str(trace), "-q", "--format", "json"]
        hta_cmd = [args.hta_python, "-c", HTA_SCRIPT, str(folder)]
        timed(doctor_cmd, env)  # one untimed run each: page cache, compiled bytecode
        timed(hta_cmd, env)
        doctor_s, hta_s, doctor_cpu, hta_cpu = [], [], [], []
        for _ in range(args.runs):
            wall, cpu = timed(doctor_cmd, env)
            doctor_s.append(wall)
            doctor_cpu.append(cpu)
            wall, cpu = timed(hta_cmd, env)
            hta_s.append(wall)
            hta_cpu.append(cpu)
        shutil.rmtree(folder)
        rows.append(
            {
                "trace": name,
                "corpus": trace.parent != TRACES,
                "trace_bytes": trace.stat().st_size,
                "json_bytes": json_bytes(trace),
                "doctor_engine": tuning_label(engine_options(trace)),
                "doctor_s": sorted(doctor_s),
                "hta_s": sorted(hta_s),
                "doctor_median_s": statistics.median(doctor_s),
                "hta_median_s": statistics.median(hta_s),
                "doctor_cpu_median_s": statistics.median(doctor_cpu),
                "hta_cpu_median_s": statistics.median(hta_cpu),
            }
        )
    version = subprocess.run(
        [
            args.hta_python,
            "-c",
            "import importlib.metadata as m; print(m.version('HolisticTraceAnalysis'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    result = {
        "command": "python benchmarks/doctor_vs_hta.py --hta-python <python with HTA> "
        f"--runs {args.runs}" + (" --corpus <the corpus traces>" if args.corpus else ""),
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "hta_version": version,
        "runs": args.runs,
        "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "rows": rows,
    }
    OUT_JSON.write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        "# The doctor against Holistic Trace Analysis",
        "",
        f"Command: `{result['command']}` ({result['date']}; {result['machine']}; "
        f"HolisticTraceAnalysis {version}). Whole-process wall time, median of {args.runs} "
        "runs each, alternating; one untimed run of each first. Load average (1 min) "
        f"{result['load_average_1min'][0]} before, {result['load_average_1min'][1]} after.",
        "",
        "| trace | size (gzip / JSON) | doctor (all detectors) "
        "| HTA (load + kernel + idle breakdown) "
        "| HTA / doctor | CPU time, doctor / HTA | doctor's engine |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        size = f"{r['trace_bytes'] / 1e6:.2f} / {(r['json_bytes'] or 0) / 1e6:.1f} MB"
        lines.append(
            f"| `{r['trace']}` | {size} | {r['doctor_median_s']:.2f} s | "
            f"{r['hta_median_s']:.2f} s | {r['hta_median_s'] / r['doctor_median_s']:.2f}× | "
            f"{r['doctor_cpu_median_s']:.2f} s / {r['hta_cpu_median_s']:.2f} s | "
            f"{r['doctor_engine']} |"
        )
    if args.corpus:
        hta_over = [r["hta_median_s"] / r["doctor_median_s"] for r in rows if r["corpus"]]
        lines += [
            "",
            f"On the {len(hta_over)} corpus traces (the `hta-*` and `tl-*` rows: public traces "
            "of other projects, each named by its source in `doctor_corpus.md`), HTA took "
            f"{min(hta_over):.1f} to {max(hta_over):.1f} times the doctor's time (median "
            f"{statistics.median(hta_over):.1f}). HTA breaks the idle time down on the rank the "
            "trace holds (its `distributedInfo`: rank 1 or 3 for some of these training ranks), "
            "not on rank 0 alone. `python -m generators.doctor --timings TRACE` shows where the "
            "doctor's own time goes on a trace.",
        ]
    lines += [
        "",
        "Wall time is what the goal is about. CPU time (user + system, child processes included: "
        "the doctor's engine) shows how much of the machine each used: the doctor runs its "
        "engine beside its own imports, so on a machine with no core to spare it would be "
        "slower than its wall time here.",
        "",
        "The doctor tunes its engine to the trace's size (last column; `doctor_tuning.md` "
        "measures each tuning on traces of several sizes).",
    ]
    OUT_MD.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
