"""Check your own trace: ``python -m generators.doctor TRACE [TRACE ...]``.

Opens each Kineto trace (``.json`` or ``.json.gz``) with the project's trace processor, runs the
guide's detectors (``generators/detectors/*.sql``) and prints what they found, most costly first:
what was seen, why it matters, what to try, the guide's page on it, and the evidence.

Exit codes: 0 nothing at or above ``--fail-on`` (or no ``--fail-on``); 1 a finding at or above
``--fail-on``; 2 a trace could not be read, or the command line was wrong.
"""

from __future__ import annotations

import os
import sys

from generators import tp_launch

#: Traces up to this size on disk open in the 32-bit WebAssembly build, which runs the doctor
#: some 10 % faster than the memory64 one. Its heap stops at 4 GiB; the engine's grows by about
#: 2.4 bytes per byte of JSON, some 35 per byte of a gzipped trace.
WASM32_MAX_TRACE_BYTES = 32 << 20
#: Long options that take a value (``--format json``), so that the value is not read as a trace
#: (``-o`` is the one short one). Kept equal to the parser's by tests/test_doctor.py.
_VALUE_OPTIONS = (
    "--format",
    "--output",
    "--fail-on",
    "--only",
    "--set",
    "--guide-url",
    "--lang",
    "--perfetto-origin",
)
#: Options after which nothing starts early: an engine is named (open_trace chooses it), or no
#: trace is read.
_NO_EARLY_START = ("--tp-bin", "--engine", "--list", "--help")


#: Traces that hold at least this much JSON open with the engine's hot functions optimised as
#: it starts (generators/tp_hot.py): that costs the engine some CPU at start, in background
#: threads, and pays off from a few MB of JSON on. From TIER_UP_MIN_JSON_BYTES, the doctor runs
#: for seconds, and V8's own tier-up (which also optimises SQLite's large functions, at a fifth
#: of a second of CPU each) ends it sooner. Both measured by benchmarks/doctor_tuning.py.
HOT_FUNCTIONS_MIN_JSON_BYTES = 4 << 20
TIER_UP_MIN_JSON_BYTES = 24 << 20


def engine_options(path: str | os.PathLike[str]) -> dict[str, Any]:
    """How the doctor opens the trace at ``path``, for a command that should answer in about a
    second.

    The WebAssembly engine runs without V8's dynamic tier-up, whose compiler threads would
    mostly compete with the work for CPU (``tier_up``), except for a trace so large that the
    command takes seconds anyway; for a trace large enough to repay it, with the few functions
    that take most of its import optimised as the engine starts (``hot_functions``); in its
    32-bit build for a trace that fits it (``wasm``); and with the trace processor's default
    ftrace setting, which spares it a second start-up instance (``ftrace_raw``; no Kineto trace
    holds ftrace).
    """
    disk_bytes = _trace_bytes(path)
    small = disk_bytes is not None and disk_bytes <= WASM32_MAX_TRACE_BYTES
    json_size = json_bytes(path) or 0
    tier_up = json_size >= TIER_UP_MIN_JSON_BYTES
    return {
        "ftrace_raw": True,
        "tier_up": tier_up,
        "hot_functions": not tier_up and json_size >= HOT_FUNCTIONS_MIN_JSON_BYTES,
        "wasm": "32" if small else None,
    }


def _trace_bytes(path: str | os.PathLike[str]) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def json_bytes(path: str | os.PathLike[str]) -> int | None:
    """About how many bytes of JSON the trace at ``path`` holds: a gzip file's own record of its
    uncompressed size (modulo 4 GiB, as gzip keeps it: a larger trace may read as smaller, never
    as smaller than the file), else the file's size. None when the file cannot be read."""
    try:
        with open(path, "rb") as f:
            if f.read(2) != b"\x1f\x8b":
                return os.fstat(f.fileno()).st_size
            size = f.seek(0, os.SEEK_END)
            f.seek(-4, os.SEEK_END)
            return max(int.from_bytes(f.read(4), "little"), size)
    except OSError:
        return None


def _abbreviates(name: str, options: Sequence[str]) -> bool:
    """Whether ``name`` is one of ``options`` or, as argparse accepts, a prefix of one."""
    return name.startswith("--") and len(name) > 2 and any(o.startswith(name) for o in options)


