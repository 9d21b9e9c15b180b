"""The WebAssembly engine's hot functions, compiled by V8's optimising compiler as it starts.

Without dynamic tier-up (``open_trace(tier_up=False)``, the doctor) every function of the
trace processor runs as V8's baseline compiler (Liftoff) made it: quick to compile, about half
as fast as optimised code. Letting V8 tier up on its own does not pay for a command of a
second: it recompiles whatever got hot, including SQLite's interpreter loop and other functions
of 50 KB and more that take a fifth of a second each to optimise, while the trace is already
loaded. A handful of small functions (the JSON tokenizer, the string pool, the args tracker,
malloc, ...) take most of the import's time and optimise in milliseconds each.

So the engine can be told, with a V8 profile file, to optimise exactly those in background
threads as soon as the module is compiled, and to tier up nothing else. The names are listed
in ``tp_engine/hot_functions.txt``, made by ``python -m generators.tp_hot record TRACE...``
from CPU profiles of the doctor's work (the functions with the most self time among the small
ones). :func:`write_profiles` turns the list into V8's profile format for each WebAssembly
build, once per machine (in the cache folder, :func:`generators.tp_launch.hot_profile_dir`).

The profile format is V8's own (``--experimental-wasm-pgo-from-file``, src/wasm/pgo.cc): the
number of functions with call feedback (none here), then one byte per function defined in the
module, bit 0 "executed" and bit 1 "tiered up". V8 reads it from the file
``profile-wasm-<hash>`` in its working directory; the hash of a module longer than 16383 bytes
is computed from its length alone (V8's string hasher), which :func:`profile_file_name` does.
A file V8 does not find is harmless: the engine then runs as without the list. A file it finds
but that does not fit the module stops the engine at start (V8 checks it), which is why the
profiles are written from the module itself, whole (:func:`write_profiles`), into a folder
named after the module and the list.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from generators import tp_launch

#: The list of hot functions (one name per line; ``#`` starts a comment).
HOT_FUNCTIONS = Path(tp_launch.HOT_FUNCTIONS_FILE)
#: The WebAssembly builds in Perfetto's dist folder that get a profile.
WASM_BUILDS = tp_launch.WASM_BUILDS
#: Bit 0: the function ran; bit 1: it was optimised (V8 compiles it with TurboFan up front).
EXECUTED_AND_TIERED_UP = 0b11
#: What ``record`` keeps: the most self time among functions of at most this much code. Larger
#: ones cost V8 tenths of a second each to optimise, more than they would save in a short run.
DEFAULT_TOP = 80
DEFAULT_MAX_BODY_BYTES = 6000


class WasmFormatError(ValueError):
    """A file is not a WebAssembly module this reader understands."""


def _leb(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise WasmFormatError("truncated LEB128 number")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def _skip_limits(data: bytes, pos: int) -> int:
    flags, pos = _leb(data, pos)
    _, pos = _leb(data, pos)
    if flags & 1:
        _, pos = _leb(data, pos)
    return pos


class WasmFunctions:
    """What a profile needs from a module: its functions' names and code sizes."""

    def __init__(self, imported: int, body_sizes: list[int], names: dict[int, str]) -> None:
        #: Imported functions come first in the index space; V8's profile skips them.
        self.imported = imported
        #: Code bytes of each defined function, in order.
        self.body_sizes = body_sizes
        #: Function index (imports included) to its name, from the module's "name" section.
        self.names = names

    @property
    def defined(self) -> int:
        return len(self.body_sizes)

    def index_of(self) -> dict[str, int]:
        """Name to the index of the first defined function of that name."""
        out: dict[str, int] = {}
        for index in sorted(self.names):
            if index >= self.imported:
                out.setdefault(self.names[index], index)
        return out


def read_wasm_functions(path: Path | str) -> WasmFunctions:
    """Read the import, code and name sections of the module at ``path``."""
    data = Path(path).read_bytes()
    if data[:4] != b"\0asm":
        raise WasmFormatError(f"{path} is not a WebAssembly module")
    try:
        return _read_sections(data, str(path))
    except IndexError:  # a count or a name that runs past its section's bytes
        raise WasmFormatError(f"{path}: a section is cut short") from None


