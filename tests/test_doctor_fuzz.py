"""The doctor on a fuzz corpus made from a real trace: what real Kineto files can hold that the
importer reads badly, or not at all.

Every mutated copy is derived here, in the test's folder, from one small vendored reference
trace (a100-simple-add: 79 kernels, ac2g flows, 0.3 MB of JSON); none is written by hand. For
each, the doctor either refuses the file with one line naming it (exit status 2, no traceback),
or reports on it with a trust line that names the problem; no run hangs (a timeout), and no
finding whose numbers moved from the intact trace's is presented without a trust line that
weakens it or a detector left out. The doctor runs in-process through its command line's
``main`` (no interpreter start per case); two runs of the real command check the exit status
and stderr a user sees.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators.doctor.__main__ import main
from tests import reference_traces as ref
from tests.doctor_cli import run_doctor

BASE = ref.A100_ADD
#: The first value past a signed 64-bit integer: an unsigned 64-bit id there (Kineto's ids are
#: uint64 in places) no longer fits the importer's int64.
INT64_END = 1 << 63


def _dump(doc: dict[str, Any]) -> bytes:
    # Python writes NaN and Infinity as bare literals, as a C++ writer printing doubles may.
    return json.dumps(doc).encode()


def _events(doc: dict[str, Any], cat: str | None = None) -> list[dict[str, Any]]:
    return [e for e in doc["traceEvents"] if cat is None or e.get("cat") == cat]


def ids_overflow(doc: dict[str, Any], raw: bytes) -> bytes:
    """Every id the importer reads as an integer moved past int64 (uint64 values)."""
    for e in _events(doc):
        args = e.get("args") or {}
        for key in ("correlation", "External id"):
            if isinstance(args.get(key), int):
                args[key] += INT64_END
        for key in ("pid", "tid", "id"):
            if isinstance(e.get(key), int) and e[key] >= 0:
                e[key] += INT64_END
    return _dump(doc)


def names_not_utf8(doc: dict[str, Any], raw: bytes) -> bytes:
    """Bytes that are not UTF-8 inside the operators' names."""
    return raw.replace(b'"name": "aten::', b'"name": "aten::\xff\xfe\xc3(')


def unescaped_quotes(doc: dict[str, Any], raw: bytes) -> bytes:
    """A quote inside a name, unescaped: the JSON breaks there."""
    return raw.replace(b'"name": "aten::add', b'"name": "aten::"add', 3)


def nan_infinity(doc: dict[str, Any], raw: bytes) -> bytes:
    """NaN and Infinity literals in the kernels' ts and dur."""
    for n, e in enumerate(_events(doc, "kernel")):
        if n % 2:
            e["ts"] = float("nan")
        else:
            e["dur"] = float("inf")
    return _dump(doc)


def pid_tid_twice(doc: dict[str, Any], raw: bytes) -> bytes:
    """Each kernel states its pid and tid twice, the second time the CPU thread's."""
    cpu = _events(doc, "cpu_op")[0]
    text = _dump(doc)
    again = f', "pid": {cpu["pid"]}, "tid": {cpu["tid"]}'.encode()
    return re.sub(
        rb'("cat": "kernel", "name": "(?:[^"\\]|\\.)*", "pid": -?\d+, "tid": -?\d+)',
        lambda m: m.group(1) + again,
        text,
    )


def pid_tid_missing(doc: dict[str, Any], raw: bytes) -> bytes:
    """Every other complete event without its pid, the others without their tid."""
    for n, e in enumerate(e for e in _events(doc) if e.get("ph") == "X"):
        e.pop("pid" if n % 2 else "tid", None)
    return _dump(doc)


def shuffled(doc: dict[str, Any], raw: bytes) -> bytes:
    """The events in a random order (a fixed seed): the importer sorts them."""
    random.Random(0).shuffle(doc["traceEvents"])
    return _dump(doc)


def empty_events(doc: dict[str, Any], raw: bytes) -> bytes:
    """The header, and an empty traceEvents."""
    doc["traceEvents"] = []
    return _dump(doc)


