"""The doctor's findings on a corpus of other projects' traces, before and after a change.

Usage::

    python -m generators.doctor -q --format json -o before.json TRACE...   # at the old commit
    python -m generators.doctor -q --format json -o after.json TRACE...    # at the new one
    python benchmarks/doctor_corpus.py before.json after.json

prints one Markdown table row per trace: the findings (detector id and severity) before and
after, and the trust gate's cautions after. Which findings are false is a reader's judgement,
written beside the table in ``benchmarks/doctor_corpus.md``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _findings(report: dict) -> str:
    parts = [
        f"{f['id']} ({f['severity'][0]})"
        for f in report["findings"]
        if f["id"] != "profiler-artefacts"
    ]
    return ", ".join(parts) or "none"


def table(before: list[dict], after: list[dict]) -> str:
    by_name = {Path(r["trace"]).name: r for r in before}
    rows = [
        "| trace | device (after) | findings before | findings after "
        "| trust gate: cautions after |",
        "| --- | --- | --- | --- | --- |",
    ]
    for report in after:
        name = Path(report["trace"]).name
        old = by_name.get(name)
        cautions = ", ".join(t["id"] for t in report.get("trust", []) if t["level"] == "caution")
        rows.append(
            f"| `{name}` | {report.get('device') or 'none'} | "
            f"{_findings(old) if old else '(not run)'} | {_findings(report)} | {cautions or '—'} |"
        )
    return "\n".join(rows) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = (json.loads(Path(a).read_text(encoding="utf-8")) for a in argv)
    sys.stdout.write(table(before, after))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