def _read_sections(data: bytes, path: str) -> WasmFunctions:
    pos = 8
    imported = 0
    body_sizes: list[int] = []
    names: dict[int, str] = {}
    while pos < len(data):
        section = data[pos]
        size, pos = _leb(data, pos + 1)
        end = pos + size
        if end > len(data):
            raise WasmFormatError(f"{path}: a section runs past the end of the file")
        if section == 2:  # imports: count the functions among them
            count, p = _leb(data, pos)
            for _ in range(count):
                for _field in ("module", "name"):
                    length, p = _leb(data, p)
                    p += length
                kind = data[p]
                p += 1
                if kind == 0:  # function: a type index
                    _, p = _leb(data, p)
                    imported += 1
                elif kind == 1:  # table: element type, limits
                    p = _skip_limits(data, p + 1)
                elif kind == 2:  # memory: limits
                    p = _skip_limits(data, p)
                elif kind == 3:  # global: value type, mutability
                    p += 2
                elif kind == 4:  # tag: attribute, type index
                    _, p = _leb(data, p + 1)
                else:
                    raise WasmFormatError(f"{path}: unknown import kind {kind}")
        elif section == 10:  # code: each body's size
            count, p = _leb(data, pos)
            for _ in range(count):
                length, p = _leb(data, p)
                body_sizes.append(length)
                p += length
        elif section == 0:  # custom: only "name" matters
            length, p = _leb(data, pos)
            if data[p : p + length] == b"name":
                p += length
                while p < end:
                    sub, p = data[p], p + 1
                    sub_size, p = _leb(data, p)
                    if sub == 1:  # function names
                        count, q = _leb(data, p)
                        for _ in range(count):
                            index, q = _leb(data, q)
                            n, q = _leb(data, q)
                            names[index] = data[q : q + n].decode("utf-8", "replace")
                            q += n
                    p += sub_size
        pos = end
    return WasmFunctions(imported, body_sizes, names)


def read_hot_functions(path: Path = HOT_FUNCTIONS) -> list[str]:
    """The names listed in ``path`` (comments and blank lines left out)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def profile_bytes(functions: WasmFunctions, hot: Iterable[str]) -> bytes:
    """V8's profile for a module: no call feedback, the ``hot`` functions tiered up."""
    index_of = functions.index_of()
    tiers = bytearray(functions.defined)
    for name in hot:
        index = index_of.get(name)
        if index is not None:
            tiers[index - functions.imported] = EXECUTED_AND_TIERED_UP
    return b"\0" + bytes(tiers)  # 0 (LEB128): no function with call feedback


def profile_file_name(module_bytes: int) -> str:
    """The file V8 looks for, in its working directory, for a module of ``module_bytes``."""
    if module_bytes <= 16383:
        raise ValueError("V8 hashes a module this small by its content: not supported")
    return f"profile-wasm-{((module_bytes << 2) | 2) & 0xFFFFFFFF:08x}"


