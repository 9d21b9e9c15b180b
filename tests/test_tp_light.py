"""The one-shot path of the trace processor: an engine started early, the light client, the
engine's tuning.

``python -m generators.doctor`` starts its engine before its imports (tp_launch.start_early;
prestart() does the same for code that has imported generators.tp), queries it with
:class:`generators.tp.LightTraceProcessor` instead of the perfetto package, and runs the
WebAssembly engine without its optimising tier, in its 32-bit build, with the trace processor's
default ftrace setting. Each must give the same answers as the ordinary path.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generators import tp_launch
from generators.doctor.tuning import TIER_UP_MIN_JSON_BYTES, engine_options, json_bytes
from generators.tp import (
    LightTraceProcessor,
    QueryError,
    close_engines,
    engine_pids,
    open_trace,
    prestart,
    rows_of,
)
from tests.reference_traces import A100_TRITON, H100_BERT, V100, all_traces

REPO = Path(__file__).resolve().parents[1]

#: Every kind of value a query can return, and results of several batches.
QUERIES = [
    "SELECT 1 AS a, 2.5 AS b, 'x' AS c, NULL AS d, x'00ff' AS e, -5 AS f, "
    "9223372036854775807 AS g, -9223372036854775808 AS h, '' AS i, 'é中' AS j, 1e300 AS k",
    "SELECT * FROM slice ORDER BY id",
    "SELECT * FROM args ORDER BY arg_set_id, key",
    "SELECT name, ts FROM slice WHERE 0",
    "SELECT * FROM thread ORDER BY utid",
    "INCLUDE PERFETTO MODULE guide.kineto; SELECT * FROM guide_kineto_launch_link ORDER BY 1, 2",
]
ONE_SHOT = {"ftrace_raw": True, "tier_up": False, "wasm": "32"}


def _baseline_only(args: list[str]) -> bool:
    return all(flag in args for flag in tp_launch.NO_TIER_UP_FLAGS)


def _answers(path: Path, **kwargs) -> list[tuple[list[str], list[list[tuple[object, str]]]]]:
    out = []
    with open_trace(path, reuse=False, **kwargs) as tp:
        # The tuning asked for is the one the engine runs with.
        assert _baseline_only(tp.engine.proc.args) is (kwargs.get("tier_up") is False)
        for sql in QUERIES:
            cols, rows = rows_of(tp, sql)
            out.append((cols, [[(v, type(v).__name__) for v in r] for r in rows]))
    return out


@pytest.mark.parametrize("path", [A100_TRITON, H100_BERT], ids=lambda p: p.name)
def test_light_client_and_tuned_engine_answer_as_the_perfetto_client(path: Path) -> None:
    reference = _answers(path)
    assert any(rows for _, rows in reference)
    assert _answers(path, client="light") == reference
    assert _answers(path, client="light", **ONE_SHOT) == reference


def test_light_client_reports_bad_sql_as_the_perfetto_client_does() -> None:
    messages = []
    for client in ("perfetto", "light"):
        with open_trace(A100_TRITON, client=client, reuse=False) as tp:
            with pytest.raises(Exception) as err:
                tp.query("SELECT no_such_column FROM slice")
            messages.append(str(err.value))
            if client == "light":
                assert isinstance(tp, LightTraceProcessor)
                assert isinstance(err.value, QueryError)
            # The engine is still usable after a rejected query.
            assert next(iter(tp.query("SELECT 7 AS n"))).n == 7
    assert messages[0] == messages[1]
    assert "no_such_column" in messages[0]


def test_prestarted_engine_is_the_one_open_trace_uses() -> None:
    close_engines()
    prestart(**ONE_SHOT)
    started = engine_pids()
    assert len(started) == 1
    prestart(**ONE_SHOT)  # one waiting engine per set of arguments
    assert engine_pids() == started
    with open_trace(A100_TRITON, client="light", **ONE_SHOT) as tp:
        assert tp.engine.pid == started[0]
        assert tp.engine.info["wasm"] == "trace_processor.wasm"  # the 32-bit build
    assert engine_pids() == started  # kept for reuse
    close_engines()
    assert engine_pids() == []


@pytest.mark.parametrize("path", [A100_TRITON, V100], ids=lambda p: p.name)
def test_engine_started_before_the_doctors_imports_is_the_one_it_uses(path: Path) -> None:
    """``python -m generators.doctor`` starts its engine with generators.tp_launch alone, before
    importing anything else: open_trace with the doctor's options must take over that process
    (same command line), not start a second one, for a small trace and for the V100 trace's
    15 MB of JSON, both with the baseline code only."""
    close_engines()
    options = engine_options(path)
    assert options["tier_up"] is False
    assert tp_launch.start_early(**options)
    (pid,) = engine_pids()
    with open_trace(path, client="light", **options) as tp:
        assert tp.engine.pid == pid
        assert _baseline_only(tp.engine.proc.args)
        assert next(iter(tp.query("SELECT COUNT(*) AS n FROM slice"))).n > 0
    assert engine_pids() == [pid]  # kept for reuse
    close_engines()
    assert engine_pids() == []


def test_unused_prestarted_engine_is_stopped() -> None:
    close_engines()
    prestart(**ONE_SHOT)
    (pid,) = engine_pids()
    close_engines()
    assert engine_pids() == []
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_engine_runs_without_optimising_tier_when_asked() -> None:
    with open_trace(A100_TRITON, client="light", reuse=False, **ONE_SHOT) as tp:
        cmdline = Path(f"/proc/{tp.engine.pid}/cmdline").read_bytes().split(b"\0")
    assert b"--liftoff-only" in cmdline
    with open_trace(A100_TRITON, client="light", reuse=False) as tp:
        cmdline = Path(f"/proc/{tp.engine.pid}/cmdline").read_bytes().split(b"\0")
    assert b"--liftoff-only" not in cmdline


def test_doctor_cli_finds_the_same_with_its_one_shot_engine() -> None:
    """The command line (prestart, light client, tuned engine) against examine() on a default
    engine, on every reference trace."""
    from generators.doctor.detectors import load_detectors
    from generators.doctor.examine import examine
    from generators.doctor.render import RENDERERS

    traces = all_traces()
    detectors = load_detectors()
    expected = []
    for path in traces:
        with open_trace(path) as tp:
            report = examine(tp, path, detectors)
        report.seconds = None
        report.key = f"t{len(expected) + 1}"
        expected.append(report)
    url = "http://127.0.0.1:8000/"
    want = RENDERERS["json"](expected, url)
    cmd = [sys.executable, "-m", "generators.doctor", *map(str, traces), "-q"]
    out = subprocess.run(
        [*cmd, "--format", "json", "--guide-url", url],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert _without_seconds(out) == _without_seconds(want)


def _without_seconds(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if '"seconds"' not in line)


def test_progress_through_a_trace_read_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """``open_trace(on_read=...)`` reports each chunk the engine took, up to the file's size; a
    trace read in many chunks holds the same events as one read whole."""
    import generators.tp as tp_module

    with open_trace(H100_BERT, client="light", reuse=False) as tp:
        whole = rows_of(tp, "SELECT COUNT(*), SUM(dur) FROM slice")[1]
    monkeypatch.setattr(tp_module, "PARSE_CHUNK_BYTES", 16 << 10)
    calls: list[tuple[int, int]] = []
    with open_trace(
        H100_BERT, client="light", reuse=False, on_read=lambda d, t: calls.append((d, t))
    ) as tp:
        assert rows_of(tp, "SELECT COUNT(*), SUM(dur) FROM slice")[1] == whole
    size = H100_BERT.stat().st_size
    assert len(calls) == -(-size // (16 << 10)) > 3
    assert [d for d, _ in calls] == sorted({d for d, _ in calls})  # strictly increasing
    assert calls[-1] == (size, size) and {t for _, t in calls} == {size}


def test_no_early_engine_where_a_native_binary_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the ``perfetto`` package's native binary cached, open_trace would use it (it starts
    in milliseconds): starting the WebAssembly engine early would be wasted work."""
    from generators import tp_launch

    close_engines()
    prebuilts = tmp_path / ".local" / "share" / "perfetto" / "prebuilts"
    monkeypatch.setattr(tp_launch, "perfetto_prebuilts", lambda: str(prebuilts))
    monkeypatch.setenv("PROFILING_GUIDE_TP_ENGINE", "auto")
    monkeypatch.delenv("PROFILING_GUIDE_TP_BIN", raising=False)
    assert tp_launch.start_early(tier_up=False, wasm="32")  # nothing cached: it starts
    close_engines()
    prebuilts.mkdir(parents=True)
    (prebuilts / "trace_processor_shell-0123456789abcdef.1234.tmp").write_bytes(b"")
    assert tp_launch.start_early(tier_up=False, wasm="32")  # a download under way: not cached
    close_engines()
    (prebuilts / "trace_processor_shell-0123456789abcdef").write_bytes(b"")
    assert not tp_launch.start_early(tier_up=False, wasm="32")
    # The doctor's default: the pinned WebAssembly engine, whatever is cached.
    assert tp_launch.start_early(tier_up=False, wasm="32", engine="wasm")
    close_engines()
    monkeypatch.setenv("PROFILING_GUIDE_TP_ENGINE", "wasm")  # forced: the cache does not matter
    assert tp_launch.start_early(tier_up=False, wasm="32")
    close_engines()
    assert engine_pids() == []