def first_trace(argv: Sequence[str]) -> str | None:
    """The first file the command line names as a trace, read roughly (argparse reads it for
    real later), or None when it names none, names an engine or asks for no trace."""
    first = None
    takes_value = positional = False
    for arg in argv:
        if takes_value:
            takes_value = False
        elif not positional and arg == "--":
            positional = True
        elif not positional and arg.startswith("--"):
            name = arg.split("=", 1)[0]
            if _abbreviates(name, _NO_EARLY_START):
                return None
            takes_value = "=" not in arg and _abbreviates(name, _VALUE_OPTIONS)
        elif not positional and arg.startswith("-") and arg != "-":
            if "h" in arg[1:]:  # -h, or in a cluster (-qh)
                return None
            takes_value = arg.endswith("o")  # -o FILE, -qo FILE (not -oFILE)
        elif first is None and os.path.isfile(arg):
            first = arg
    return first


def _start_engine_early(argv: Sequence[str]) -> None:
    """Start the engine for the first trace named before importing anything else: the imports
    then overlap its start-up. An engine started for nothing is stopped at exit."""
    trace = first_trace(argv)
    if trace is not None:
        tp_launch.start_early(**engine_options(trace))


if __name__ == "__main__":
    _start_engine_early(sys.argv[1:])

import argparse  # noqa: E402 (after the engine's start)
import logging  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from generators import env  # noqa: E402
from generators.doctor.detectors import (  # noqa: E402
    LANGUAGES,
    SEVERITIES,
    DetectorError,
    load_detectors,
)
from generators.doctor.examine import Report, examine  # noqa: E402
from generators.doctor.render import (  # noqa: E402
    DEFAULT_PERFETTO_ORIGIN,
    EXIT_CODES,
    RENDERERS,
    render_html,
)
from generators.store import atomic_write_text  # noqa: E402
from generators.tp import TraceOpenError, close_engines, open_trace  # noqa: E402
from generators.tp_engine import EngineError  # noqa: E402

#: Back to the start of a terminal's line, and clear it.
CLEAR_LINE = "\r\033[K"

#: Where the guide's links point unless --guide-url or the published site's address
#: (``PROFILING_GUIDE_SITE_URL``, see generators/env.py) says otherwise: the site `make serve` runs.
LOCAL_GUIDE_URL = "http://127.0.0.1:8000/"


