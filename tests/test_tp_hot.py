"""The WebAssembly engine's hot functions (generators/tp_hot.py): the list, V8's profile made
from it, that V8 reads that profile and optimises exactly those functions, and that a trace
opened so answers as without them."""

from __future__ import annotations

import gzip
import json
import os
import re
import selectors
import subprocess
import time
from pathlib import Path

import pytest

from generators import tp_hot, tp_launch
from generators.doctor.__main__ import (
    HOT_FUNCTIONS_MIN_JSON_BYTES,
    TIER_UP_MIN_JSON_BYTES,
    engine_options,
    json_bytes,
)
from generators.doctor.detectors import load_detectors
from generators.doctor.examine import examine
from generators.doctor.render import render_json
from generators.tp import close_engines, open_trace
from tests.reference_traces import A100_TRITON, H100_BERT, V100

DIST = tp_launch.wasm_dist_path()


@pytest.fixture(scope="module")
def builds() -> dict[str, tp_hot.WasmFunctions]:
    return {b: tp_hot.read_wasm_functions(os.path.join(DIST, b)) for b in tp_hot.WASM_BUILDS}


def test_the_reader_finds_every_function_and_its_name(builds) -> None:
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


def test_the_list_names_small_functions_the_pinned_engine_has(builds) -> None:
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


def test_profile_marks_the_listed_functions_and_nothing_else(builds) -> None:
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
    bad.write_bytes(b"\0asm\1\0\0\0\x0a\xff\xff")  # a section longer than the file
    with pytest.raises(tp_hot.WasmFormatError):
        tp_hot.read_wasm_functions(bad)


def test_profiles_are_written_whole_once_and_found_again(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PROFILING_GUIDE_CACHE_DIR", str(tmp_path / "cache"))
    folder = tp_launch.hot_profile_dir(DIST)
    assert folder is not None and folder.startswith(str(tmp_path / "cache"))
    names = sorted(os.listdir(folder))
    expected = sorted(
        tp_hot.profile_file_name(os.path.getsize(os.path.join(DIST, b))) for b in tp_hot.WASM_BUILDS
    )
    assert names == expected
    assert tp_launch.hot_profile_dir(DIST) == folder  # found, not written again
    assert not [p for p in Path(folder).parent.iterdir() if p.name.startswith(".staging-")]
    # Another process wrote the same folder first: its copy is used.
    assert tp_hot.write_profiles(DIST, folder) == folder


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


def _lines_until(proc: subprocess.Popen[bytes], done, timeout_s: float) -> list[str]:
    """stdout lines of ``proc`` until ``done(lines)`` or the timeout."""
    assert proc.stdout is not None
    lines: list[str] = []
    buf = b""
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while not done(lines) and time.monotonic() < deadline:
            if not sel.select(max(0.0, deadline - time.monotonic())):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            *complete, buf = buf.split(b"\n")
            lines += [c.decode("utf-8", "replace") for c in complete]
    return lines


@pytest.mark.parametrize("build", ["32", "64"])
def test_v8_reads_the_profile_and_optimises_exactly_the_listed_functions(
    build: str, builds, tmp_path: Path, monkeypatch
) -> None:
    """The engine as the doctor starts it, with V8 telling what it compiles: the profile is
    found under the name V8 gives it, and the optimising compiler compiles the listed
    functions, only those, as the engine starts."""
    monkeypatch.setenv("PROFILING_GUIDE_CACHE_DIR", str(tmp_path))
    cmd = tp_launch.wasm_command(
        sql_packages=[], tier_up=False, hot_functions=True, wasm="32" if build == "32" else "auto"
    )
    cmd.insert(1, "--trace-wasm-compilation-times")
    wasm = tp_hot.WASM_BUILDS[0 if build == "32" else 1]
    functions = builds[wasm]
    index_of = functions.index_of()
    listed = {index_of[name] for name in tp_hot.read_hot_functions()}
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        optimised = re.compile(r"^Compiled function \S+#(\d+) using TurboFan")

        def all_optimised(lines: list[str]) -> bool:
            got = {int(m.group(1)) for ln in lines if (m := optimised.match(ln))}
            return got >= listed and any(ln.startswith("listening ") for ln in lines)

        lines = _lines_until(proc, all_optimised, timeout_s=60)
    finally:
        proc.kill()
        proc.wait()
    name = tp_hot.profile_file_name(os.path.getsize(os.path.join(DIST, wasm)))
    assert f"Loading Wasm PGO data from file '{name}' ({1 + functions.defined} bytes)" in lines
    got = {int(m.group(1)) for ln in lines if (m := optimised.match(ln))}
    assert got == listed


def test_the_doctor_finds_the_same_with_the_hot_functions() -> None:
    """The hot functions change how fast the engine runs, never what it answers."""
    detectors = load_detectors()

    def report(**options) -> str:
        with open_trace(V100, client="light", reuse=False, **options) as tp:
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


def test_json_bytes_reads_gzips_own_record_of_the_size(tmp_path: Path) -> None:
    assert json_bytes(V100) == len(gzip.decompress(V100.read_bytes()))
    plain = tmp_path / "t.json"
    plain.write_text('{"traceEvents": []}')
    assert json_bytes(plain) == plain.stat().st_size
    assert json_bytes(tmp_path / "missing.json") is None
    assert json_bytes(V100) > HOT_FUNCTIONS_MIN_JSON_BYTES


def test_self_time_and_choice_from_cpu_profiles(tmp_path: Path, builds) -> None:
    both = list(builds.values())
    wasm_url = "file:///dist/trace_processor.wasm-02a18cd6"
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


def test_a_missing_profile_folder_is_a_clear_engine_error() -> None:
    cmd = [*tp_launch.wasm_command(sql_packages=[]), "--profile-dir", "/no/such/folder"]
    result = subprocess.run(
        cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 2
    assert "cannot use --profile-dir /no/such/folder" in result.stderr
