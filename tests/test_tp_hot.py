"""The WebAssembly engine's hot functions (generators/tp_hot.py): the list, V8's profile made
from it, that V8 reads that profile and optimises exactly those functions, and that a trace
opened so answers as without them."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest

from generators import tp_hot, tp_launch
from generators.doctor.detectors import load_detectors
from generators.doctor.examine import examine
from generators.doctor.render import render_json
from generators.doctor.tuning import (
    HOT_FUNCTIONS_MIN_JSON_BYTES,
    TIER_UP_MIN_JSON_BYTES,
    engine_options,
    json_bytes,
)
from generators.tp import LightTraceProcessor, close_engines, open_trace
from generators.tp import _load as load_trace
from generators.tp import _read_chunks as read_trace_chunks
from tests.reference_traces import A100_TRITON, H100_BERT, V100

DIST = tp_launch.wasm_dist_path()


@pytest.fixture(scope="module")
def builds() -> dict[str, tp_hot.WasmFunctions]:
    return {b: tp_hot.read_wasm_functions(os.path.join(DIST, b)) for b in tp_hot.WASM_BUILDS}


def test_the_reader_finds_every_function_and_its_name(
    builds: dict[str, tp_hot.WasmFunctions],
) -> None:
    for build, functions in builds.items():
        assert functions.imported > 0, build
        assert functions.defined > 1000, build
        index_of = functions.index_of()
        assert "sqlite3_step" in index_of, build
        # Names are of defined functions, in the module's index space (imports first).
        assert all(
            functions.imported <= i < functions.imported + functions.defined
            for i in index_of.values()
        )


def test_the_list_names_small_functions_the_pinned_engine_has(
    builds: dict[str, tp_hot.WasmFunctions],
) -> None:
    """A list made for another Perfetto version would silently optimise nothing."""
    hot = tp_hot.read_hot_functions()
    assert 20 <= len(hot) <= 200
    assert len(set(hot)) == len(hot)
    for build, functions in builds.items():
        index_of = functions.index_of()
        missing = [name for name in hot if name not in index_of]
        assert not missing, f"{build} lacks {missing[:3]}"
        sizes = [functions.body_sizes[index_of[n] - functions.imported] for n in hot]
        assert max(sizes) <= tp_hot.DEFAULT_MAX_BODY_BYTES, build


def test_profile_marks_the_listed_functions_and_nothing_else(
    builds: dict[str, tp_hot.WasmFunctions],
) -> None:
    functions = builds["trace_processor.wasm"]
    index_of = functions.index_of()
    data = tp_hot.profile_bytes(functions, ["sqlite3_step", "no such function", "memchr"])
    assert len(data) == 1 + functions.defined
    assert data[0] == 0  # no call feedback
    marked = {i + functions.imported for i, b in enumerate(data[1:]) if b}
    assert marked == {index_of["sqlite3_step"], index_of["memchr"]}
    assert {data[1 + index_of["memchr"] - functions.imported]} == {0b11}


def test_profile_file_name_follows_v8s_hash_of_a_large_module() -> None:
    assert tp_hot.profile_file_name(11035445) == "profile-wasm-02a18cd6"
    with pytest.raises(ValueError):
        tp_hot.profile_file_name(100)


def test_read_refuses_what_is_not_a_module(tmp_path: Path) -> None:
    bad = tmp_path / "x.wasm"
    bad.write_bytes(b"not wasm at all")
    with pytest.raises(tp_hot.WasmFormatError):
        tp_hot.read_wasm_functions(bad)
    header = b"\0asm\1\0\0\0"
    for cut in (
        b"\x0a\xff\xff",  # a section size cut short
        b"\x0a\x05\x01\x00",  # a section longer than the file
        b"\x02\x03\x01\x00\x00",  # an import whose kind is past its section's end
        b"\x0a\x02\x05\x01",  # five bodies announced, the section ends after one byte
    ):
        bad.write_bytes(header + cut)
        with pytest.raises(tp_hot.WasmFormatError):
            tp_hot.read_wasm_functions(bad)


def test_profiles_are_written_whole_once_and_found_again(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PROFILING_GUIDE_CACHE_DIR", str(tmp_path / "cache"))
    profiles = tmp_path / "cache" / "wasm-profiles"
    version = os.path.basename(DIST)
    older = profiles / f"{version}-00000000"  # the same engine, an earlier list
    other = profiles / "v1.0-0000000-00000000"  # another Perfetto version's
    for folder in (older, other):
        folder.mkdir(parents=True)
    folder = tp_launch.hot_profile_dir(DIST)
    assert folder is not None and Path(folder).parent == profiles
    names = sorted(os.listdir(folder))
    expected = sorted(
        tp_hot.profile_file_name(os.path.getsize(os.path.join(DIST, b))) for b in tp_hot.WASM_BUILDS
    )
    assert names == expected
    assert sorted(p.name for p in profiles.iterdir()) == sorted([Path(folder).name, other.name])
    assert (os.stat(folder).st_mode & 0o777) == 0o777 & ~_umask()  # not mkdtemp's 0700

    def never(*args: object) -> None:
        raise AssertionError("written again")

    monkeypatch.setattr(tp_hot, "write_profiles", never)
    assert tp_launch.hot_profile_dir(DIST) == folder  # found, not written again
    monkeypatch.undo()
    # Another process wrote the same folder first: its copy is used.
    assert tp_hot.write_profiles(DIST, folder) == folder
    assert not [p for p in profiles.iterdir() if p.name.startswith(".staging-")]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_what_cannot_be_read_or_written_means_no_profile(tmp_path: Path) -> None:
    """write_profiles never raises: the engine then runs without the list."""
    bad_list = tmp_path / "bad.txt"
    bad_list.write_bytes(b"\xff\xfe not UTF-8")
    assert tp_hot.write_profiles(DIST, str(tmp_path / "p1"), bad_list) is None
    tiny = tmp_path / "dist"  # a module too small for V8's length-only hash
    tiny.mkdir()
    (tiny / tp_hot.WASM_BUILDS[0]).write_bytes(b"\0asm\1\0\0\0")
    assert tp_hot.write_profiles(str(tiny), str(tmp_path / "p2")) is None
    (tiny / tp_hot.WASM_BUILDS[0]).write_bytes(b"\0asm\1\0\0\0\x0a\x05" + bytes(20000))
    assert tp_hot.write_profiles(str(tiny), str(tmp_path / "p3")) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "dist"]


def test_the_cache_folder_is_absolute(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("PROFILING_GUIDE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tp_launch.cache_dir() == str(tmp_path / "profiling-guide")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # ignored, as XDG says
    assert tp_launch.cache_dir() == os.path.expanduser("~/.cache/profiling-guide")
    monkeypatch.setenv("PROFILING_GUIDE_CACHE_DIR", "~/elsewhere")
    assert tp_launch.cache_dir() == os.path.expanduser("~/elsewhere")


def test_an_unwritable_cache_means_the_engine_runs_without_the_list(
    tmp_path: Path, monkeypatch
) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("PROFILING_GUIDE_CACHE_DIR", str(blocker / "cache"))
    assert tp_launch.hot_profile_dir(DIST) is None
    cmd = tp_launch.wasm_command(sql_packages=[], tier_up=False, hot_functions=True)
    assert "--profile-dir" not in cmd
    assert all(flag in cmd for flag in tp_launch.NO_TIER_UP_FLAGS)


def test_the_command_line_for_each_tuning(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PROFILING_GUIDE_CACHE_DIR", str(tmp_path))
    default = tp_launch.wasm_command(sql_packages=[])
    assert not any(a.startswith("--wasm") or a.startswith("--liftoff") for a in default)
    baseline = tp_launch.wasm_command(sql_packages=[], tier_up=False)
    assert "--liftoff-only" in baseline and "--profile-dir" not in baseline
    hot = tp_launch.wasm_command(sql_packages=[], tier_up=False, hot_functions=True)
    assert all(flag in hot for flag in tp_launch.HOT_FUNCTION_FLAGS)
    assert "--liftoff-only" not in hot
    assert hot[hot.index("--profile-dir") + 1] == tp_launch.hot_profile_dir(DIST)
    # With V8's own tier-up the list is not used.
    assert tp_launch.wasm_command(sql_packages=[], hot_functions=True) == default


class _Stdout:
    """An engine's stdout, read line by line in the background while a test drives it."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.lines: list[str] = []
        assert proc.stdout is not None
        self._thread = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        for raw in stream:
            self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def wait_for(self, done: Callable[[list[str]], bool], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not done(list(self.lines)) and time.monotonic() < deadline:
            time.sleep(0.05)


_OPTIMISED = re.compile(r"^Compiled function \S+#(\d+) using TurboFan")


def _optimised(lines: list[str]) -> set[int]:
    return {int(m.group(1)) for ln in lines if (m := _OPTIMISED.match(ln))}


def _engine_compiling(
    cmd: list[str], trace: Path, listed: set[int], *, control: bool = False
) -> tuple[list[str], set[int]]:
    """Run the engine ``cmd`` with V8 reporting each function it compiles, give it time to
    optimise the listed functions, load ``trace`` and query it; V8's lines, and the functions it
    optimised that are not listed (waiting for some in a ``control`` run)."""
    cmd = [cmd[0], "--trace-wasm-compilation-times", *cmd[1:]]
    for _attempt in range(4):
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        out = _Stdout(proc)
        out.wait_for(lambda lines: any(ln.startswith("listening ") for ln in lines), 15)
        if any(ln.startswith("listening ") for ln in out.lines):
            break
        # V8's printing of each compilation (a flag for testing) now and then stalls an engine
        # as it starts, with or without the profile: start it again.
        proc.kill()
        proc.wait()
    try:
        out.wait_for(lambda lines: _optimised(lines) >= listed, timeout_s=10)
        listening = next(ln for ln in out.lines if ln.startswith("listening "))
        tp = LightTraceProcessor(listening.split(" ")[1])
        load_trace(tp, read_trace_chunks(trace), True)
        for sql in ("SELECT COUNT(*) FROM slice", "SELECT name, SUM(dur) FROM slice GROUP BY 1"):
            list(tp.query(sql))
        tp.close()
        out.wait_for(lambda lines: bool(_optimised(lines) - listed), timeout_s=30 if control else 2)
        return list(out.lines), _optimised(out.lines) - listed
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("build", ["32", "64"])
def test_v8_reads_the_profile_and_optimises_the_listed_functions_only(
    build: str, builds: dict[str, tp_hot.WasmFunctions], tmp_path: Path, monkeypatch
) -> None:
    """The engine as the doctor starts it, with V8 telling what it compiles: the profile is
    found under the name V8 gives it; the optimising compiler compiles the listed functions
    as the engine starts (on an idle machine all of them before it listens; V8 may leave one
    it had to run before its turn on baseline code, so nine in ten at least); and nothing else,
    even after a trace's import and queries, which under V8's own tier-up do get other functions
    optimised (the control run)."""
    monkeypatch.setenv("PROFILING_GUIDE_CACHE_DIR", str(tmp_path))
    cmd = tp_launch.wasm_command(sql_packages=[], tier_up=False, hot_functions=True, wasm=build)
    wasm = tp_hot.WASM_BUILDS[0 if build == "32" else 1]
    functions = builds[wasm]
    index_of = functions.index_of()
    listed = {index_of[name] for name in tp_hot.read_hot_functions()}

    lines, others = _engine_compiling(cmd, V100, listed)
    name = tp_hot.profile_file_name(os.path.getsize(os.path.join(DIST, wasm)))
    assert f"Loading Wasm PGO data from file '{name}' ({1 + functions.defined} bytes)" in lines
    assert len(_optimised(lines) & listed) >= 0.9 * len(listed)
    assert not others, f"optimised without being listed: {sorted(others)[:5]}"

    # The control: V8's own tier-up, without the profile.
    default = tp_launch.wasm_command(sql_packages=[], wasm=build)
    _, others = _engine_compiling(default, V100, listed, control=True)
    assert others, "the control run optimised nothing more: this test could not fail"


def test_the_doctor_finds_the_same_with_the_hot_functions() -> None:
    """The hot functions change how fast the engine runs, never what it answers."""
    detectors = load_detectors()

    def report(**options: Any) -> str:
        with open_trace(V100, client="light", reuse=False, **options) as tp:
            assert ("--profile-dir" in tp.engine.proc.args) is options["hot_functions"]
            found = examine(tp, V100, detectors)
        found.seconds = None
        return render_json([found], "https://example.org/")

    base = {"ftrace_raw": True, "tier_up": False, "wasm": "32"}
    plain = report(**base, hot_functions=False)
    assert json.loads(plain)[0]["findings"]
    assert report(**base, hot_functions=True) == plain
    close_engines()


def test_the_doctor_optimises_the_hot_functions_for_large_traces_only(tmp_path: Path) -> None:
    assert engine_options(V100)["hot_functions"]  # 15 MB of JSON
    assert not engine_options(A100_TRITON)["hot_functions"]
    assert not engine_options(H100_BERT)["hot_functions"]
    assert engine_options(V100)["tier_up"] is False
    assert engine_options(Path("no such trace.json"))["hot_functions"] is False
    # A trace of seconds: V8's own tier-up, and no list.
    huge = tmp_path / "huge.json.gz"
    huge.write_bytes(b"\x1f\x8b" + bytes(100) + TIER_UP_MIN_JSON_BYTES.to_bytes(4, "little"))
    assert engine_options(huge)["tier_up"] is True
    assert engine_options(huge)["hot_functions"] is False


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
    assert json_bytes(V100) > HOT_FUNCTIONS_MIN_JSON_BYTES


def test_self_time_and_choice_from_cpu_profiles(
    tmp_path: Path, builds: dict[str, tp_hot.WasmFunctions]
) -> None:
    both = list(builds.values())
    wasm_url = "wasm://wasm/trace_processor.wasm-02a18cd6"
    profile = {
        "nodes": [
            {"id": 1, "callFrame": {"functionName": "(root)", "url": ""}},
            {"id": 2, "callFrame": {"functionName": "sqlite3_step", "url": wasm_url}},
            {"id": 3, "callFrame": {"functionName": "memchr", "url": wasm_url}},
            {"id": 4, "callFrame": {"functionName": "strlen", "url": wasm_url}},
            {"id": 5, "callFrame": {"functionName": "send", "url": "file:///server.mjs"}},
            {"id": 6, "callFrame": {"functionName": "sqlite3GetToken_7134", "url": wasm_url}},
        ],
        "samples": [2, 2, 2, 3, 3, 4, 5, 5, 5, 5, 6, 6, 6, 6],
        "timeDeltas": [100] * 14,
    }
    (tmp_path / "a.cpuprofile").write_text(json.dumps(profile))
    self_time = tp_hot.self_time_by_function([tmp_path / "a.cpuprofile"])
    assert self_time == {
        "sqlite3GetToken_7134": 400,
        "sqlite3_step": 300,
        "memchr": 200,
        "strlen": 100,
    }
    # The numbered name is one build's only; sqlite3_step is far over the size limit.
    assert tp_hot.choose(self_time, both, top=1) == ["memchr"]
    assert tp_hot.choose(self_time, both, top=5) == ["memchr", "strlen"]
    assert tp_hot.choose(self_time, both, top=5, max_body_bytes=10**9)[0] == "sqlite3_step"


def test_record_profiles_the_doctor_and_writes_a_list(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NODE_OPTIONS", "--no-warnings")  # the reader's own: given back after
    out = tmp_path / "hot.txt"
    chosen = tp_hot.record([A100_TRITON], out, top=5)
    assert 1 <= len(chosen) <= 5
    text = out.read_text()
    assert text.startswith("# ")
    assert "python -m generators.tp_hot record" in text
    assert tp_hot.read_hot_functions(out) == chosen
    assert os.environ["NODE_OPTIONS"] == "--no-warnings"
    assert "[1/1]" not in text and str(A100_TRITON.parent) not in text  # no machine's paths


def test_a_profile_folder_the_engine_cannot_enter_is_said_and_gone_without() -> None:
    """Without its profile the engine is only slower: it says why on stderr, and starts."""
    cmd = [*tp_launch.wasm_command(sql_packages=[]), "--profile-dir", "/no/such/folder"]
    result = subprocess.run(
        cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 0  # it listened, then stdin's end stopped it
    assert result.stdout.startswith("listening ")
    assert "cannot use --profile-dir /no/such/folder" in result.stderr
    assert "going on without it" in result.stderr