def truncated_json(doc: dict[str, Any], raw: bytes) -> bytes:
    return raw[: len(raw) * 2 // 3]


def truncated_gzip(doc: dict[str, Any], raw: bytes) -> bytes:
    packed = gzip.compress(raw)
    return packed[: len(packed) * 2 // 3]


def ranks_merged(doc: dict[str, Any], raw: bytes) -> bytes:
    """The trace and a second rank of the same program in one file: the second on the next GPU,
    in another process, 250 µs later, with the same CUPTI correlation (and flow) ids."""
    other = copy.deepcopy(doc["traceEvents"])
    devices = len(doc.get("deviceProperties") or [])
    for e in other:
        pid = e.get("pid")
        if isinstance(pid, int):
            # GPUs are pids 0..n-1 (their index), host processes the OS's pids.
            e["pid"] = (pid + 1) % devices if pid < devices else pid + 1
        args = e.get("args") or {}
        if isinstance(args.get("device"), int):
            args["device"] = (args["device"] + 1) % devices
        if isinstance(e.get("ts"), int | float):
            e["ts"] += 250
    doc["traceEvents"] += other
    return _dump(doc)


class Case:
    """One mutation: how to make it, and what the doctor must do with it: refuse the file
    (``error``: a pattern of its reason) or report on it with the trust line ``trust``."""

    def __init__(
        self,
        make: Callable[[dict[str, Any], bytes], bytes],
        *,
        error: str | None = None,
        trust: str | None = None,
        suffix: str = ".json",
    ):
        self.make, self.error, self.trust, self.suffix = make, error, trust, suffix


CASES = {
    "ids-overflow-int64": Case(ids_overflow, trust="ids-overflow"),
    "names-not-utf8": Case(names_not_utf8, trust="not-utf8"),
    "unescaped-quotes": Case(unescaped_quotes, error="could not load the trace.*JSON"),
    "nan-infinity-in-ts-dur": Case(nan_infinity, error="could not load the trace.*number"),
    "pid-tid-twice": Case(pid_tid_twice, trust="pid-tid-twice"),
    "pid-tid-missing": Case(pid_tid_missing, trust="no-pid-tid"),
    # Not a problem: the report is the intact trace's (checked below), with no new trust line.
    "events-shuffled": Case(shuffled),
    "empty-trace-events": Case(empty_events, error="contains no events"),
    "truncated-json": Case(truncated_json, error="could not be read to the end"),
    "truncated-gzip": Case(truncated_gzip, error="could not be read to the end", suffix=".json.gz"),
    "ranks-merged-correlations-collide": Case(ranks_merged, trust="shared-correlations"),
}

#: The most an error line may hold: one readable line, whatever the engine quoted.
ERROR_LINE_MAX = 600


@pytest.fixture(scope="module")
def raw() -> bytes:
    return gzip.decompress(BASE.read_bytes())


def _doctor(trace: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The command line's main, in this process: its exit status and its stderr."""
    capsys.readouterr()
    status = main([str(trace), "--format", "json", "-o", str(out), "-q"])
    return status, capsys.readouterr().err


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report on the unmutated trace."""
    out = tmp_path_factory.mktemp("intact") / "report.json"
    assert main([str(BASE), "--format", "json", "-o", str(out), "-q"]) == 0
    return json.loads(out.read_text())[0]


def _make(case_id: str, raw: bytes, folder: Path) -> Path:
    case = CASES[case_id]
    trace = folder / f"{case_id}{case.suffix}"
    trace.write_bytes(case.make(json.loads(raw), raw))
    assert trace.read_bytes() != raw, "the mutation changed nothing"
    return trace


def _seen(report: dict[str, Any]) -> dict[str, str]:
    return {f["id"]: f["seen"] for f in report["findings"]}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case_id", list(CASES))
def test_the_doctor_names_what_is_wrong_with_a_mutated_trace(
    case_id: str,
    raw: bytes,
    intact: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = CASES[case_id]
    trace = _make(case_id, raw, tmp_path)
    out = tmp_path / "report.json"
    status, err = _doctor(trace, out, capsys)
    if case.error:
        # One line naming the file and why; no report.
        assert status == 2, err
        assert err.startswith(f"error: {trace}: ") and err.count("\n") == 1, err
        assert re.search(case.error, err), err
        assert len(err) <= ERROR_LINE_MAX, f"{len(err)} characters: {err[:300]}"
        assert not out.exists()
        return
    assert status == 0 and err == "", err
    report = json.loads(out.read_text())[0]
    trust = {line["id"]: line for line in report["trust"]}
    if case.trust is None:
        # Nothing is wrong: the same report as the intact trace's.
        assert sorted(trust) == sorted(line["id"] for line in intact["trust"])
        assert _seen(report) == _seen(intact)
        return
    line = trust.get(case.trust)
    assert line is not None, f"no {case.trust} line in {sorted(trust)}"
    assert line["level"] == "caution" and line["text_ja"], line
    # No number presented as right: a finding that says something else than on the intact
    # trace is one a caution line weakens, and a detector gone silent or left out is named.
    doubted = {
        d
        for lim in report["trust"]
        if lim["level"] == "caution"
        for d in lim["detectors_weakened"] + lim["detectors_skipped"]
    }
    before = _seen(intact)
    moved = {d for d, seen in _seen(report).items() if before.get(d) != seen}
    moved |= set(before) - set(_seen(report))
    assert moved <= doubted, f"changed without a trust line: {sorted(moved - doubted)}"


def test_the_command_refuses_a_broken_trace_in_one_line(raw: bytes, tmp_path: Path) -> None:
    """The engine quotes the rest of the JSON after a bad number: the line stays short."""
    trace = _make("nan-infinity-in-ts-dur", raw, tmp_path)
    result = run_doctor(str(trace))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    error = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert error == [error[0]] and str(trace) in error[0], result.stderr
    assert len(error[0]) <= ERROR_LINE_MAX
    assert result.stdout == ""


def test_the_command_reports_merged_ranks_in_its_trust_gate(raw: bytes, tmp_path: Path) -> None:
    trace = _make("ranks-merged-correlations-collide", raw, tmp_path)
    result = run_doctor(str(trace), "-q")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    gate = result.stdout.split("Can I trust this trace?", 1)[1]
    assert "CUPTI correlation ids are each on more than one launch" in gate