def _parse_set(values: list[str], known: dict[str, set[str]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for item in values:
        key, eq, number = item.partition("=")
        det, dot, param = key.partition(".")
        if not (eq and dot) or det not in known or param not in known[det]:
            raise ValueError(f"--set {item!r}: expected DETECTOR.PARAM=NUMBER (see --list)")
        try:
            out.setdefault(det, {})[param] = float(number) if "." in number else int(number)
        except ValueError:
            raise ValueError(f"--set {item!r}: {number!r} is not a number") from None
    return out


def _list(detectors, lang: str = "en") -> str:
    lines = []
    for d in detectors:
        lines.append(f"{d.id:26} {d.severity:8} {d.text('title', lang)}")
        for p in d.params:
            lines.append(f"{'':26} {p.name} = {p.value}: {p.meaning(lang)}")
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    parser = argparse.ArgumentParser(
        prog="python -m generators.doctor",
        description=__doc__.split("\n\n")[1].replace("\n", " "),
        epilog="exit codes: " + "; ".join(f"{k}: {v}" for k, v in EXIT_CODES.items()),
    )
    parser.add_argument("traces", nargs="*", type=Path, metavar="TRACE")
    parser.add_argument("--format", choices=[*RENDERERS, "html"], default="text")
    parser.add_argument("-o", "--output", type=Path, help="write the report to this file")
    parser.add_argument("--fail-on", choices=["warning", "error"], help="exit 1 on such findings")
    parser.add_argument("--only", help="comma-separated detector ids to run")
    parser.add_argument(
        "--set", action="append", default=[], metavar="DETECTOR.PARAM=N", help="change a threshold"
    )
    parser.add_argument("--list", action="store_true", help="list the detectors and thresholds")
    parser.add_argument(
        "--guide-url",
        help=f"base URL of the guide for links (default: ${env.SITE_URL.name}, else "
        f"{LOCAL_GUIDE_URL}; with --lang ja, its ja/)",
    )
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        default="en",
        help="language of the text, markdown and html reports (json stays English)",
    )
    parser.add_argument("--perfetto-origin", default=DEFAULT_PERFETTO_ORIGIN)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--tp-bin", help="native trace_processor_shell to use")
    parser.add_argument("--engine", choices=["auto", "native", "wasm"], default=None)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.guide_url is None:  # the edition in the report's language
        root = env.SITE_URL.get() or LOCAL_GUIDE_URL
        args.guide_url = root.rstrip("/") + "/" + ("ja/" if args.lang == "ja" else "")
    # The trace processor's own warnings (dropped events) are in the report's "cannot show".
    logging.getLogger("generators.tp").setLevel(logging.ERROR)

    try:
        detectors = load_detectors()
    except DetectorError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.list:
        sys.stdout.write(_list(detectors, args.lang))
        return 0
    if not args.traces:
        parser.print_usage(sys.stderr)
        print("error: name at least one trace", file=sys.stderr)
        return 2
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        unknown = sorted(set(wanted) - {d.id for d in detectors})
        if unknown:
            print(f"error: unknown detector {', '.join(unknown)} (see --list)", file=sys.stderr)
            return 2
        detectors = [d for d in detectors if d.id in wanted]
    try:
        overrides = _parse_set(args.set, {d.id: {p.name for p in d.params} for d in detectors})
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    tty = sys.stderr.isatty()

    def progress(message: str, *, detail: bool = False) -> None:
        """One line per trace; on a terminal also each detector, overwriting one line."""
        if args.quiet or (detail and not tty):
            return
        if detail:
            print(f"{CLEAR_LINE}doctor: {message}", end="", file=sys.stderr, flush=True)
        else:
            # On a terminal, over the progress line (cleared: it may be longer).
            print(f"{CLEAR_LINE if tty else ''}doctor: {message}", file=sys.stderr, flush=True)

    reports: list[Report] = []
    failed = False
    try:
        for n, path in enumerate(args.traces, 1):
            size = path.stat().st_size if path.is_file() else 0
            progress(f"[{n}/{len(args.traces)}] loading {path} ({size / 1e6:.1f} MB)")
            try:
                options = engine_options(path)

                def read(done: int, total: int, n: int = n, path: Path = path) -> None:
                    """Progress through a large trace: the engine reads it a chunk at a time,
                    then sorts and imports its events (the longer part, with no progress)."""
                    where = f"[{n}/{len(args.traces)}]"
                    if done < total:
                        mb = f"{done / 1e6:.0f} of {total / 1e6:.0f} MB"
                        progress(f"{where} reading {path}: {mb}", detail=True)
                    else:
                        progress(f"{where} importing the events of {path}", detail=True)

                # The light client: it imports in milliseconds, the perfetto package in tenths.
                with open_trace(
                    path,
                    bin_path=args.tp_bin,
                    engine=args.engine,
                    client="light",
                    on_read=read,
                    **options,
                ) as tp:
                    report = examine(
                        tp,
                        path,
                        detectors,
                        overrides=overrides,
                        progress=lambda m, n=n: progress(
                            f"[{n}/{len(args.traces)}] {m}", detail=True
                        ),
                    )
            except (TraceOpenError, EngineError) as e:
                if tty and not args.quiet:
                    print(CLEAR_LINE, end="", file=sys.stderr)  # not after a progress line
                print(f"error: {e}", file=sys.stderr)
                failed = True
                continue
            report.key = f"t{n}"
            reports.append(report)
            progress(
                f"[{n}/{len(args.traces)}] findings: {len(report.findings)}, {report.seconds:.1f} s"
            )
    finally:
        close_engines()

    if reports:
        if args.format == "html":
            text = render_html(reports, args.guide_url, args.perfetto_origin, lang=args.lang)
        elif args.format == "json":
            text = RENDERERS["json"](reports, args.guide_url)
        else:
            text = RENDERERS[args.format](reports, args.guide_url, lang=args.lang)
        if args.output:
            atomic_write_text(args.output, text)
            progress(f"report written to {args.output}")
        else:
            sys.stdout.write(text)
    if failed:
        return 2
    if args.fail_on:
        threshold = SEVERITIES.index(args.fail_on)
        worst = [SEVERITIES.index(r.worst()) for r in reports if r.worst()]
        if worst and max(worst) >= threshold:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
