"""Bad input fails at open time with a message naming the file, and leaves no engine behind."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from generators import tp_engine
from generators.tp import TraceOpenError, close_engines, engine_description, open_trace
from tests.conftest import REPO
from tests.reference_traces import A100_ADD, V100

SMALL = A100_ADD
BIG = V100


def _children() -> set[int]:
    """Pids of this process's live (non-zombie) children."""
    me = os.getpid()
    out = set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == me and fields[0] != "Z":
            out.add(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def no_leftover_engines():
    """Checks that the test starts no engine process that outlives it."""
    close_engines()
    before = _children()
    yield
    assert _children() - before == set(), "an engine process was left behind"


@pytest.fixture(scope="module")
def raw_json() -> bytes:
    return gzip.decompress(SMALL.read_bytes())


def _expect_open_error(path: Path, match: str, **kwargs) -> TraceOpenError:
    kwargs.setdefault("engine", "wasm")
    with pytest.raises(TraceOpenError, match=match) as err, open_trace(path, **kwargs):
        pytest.fail("open_trace should have failed")
    assert str(path) in str(err.value)
    return err.value


def _json_cut(raw: bytes) -> bytes:
    return raw[: len(raw) // 2]


def _gzip_cut(raw: bytes) -> bytes:
    return gzip.compress(raw)[:6000]


# case -> the bad file's name, its bytes (made from a real trace's JSON where callable; None:
# nothing is written; "dir": the test's folder itself, named "."), and what the error must say.
BAD_INPUTS = {
    "missing-file": ("nope.json.gz", None, "no such file"),
    "directory": (".", "dir", "not a regular file"),
    "empty-file": ("empty.json", b"", "empty"),
    "truncated-json": ("truncated.json", _json_cut, "truncated|could not be read to the end"),
    "truncated-gzip": ("truncated.json.gz", _gzip_cut, "truncated|could not be read to the end"),
    "gzip-that-fails-to-inflate": (
        "corrupt.json.gz",
        b"\x1f\x8b\x08\x00" + b"\xff" * 4000,
        "cannot be inflated",
    ),
    "text-not-a-trace": (
        "notes.txt",
        b"these are some notes, not a trace\n" * 20,
        "not a trace",
    ),
    "binary-not-a-trace": (
        "image.png",
        b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8,
        "not a trace",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_refused_by_name(case: str, tmp_path, raw_json, no_leftover_engines):
    """Each kind of bad file fails at open time with its own reason and the file's path."""
    name, content, reason = BAD_INPUTS[case]
    path = tmp_path / name
    if callable(content):
        path.write_bytes(content(raw_json))
    elif isinstance(content, bytes):
        path.write_bytes(content)
    _expect_open_error(path, reason)


def test_trace_with_no_events(tmp_path, no_leftover_engines):
    p = tmp_path / "none.json"
    p.write_text(json.dumps({"traceEvents": [], "schemaVersion": 1}))
    _expect_open_error(p, "no events")
    with open_trace(p, engine="wasm", allow_empty=True, reuse=False) as tp:
        assert next(iter(tp.query("SELECT COUNT(*) AS n FROM slice"))).n == 0


def test_trace_too_large_for_the_engine(no_leftover_engines):
    # A heap cap just above what the engine needs to start, below what this
    # trace needs: the same failure as a multi-GB trace, without making one.
    err = _expect_open_error(BIG, "too large", max_memory_mb=80)
    assert "out of memory" in str(err)


def test_engine_killed_after_exception_in_body(no_leftover_engines):
    with pytest.raises(ZeroDivisionError), open_trace(SMALL, engine="wasm") as tp:
        pid = tp.engine.pid
        assert _alive(pid)
        _ = 1 / 0
    assert not _alive(pid)


def test_no_engine_left_after_ctrl_c(tmp_path):
    script = textwrap.dedent(
        f"""
        import signal, sys, time
        from pathlib import Path
        from generators.tp import open_trace
        # A shell starts background jobs with SIGINT ignored, and Python then never raises
        # KeyboardInterrupt: restore the terminal's Ctrl-C behaviour this test is about.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with open_trace(Path({str(SMALL)!r}), engine="wasm") as tp:
            print(tp.engine.pid, flush=True)
            time.sleep(60)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip().isdigit(), proc.stderr.read() if proc.stderr else line
    engine_pid = int(line)
    assert _alive(engine_pid)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    assert b"KeyboardInterrupt" in (proc.stderr.read() if proc.stderr else b"")
    deadline = time.monotonic() + 5
    while _alive(engine_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(engine_pid)


def test_no_engine_left_when_python_is_killed():
    script = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from generators.tp import open_trace
        with open_trace(Path({str(SMALL)!r}), engine="wasm") as tp:
            print(tp.engine.pid, flush=True)
            time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    engine_pid = int(proc.stdout.readline())
    proc.kill()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 5
    while _alive(engine_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(engine_pid)


# --------------------------------------------------------------- native route


def test_missing_binary_is_refused(tmp_path, no_leftover_engines):
    bad = tmp_path / "trace_processor_shell"
    err = _expect_open_error(SMALL.resolve(), "binary not found", bin_path=str(bad))
    assert str(bad) in str(err)


def test_binary_that_is_not_executable_is_refused(tmp_path, no_leftover_engines):
    bad = tmp_path / "trace_processor_shell"
    bad.write_text("#!/bin/sh\necho 'Perfetto v52.0'\n")
    bad.chmod(0o644)
    err = _expect_open_error(SMALL, "not executable", bin_path=str(bad))
    assert str(bad) in str(err)


def test_binary_that_is_not_a_trace_processor_is_refused(tmp_path, no_leftover_engines):
    bad = tmp_path / "trace_processor_shell"
    bad.write_text("#!/bin/sh\necho 'hello from something else'\n")
    bad.chmod(0o755)
    err = _expect_open_error(SMALL, "not a Perfetto trace processor", bin_path=str(bad))
    assert str(bad) in str(err)


def test_bad_binary_from_environment_is_refused(tmp_path, monkeypatch):
    bad = tmp_path / "tp"
    monkeypatch.delenv("PROFILING_GUIDE_TP_ENGINE", raising=False)  # tests pin wasm by default
    monkeypatch.setenv("PROFILING_GUIDE_TP_BIN", str(bad))
    with pytest.raises(tp_engine.EngineError, match=str(bad)):
        engine_description()
    with pytest.raises(TraceOpenError, match=str(bad)), open_trace(SMALL):
        pass


def test_native_route_runs_a_binary_speaking_the_shell_protocol(tmp_path, no_leftover_engines):
    # A stand-in for trace_processor_shell: same command line (`--version`,
    # `-D --http-port N`, `--add-sql-package`), served by the WebAssembly build.
    shim = tmp_path / "trace_processor_shell"
    shim.write_text(
        "#!/bin/sh\n"
        f"exec {tp_engine.find_node()} {tp_engine.SERVER_JS} "
        f'--dist {tp_engine.find_wasm_dist()} "$@"\n'
    )
    shim.chmod(0o755)
    desc = engine_description(bin_path=str(shim))
    assert desc["engine"] == "native"
    assert desc["version"].startswith("v52.")
    with open_trace(SMALL, bin_path=str(shim)) as tp:
        assert tp.engine.kind == "native"
        n = next(iter(tp.query("SELECT COUNT(*) AS n FROM slice WHERE category = 'kernel'"))).n
        assert n == 79
