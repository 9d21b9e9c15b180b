"""``make test`` runs in xdist worker processes with ``--dist loadgroup``: every test file is one
group (tests/conftest.py), so that no trace, site or tour is opened by two workers. xdist groups
by a suffix it adds to each test's id; with a pytest that stores ids where xdist cannot add it,
the groups are silently spread over the workers and every test still passes, only slower. This
runs two small files the way ``make test`` does and checks that each ran whole in one worker."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILES = ("tests/test_env.py", "tests/test_kernel_names.py")
#: As the Makefile's test target runs the suite (two workers, groups in collection order).
WORKERS = ("-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder")


def test_each_test_file_runs_whole_in_one_worker() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *WORKERS, "-v", "-p", "no:cacheprovider", *FILES],
        cwd=REPO,
        env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    workers: dict[str, set[str]] = defaultdict(set)
    for worker, test_id in re.findall(r"^\[(gw\d+)\] .*?PASSED (.*?) *$", result.stdout, re.M):
        assert test_id.endswith(f"@{test_id.split('::')[0]}"), f"not grouped by file: {test_id}"
        workers[test_id.split("::")[0]].add(worker)
    assert set(workers) == set(FILES), result.stdout[-3000:]
    assert all(len(ran_in) == 1 for ran_in in workers.values()), dict(workers)