def test_the_command_line_for_each_tuning() -> None:
    default = tp_launch.wasm_command(sql_packages=[])
    assert not any(a.startswith("--wasm") or a.startswith("--liftoff") for a in default)
    baseline = tp_launch.wasm_command(sql_packages=[], tier_up=False, wasm="32")
    assert _baseline_only(baseline)
    assert baseline[baseline.index("--wasm") + 1] == "32"


def test_the_doctor_tiers_up_for_large_traces_only(tmp_path: Path) -> None:
    for small in (A100_TRITON, H100_BERT, V100, Path("no such trace.json")):
        assert engine_options(small)["tier_up"] is False, small
    # A trace of seconds: V8's own tier-up.
    huge = tmp_path / "huge.json.gz"
    huge.write_bytes(b"\x1f\x8b" + bytes(100) + TIER_UP_MIN_JSON_BYTES.to_bytes(4, "little"))
    assert engine_options(huge)["tier_up"] is True
    just_under = tmp_path / "just_under.json.gz"
    just_under.write_bytes(
        b"\x1f\x8b" + bytes(100) + (TIER_UP_MIN_JSON_BYTES - 1).to_bytes(4, "little")
    )
    assert engine_options(just_under)["tier_up"] is False


def test_the_doctor_runs_the_pinned_engine_unless_one_is_named(monkeypatch) -> None:
    """Its findings are those of the engine that made the guide's numbers and the gallery."""
    monkeypatch.delenv("PROFILING_GUIDE_TP_ENGINE", raising=False)
    monkeypatch.delenv("PROFILING_GUIDE_TP_BIN", raising=False)
    assert tp_launch.pinned_engine() == "wasm"
    assert engine_options(V100)["engine"] == "wasm"
    monkeypatch.setenv("PROFILING_GUIDE_TP_ENGINE", "native")
    assert engine_options(V100)["engine"] is None  # the environment's choice stands
    monkeypatch.delenv("PROFILING_GUIDE_TP_ENGINE")
    monkeypatch.setenv("PROFILING_GUIDE_TP_BIN", "/some/trace_processor_shell")
    assert tp_launch.pinned_engine() is None


def test_json_bytes_reads_gzips_own_record_of_the_size(tmp_path: Path) -> None:
    assert json_bytes(V100) == len(gzip.decompress(V100.read_bytes()))
    plain = tmp_path / "t.json"
    plain.write_text('{"traceEvents": []}')
    assert json_bytes(plain) == plain.stat().st_size
    assert json_bytes(tmp_path / "missing.json") is None
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert json_bytes(fifo) is None  # not opened: that would wait for a writer
