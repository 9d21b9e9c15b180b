"""The start page's script (docs/downloads/first_trace.py) runs as a reader would run it.

The reader downloads one file and runs it with nothing but torch installed, so the test runs it
the same way: a fresh process, in an empty folder, on the CPU. It checks what the start page
says the script writes: the profiler's table, and a trace with three kept steps of the matmul
and bias add.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "docs" / "downloads" / "first_trace.py"


def test_first_trace_script_writes_a_table_and_a_trace(tmp_path: Path) -> None:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # the CPU path, as on a laptop
    run = subprocess.run(
        [sys.executable, str(SCRIPT)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Self CPU time total" in run.stdout and "aten::mm" in run.stdout
    trace = tmp_path / "first_trace.json.gz"
    assert "Wrote first_trace.json.gz" in run.stdout and trace.is_file()
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    names = Counter(e.get("name") for e in events if e.get("ph") == "X")
    steps = sorted(n for n in names if str(n).startswith("ProfilerStep#"))
    assert steps == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    assert names["matmul_add"] == 3 and names["aten::mm"] == 3 and names["aten::add"] == 3


def test_script_is_short_and_needs_only_torch() -> None:
    text = SCRIPT.read_text()
    code = [line for line in text.splitlines() if line.strip()]
    assert len(code) <= 40, "the start page promises a script of about thirty lines"
    imports = {
        line.split()[1].split(".")[0] for line in code if line.startswith(("import", "from"))
    }
    assert imports == {"torch"}