def write_profiles(dist: str, folder: str, hot_list: Path = HOT_FUNCTIONS) -> str | None:
    """Write the profile of each WebAssembly build in ``dist`` to ``folder``, whole or not at
    all (written and synced in a folder of its own, then renamed), so that an engine never reads
    half a file, even after a crash. Other profile folders for the same Perfetto version (an
    older list) are removed. Returns ``folder``, or None when it cannot be written (the engine
    then runs without the list)."""
    parent = os.path.dirname(folder)
    try:
        hot = read_hot_functions(hot_list)
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".staging-", dir=parent)
    except (OSError, ValueError):
        return None
    try:
        # mkdtemp's folder is the owner's only; the cache is as shared as any file they make.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)
        for build in WASM_BUILDS:
            wasm = os.path.join(dist, build)
            if not os.path.isfile(wasm):
                continue
            data = profile_bytes(read_wasm_functions(wasm), hot)
            with open(os.path.join(staging, profile_file_name(os.path.getsize(wasm))), "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        try:
            os.rename(staging, folder)
        except OSError:  # another process wrote it first: theirs is the same
            if not os.path.isdir(folder):
                return None
        _remove_older_profiles(folder)
    except (OSError, ValueError):  # WasmFormatError included
        return None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _remove_older_profiles(folder: str) -> None:
    """Remove the profile folders beside ``folder`` made for the same Perfetto version."""
    parent, name = os.path.split(folder)
    version = name.rsplit("-", 1)[0]
    for other in os.listdir(parent):
        if other != name and not other.startswith(".") and other.rsplit("-", 1)[0] == version:
            shutil.rmtree(os.path.join(parent, other), ignore_errors=True)


# ----------------------------------------------------------------------------- recording


def self_time_by_function(profiles: Iterable[Path]) -> collections.Counter[str]:
    """Microseconds of self time per WebAssembly function in Node CPU profiles."""
    total: collections.Counter[str] = collections.Counter()
    for path in profiles:
        data = json.loads(path.read_text(encoding="utf-8"))
        frames = {node["id"]: node["callFrame"] for node in data["nodes"]}
        for sample, delta in zip(data["samples"], data["timeDeltas"], strict=True):
            frame = frames[sample]
            if frame.get("url", "").startswith("wasm://"):  # V8's name for WebAssembly code
                total[frame["functionName"]] += delta
    return total


def choose(
    self_time: collections.Counter[str],
    builds: Sequence[WasmFunctions],
    *,
    top: int = DEFAULT_TOP,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> list[str]:
    """The ``top`` functions with the most self time among those of at most ``max_body_bytes``
    of code in every build. A name some build lacks is left out: the linker numbers some
    functions' names (``sqlite3GetToken_7134``), differently in each build."""
    indexes = [functions.index_of() for functions in builds]
    chosen: list[str] = []
    for name, _ in self_time.most_common():
        if not all(
            name in index_of
            and functions.body_sizes[index_of[name] - functions.imported] <= max_body_bytes
            for functions, index_of in zip(builds, indexes, strict=True)
        ):
            continue
        chosen.append(name)
        if len(chosen) == top:
            break
    return chosen


def _profile_doctor_runs(traces: Sequence[Path], out_dir: Path) -> None:
    """Run the doctor's work on each trace in an engine that writes a CPU profile."""
    from generators import tp
    from generators.doctor.detectors import load_detectors
    from generators.doctor.examine import examine
    from generators.doctor.tuning import engine_options

    detectors = load_detectors()
    # Node reads NODE_OPTIONS when the engine starts: each engine writes its CPU profile when
    # it exits on its own (its stdin closed), not when killed.
    before = os.environ.get("NODE_OPTIONS")
    profile = f"--cpu-prof --cpu-prof-interval=100 --cpu-prof-dir={out_dir}"
    os.environ["NODE_OPTIONS"] = f"{before} {profile}" if before else profile
    try:
        for n, trace in enumerate(traces, 1):
            print(f"[{n}/{len(traces)}] {trace}", file=sys.stderr)
            # The WebAssembly engine's baseline code, whatever the trace's size or what this
            # machine has cached: what is slow there is what the list is for.
            options = engine_options(trace) | {
                "engine": "wasm",
                "tier_up": False,
                "hot_functions": False,
            }
            with tp.open_trace(trace, client="light", **options) as opened:
                examine(opened, trace, detectors)
                opened.engine.close_gracefully()
            if len(list(out_dir.glob("*.cpuprofile"))) != n:
                raise SystemExit(f"{trace}: the engine wrote no CPU profile")
    finally:
        tp.close_engines()
        if before is None:
            del os.environ["NODE_OPTIONS"]
        else:
            os.environ["NODE_OPTIONS"] = before


def record(
    traces: Sequence[Path],
    out: Path = HOT_FUNCTIONS,
    *,
    top: int = DEFAULT_TOP,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> list[str]:
    """Profile the doctor on ``traces`` and write the hot functions to ``out``."""
    from generators.store import atomic_write_text

    dist = tp_launch.wasm_dist_path()
    builds = [read_wasm_functions(os.path.join(dist, b)) for b in WASM_BUILDS]
    with tempfile.TemporaryDirectory(prefix="tp-hot-") as tmp:
        _profile_doctor_runs(traces, Path(tmp))
        self_time = self_time_by_function(sorted(Path(tmp).glob("*.cpuprofile")))
    if not self_time:
        raise SystemExit("no CPU profile was written: nothing recorded")
    chosen = choose(self_time, builds, top=top, max_body_bytes=max_body_bytes)
    wasm_total = sum(self_time.values())
    share = sum(self_time[name] for name in chosen) / wasm_total
    header = [
        "# Functions of Perfetto's WebAssembly trace processor that the engine optimises as it",
        "# starts when it runs without dynamic tier-up (the doctor): see generators/tp_hot.py.",
        "# Made by: python -m generators.tp_hot record " + " ".join(map(_shown, traces)),
        f"# Perfetto {os.path.basename(dist)}; the {len(chosen)} functions with the most self "
        f"time among those of at most {max_body_bytes} bytes of code,",
        f"# {share:.0%} of the self time in WebAssembly while the doctor ran on those traces.",
    ]
    atomic_write_text(out, "\n".join(header + chosen) + "\n")
    return chosen


def _shown(trace: Path) -> str:
    """A trace's path as the list's header shows it: relative to the repository, or its name."""
    repo = Path(__file__).resolve().parents[1]
    path = trace.resolve()
    return path.relative_to(repo).as_posix() if path.is_relative_to(repo) else path.name


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m generators.tp_hot",
        description="List the trace processor's hot functions from CPU profiles of the doctor.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="profile the doctor on traces and rewrite the list")
    rec.add_argument("traces", nargs="+", type=Path)
    rec.add_argument("--top", type=int, default=DEFAULT_TOP)
    rec.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES)
    rec.add_argument("--out", type=Path, default=HOT_FUNCTIONS)
    args = parser.parse_args(argv)
    missing = [str(t) for t in args.traces if not t.is_file()]
    if missing:
        parser.error(f"no such trace: {', '.join(missing)}")
    chosen = record(args.traces, args.out, top=args.top, max_body_bytes=args.max_body_bytes)
    print(f"{len(chosen)} functions written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
