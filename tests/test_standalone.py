"""The repository stands alone: nothing it holds reads or names a place outside it.

A clone into an empty folder must pass `make test`, so no tracked file may point at a sibling
folder (``../shared``), at the machine that built it (home folders, interpreter installs), or climb
above the repository root with ``Path(__file__).parents[N]``. The reference traces the tests need
are vendored in ``tests/data/reference-traces/``, byte-identical to their sources (checked here
against the checksums their README records).
"""

from __future__ import annotations

import gzip
import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from tests.reference_traces import REFERENCE_TRACES

REPO = Path(__file__).resolve().parent.parent

#: Text that names a place outside the repository. Each is a mistake in any tracked file.
OUTSIDE = re.compile(
    r"""
      \.\./shared\b                      # the sibling folder some machines happen to have
    | ["']shared["']\s*/                 # ... spelled as pathlib parts
    | \b(?:REPO|REPO_ROOT|ROOT)\.parent\b  # one level above the repository
    | (?<![\w.])/(?:work|root|home|Users|mnt|srv)/\w  # absolute folders of a build machine
    | \.pyenv\b | /site-packages/        # an interpreter's install
    """,
    re.VERBOSE,
)
#: Text that every match of OUTSIDE, PARENTS or PARENT_CHAIN contains: a file holding none of it
#: (most of the committed traces' 700 MB of JSON) cannot match, and a plain search for these is
#: far faster than the patterns themselves.
LITERALS = (
    "../shared",
    "shared'",
    'shared"',
    "REPO.parent",
    "ROOT.parent",
    *(f"/{folder}/" for folder in ("work", "root", "home", "Users", "mnt", "srv")),
    ".pyenv",
    "/site-packages/",
    "Path(__file__)",
)
#: ``Path(__file__).resolve().parents[N]`` and friends: checked against the file's depth.
PARENTS = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?\.parents\[(\d+)\]")
PARENT_CHAIN = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?((?:\.parent)+)")


def tracked_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    return [REPO / name for name in out.split("\0") if name]


def read_text(path: Path) -> str | None:
    """The file's text (gzip inflated), or None for binary files."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def may_point_outside(text: str) -> bool:
    """Whether ``text`` holds any of the LITERALS (if not, outside_references finds nothing)."""
    return any(literal in text for literal in LITERALS)


def outside_references(path: Path, text: str) -> list[str]:
    """Every place in ``text`` (from ``path``, inside the repository) that points outside it."""
    found = [f"{path.name}: {m.group(0)!r}" for m in OUTSIDE.finditer(text)]
    depth = len(path.relative_to(REPO).parts) - 1  # folders between the repository and the file
    for m in PARENTS.finditer(text):
        if int(m.group(1)) > depth:  # parents[depth] is the repository root
            found.append(f"{path.name}: {m.group(0)} climbs above the repository root")
    for m in PARENT_CHAIN.finditer(text):
        if m.group(1).count(".parent") > depth + 1:
            found.append(f"{path.name}: {m.group(0)} climbs above the repository root")
    return found


def test_no_tracked_file_points_outside_the_repository() -> None:
    problems: list[str] = []
    for path in tracked_files():
        if path == Path(__file__).resolve() or not path.is_file():
            continue
        if path.is_relative_to(REFERENCE_TRACES):
            continue  # other projects' traces, vendored unchanged: their paths are their machines'

        text = read_text(path)
        if text is not None and may_point_outside(text):
            problems += [f"{path.relative_to(REPO)}: {p}" for p in outside_references(path, text)]
    assert not problems, "files that point outside the repository:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "line",
    [
        'REFERENCE = REPO.parent / "shared" / "reference-traces"',
        "see ../shared/reference-traces/",
        "python /work/main/generators/tp.py",
        "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch",
        "tp = Path(__file__).resolve().parents[3] / 'x'",
        "tp = Path(__file__).parent.parent.parent.parent / 'x'",
        "data = Path('..') / 'shared' / 'traces'",
        'data = REPO_ROOT.parent / "x"',
        *(f"open('/{folder}/alice/x')" for folder in ("home", "Users", "mnt", "srv", "root")),
    ],
)
def test_the_check_finds_outside_references(line: str) -> None:
    fake = REPO / "tests" / "browser" / "example.py"  # parents[2] is the root, parents[3] outside
    assert outside_references(fake, line)
    assert may_point_outside(line), "the quick search would skip a file holding this"


def test_the_check_allows_paths_inside_the_repository() -> None:
    inside = REPO / "docs" / "hooks" / "artifacts.py"
    text = (
        "REPO_ROOT = Path(__file__).resolve().parents[2]\n"
        "HERE = Path(__file__).parent.parent\n"
        "[link](../part-1/01-first-trace.md) and tests/data/critical_path/x.json.gz\n"
    )
    assert outside_references(inside, text) == []


def recorded_checksums() -> dict[str, str]:
    """``file -> sha256`` from the checksum table in the reference traces' README."""
    readme = (REFERENCE_TRACES / "README.md").read_text()
    return dict(
        (name, digest)
        for digest, name in re.findall(r"^\|\s*`([0-9a-f]{64})`\s*\|\s*`([^`]+)`", readme, re.M)
    )


def test_reference_traces_are_vendored_unchanged() -> None:
    recorded = recorded_checksums()
    present = {p.name for p in REFERENCE_TRACES.glob("*.json.gz")}
    assert present and set(recorded) == present
    for name, digest in recorded.items():
        assert hashlib.sha256((REFERENCE_TRACES / name).read_bytes()).hexdigest() == digest, name
    for licence in ("LICENSE.HolisticTraceAnalysis", "LICENSE.TraceLens"):
        assert (REFERENCE_TRACES / licence).is_file()
