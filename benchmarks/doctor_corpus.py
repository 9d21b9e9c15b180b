"""The doctor's findings on a corpus of other projects' traces, from one run to the next.

Usage::

    python -m generators.doctor -q --format json -o before.json TRACE...   # at the old commit
    python -m generators.doctor -q --format json -o after.json TRACE...    # at the new one
    python benchmarks/doctor_corpus.py before.json [between.json ...] after.json

prints one Markdown table row per trace of the last run: the findings (detector id and
severity) of each run, named by its file's stem, and the trust gate's cautions of the last; then
the totals of each run. Which findings are false is a reader's judgement, written beside the
table in ``benchmarks/doctor_corpus.md``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _kept(report: dict) -> list[dict]:
    # The profiler's own marks are how to read the trace, not a problem in it.
    return [f for f in report["findings"] if f["id"] != "profiler-artefacts"]


def _findings(report: dict) -> str:
    parts = [f"{f['id']} ({f['severity'][0]})" for f in _kept(report)]
    return ", ".join(parts) or "none"


def table(runs: dict[str, list[dict]]) -> str:
    names = list(runs)
    by_name = {run: {Path(r["trace"]).name: r for r in reports} for run, reports in runs.items()}
    last = runs[names[-1]]
    rows = [
        "| trace | device | "
        + " | ".join(f"findings: {n}" for n in names)
        + " | trust gate: cautions |",
        "| --- | --- | " + " | ".join("---" for _ in names) + " | --- |",
    ]
    for report in last:
        name = Path(report["trace"]).name
        cells = []
        for run in names:
            old = by_name[run].get(name)
            cells.append(_findings(old) if old else "(not run)")
        cautions = ", ".join(t["id"] for t in report.get("trust", []) if t["level"] == "caution")
        rows.append(
            f"| `{name}` | {report.get('device') or 'none'} | "
            + " | ".join(cells)
            + f" | {cautions or '—'} |"
        )
    rows.append("")
    rows.append("| run | traces | findings | warnings |")
    rows.append("| --- | ---: | ---: | ---: |")
    for run in names:
        kept = [f for r in runs[run] for f in _kept(r)]
        warnings = sum(1 for f in kept if f["severity"] == "warning")
        rows.append(f"| {run} | {len(runs[run])} | {len(kept)} | {warnings} |")
    return "\n".join(rows) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    runs = {Path(a).stem: json.loads(Path(a).read_text(encoding="utf-8")) for a in argv}
    sys.stdout.write(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
