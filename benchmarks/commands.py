"""Whole-process timings of the commands people run: several runs each, medians reported.

    .venv/bin/python benchmarks/commands.py            # all commands
    .venv/bin/python benchmarks/commands.py --only site derive

Writes benchmarks/commands.json and benchmarks/commands.md. "serve (cold)" starts `make serve`
with a brand-new virtual environment and measures until the site answers on port 8000;
"serve (warm)" does the same with the environment already installed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT_JSON = REPO / "benchmarks" / "commands.json"
OUT_MD = REPO / "benchmarks" / "commands.md"
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def timed(cmd: list[str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(cmd, cwd=REPO, env=ENV, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-2000:]}")
    return time.perf_counter() - started


def serve_start(venv: Path) -> float:
    """Seconds from `make serve` to the first successful page load."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        ["make", "serve", f"VENV={venv}"],
        cwd=REPO,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = started + 900
        while time.perf_counter() < deadline:
            try:
                with urllib.request.urlopen("http://127.0.0.1:8000/", timeout=2) as response:
                    if response.status == 200:
                        return time.perf_counter() - started
            except OSError:
                time.sleep(0.2)
        raise TimeoutError("make serve did not answer within 15 minutes")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


#: What each fresh-clone run of the suite reported: its summary line and its slowest tests.
CLONE_RUNS: list[dict[str, object]] = []


def suite_report(output: str) -> dict[str, object]:
    """The summary line of pytest's output and its ``--durations`` list (slowest first)."""
    lines = output.splitlines()
    summary = next((ln.strip("= ") for ln in reversed(lines) if " passed" in ln), "")
    slowest: list[str] = []
    if any("slowest" in ln and "durations" in ln for ln in lines):
        start = next(i for i, ln in enumerate(lines) if "slowest" in ln and "durations" in ln)
        for line in lines[start + 1 :]:
            if not line[:1].isdigit():
                break
            slowest.append(" ".join(line.split()))
    return {"summary": summary, "slowest": slowest}


def test_in_fresh_clone() -> float:
    """Seconds of `make test` in a fresh clone of the committed tree, in an empty folder: the
    virtual environment made and installed from the package cache, then every test."""
    folder = Path(tempfile.mkdtemp(prefix="clone-"))
    try:
        clone = folder / "guide"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        started = time.perf_counter()
        result = subprocess.run(
            ["make", "test"], cwd=clone, env=ENV, capture_output=True, text=True, check=False
        )
        took = time.perf_counter() - started
        if result.returncode != 0:
            sys.exit(
                f"make test failed in {clone}:\n{result.stdout[-4000:]}\n{result.stderr[-2000:]}"
            )
        print(result.stdout.strip().splitlines()[-1], file=sys.stderr)
        CLONE_RUNS.append(suite_report(result.stdout))
        return took
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure(name: str, runs: int) -> list[float]:
    py = str(REPO / ".venv" / "bin" / "python")
    if name == "site":
        return [
            timed([py, "-m", "mkdocs", "build", "--strict", "-d", tempfile.mkdtemp()])
            for _ in range(runs)
        ]
    if name == "derive":
        return [timed([py, "-m", "generators", "derive"]) for _ in range(runs)]
    if name == "test":
        return [timed(["make", "test"]) for _ in range(runs)]
    if name == "test-clone":
        return [test_in_fresh_clone() for _ in range(runs)]
    if name == "serve-warm":
        return [serve_start(REPO / ".venv") for _ in range(runs)]
    if name == "serve-cold":
        times = []
        for _ in range(runs):
            venv = Path(tempfile.mkdtemp(prefix="venv-cold-")) / "venv"
            try:
                times.append(serve_start(venv))
            finally:
                shutil.rmtree(venv.parent, ignore_errors=True)
        return times
    raise ValueError(name)


COMMANDS = {
    "site": ("mkdocs build --strict", 5),
    "derive": ("make derive (python -m generators derive)", 2),
    "serve-warm": ("make serve, environment installed, until the first page loads", 3),
    "serve-cold": ("make serve on a fresh virtual environment, until the first page loads", 2),
    "test": ("make test (the whole suite)", 2),
    "test-clone": (
        "make test in a fresh clone (virtual environment installed, then every test)",
        3,
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", choices=sorted(COMMANDS), default=sorted(COMMANDS))
    parser.add_argument("--runs", type=int, help="runs per command (default: each one's own)")
    args = parser.parse_args()
    results = json.loads(OUT_JSON.read_text()) if OUT_JSON.exists() else {}
    results.setdefault("commands", {})
    for name in args.only:
        label, runs = COMMANDS[name]
        runs = args.runs or runs
        print(f"{name}: {runs} runs", file=sys.stderr)
        times = measure(name, runs)
        results["commands"][name] = {
            "what": label,
            "runs_s": [round(t, 2) for t in times],
            "median_s": round(statistics.median(times), 2),
            "measured": time.strftime("%Y-%m-%d"),
            "command": "python benchmarks/commands.py " + " ".join(sys.argv[1:]),
        }
        if name == "test-clone" and CLONE_RUNS:
            results["commands"][name]["last_run"] = CLONE_RUNS[-1]
        write(results)
    print(OUT_MD.read_text())


def write(results: dict) -> None:
    """Write the JSON and the Markdown table (after every command, so a failure keeps the rest)."""
    results["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }
    results["command"] = "python benchmarks/commands.py " + " ".join(sys.argv[1:])
    OUT_JSON.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    lines = [
        "# Command timings",
        "",
        f"Made by `python benchmarks/commands.py` on {results['machine']['cpus']} cores, "
        f"Python {results['machine']['python']}. Whole-process wall time; median of the runs; "
        "each row names the command line that measured it.",
        "",
        "| command | median | runs | measured by |",
        "| --- | ---: | --- | --- |",
    ]
    for entry in results["commands"].values():
        runs = ", ".join(f"{t:.1f}" for t in entry["runs_s"])
        made = entry.get("command", results["command"]).strip()
        when = entry.get("measured", "")
        lines.append(f"| {entry['what']} | {entry['median_s']:.1f} s | {runs} | `{made}` {when} |")
    for name in ("test-clone", "ci-clone"):
        last = results["commands"].get(name, {}).get("last_run")
        if not last:
            continue
        lines += [
            "",
            f"## The suite's last fresh-clone run ({name})",
            "",
            f"`{last['summary']}`. Its slowest tests (pytest's `--durations`; `make test` runs "
            "them in two worker processes, each group of tests whole in one of them (the tours of "
            "the site in one, the Perfetto hand-off in the other, at first), beside the background "
            "jobs of tests/background.py: a test that waits for its job shows only what was left "
            "of it, and every test shares the two cores with the rest):",
            "",
            *(f"- `{line}`" for line in last["slowest"]),
        ]
    OUT_MD.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
