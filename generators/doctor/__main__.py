"""Check your own trace: ``python -m generators.doctor TRACE [TRACE ...]``.

Opens each Kineto trace (``.json`` or ``.json.gz``) with the project's trace processor, runs the
guide's detectors (``generators/detectors/*.sql``) and prints what they found, most costly first:
what was seen, why it matters, what to try, the guide's page on it, and the evidence.

``python -m generators.doctor diff BEFORE AFTER`` compares two runs of the same code instead:
per step, what changed and by how much (generators/doctor/diff.py).

Exit codes: 0 nothing at or above ``--fail-on`` (or no ``--fail-on``); 1 a finding at or above
``--fail-on``; 2 a trace could not be read, or the command line was wrong.
"""

from __future__ import annotations

import os
import sys

from generators import tp_launch
from generators.doctor.tuning import engine_options

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


def _abbreviates(name: str, options: Sequence[str]) -> bool:
    """Whether ``name`` is one of ``options`` or, as argparse accepts, a prefix of one."""
    return name.startswith("--") and len(name) > 2 and any(o.startswith(name) for o in options)


def first_trace(argv: Sequence[str]) -> str | None:
    """The first file the command line names as a trace, read roughly (argparse reads it for
    real later), or None when it names none, names an engine or asks for no trace. None for
    ``diff``: its two traces open in worker processes, each with an engine of its own."""
    if argv[:1] == ["diff"]:
        return None
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
import re  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

from generators import env  # noqa: E402
from generators.doctor.detectors import (  # noqa: E402
    LANGUAGES,
    SEVERITIES,
    DetectorError,
    load_detectors,
)
from generators.doctor.examine import Report, examine  # noqa: E402
from generators.doctor.ranks import CrossRank, Job, examine_ranks, job_of  # noqa: E402
from generators.doctor.render import (  # noqa: E402
    DEFAULT_PERFETTO_ORIGIN,
    EXIT_CODES,
    RENDERERS,
    render_html,
    render_timings,
)
from generators.doctor.trust import check_file  # noqa: E402
from generators.i18n import translated as _t  # noqa: E402
from generators.site_address import configured_site_url  # noqa: E402
from generators.store import atomic_write_text  # noqa: E402
from generators.tp import TraceOpenError, close_engines, open_trace  # noqa: E402
from generators.tp_engine import EngineError  # noqa: E402

#: Back to the start of a terminal's line, and clear it.
CLEAR_LINE = "\r\033[K"

#: Where the guide's links point when neither --guide-url nor the site's configured address
#: (``site_url`` in mkdocs.yml, or ``PROFILING_GUIDE_SITE_URL``; generators/site_address.py) names
#: one: the site `make serve` runs.
LOCAL_GUIDE_URL = "http://127.0.0.1:8000/"


def _parse_set(
    values: list[str], known: dict[str, set[str]], lang: str = "en"
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for item in values:
        key, eq, number = item.partition("=")
        det, dot, param = key.partition(".")
        if not (eq and dot) or det not in known or param not in known[det]:
            raise ValueError(
                _t(
                    lang,
                    f"--set {item!r}: expected DETECTOR.PARAM=NUMBER (see --list)",
                    f"--set {item!r}: DETECTOR.PARAM=NUMBER の形で指定してください"
                    "（--list を参照）",
                )
            )
        try:
            out.setdefault(det, {})[param] = float(number) if "." in number else int(number)
        except ValueError:
            raise ValueError(
                _t(
                    lang,
                    f"--set {item!r}: {number!r} is not a number",
                    f"--set {item!r}: {number!r} は数値ではありません",
                )
            ) from None
    return out


#: Why a trace could not be opened (generators/tp.py's reasons), in Japanese: each reason's
#: English pattern and its Japanese, the engine's own words (in the groups) kept as they are.
_REASONS_JA = (
    (r"no such file", "ファイルがありません"),
    (r"not a regular file", "通常のファイルではありません"),
    (r"the file is empty \(0 bytes\)", "ファイルが空です（0 バイト）"),
    (r"gzip data cannot be inflated \((.*)\)", "gzip のデータを展開できません（\\1）"),
    (r"the gzip file inflates to nothing", "gzip ファイルを展開しても中身がありません"),
    (
        r"the trace could not be read to the end \((.*)\); is the file truncated or corrupt\?",
        "トレースを最後まで読めませんでした（\\1）。ファイルが途中で切れているか、壊れていませんか？",
    ),
    (
        r"the trace could not be read to the end \((.*)\)",
        "トレースを最後まで読めませんでした（\\1）",
    ),
    (
        r"the trace contains no events \(no slices and no counters\)",
        "トレースにイベントがありません（スライスもカウンタもありません）",
    ),
    (
        r"the trace is too large for the trace processor(?:: | \(engine died: )(.*?)\)?",
        "トレースがトレースプロセッサには大きすぎます（\\1）",
    ),
    (
        r"the trace processor (?:crashed|died) while loading the trace(?:: | \()(.*?)\)?",
        "トレースプロセッサがトレースの読み込み中に止まりました（\\1）",
    ),
    (
        r"not a trace the trace processor recognises \((.*)\)",
        "トレースプロセッサが認識できるトレースではありません（\\1）",
    ),
    (
        r"the trace processor could not load the trace: (.*)",
        "トレースプロセッサがトレースを読み込めませんでした（\\1）",
    ),
)


def open_error(e: TraceOpenError | EngineError, lang: str = "en") -> str:
    """The error line for a trace that could not be opened, in ``lang``."""
    if lang != "ja":
        return f"error: {e}"
    if isinstance(e, TraceOpenError):
        for pattern, ja in _REASONS_JA:
            if m := re.fullmatch(pattern, e.reason, re.S):
                return f"エラー: {e.path}: {m.expand(ja)}"
        return f"エラー: {e.path} を開けませんでした（{e.reason}）"
    return f"エラー: トレースプロセッサ（{e}）"


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
        epilog="exit codes: "
        + "; ".join(f"{k}: {v}" for k, v in EXIT_CODES.items())
        + ". To compare two runs: python -m generators.doctor diff BEFORE AFTER (see its --help)",
    )
    parser.add_argument(
        "traces",
        nargs="*",
        type=Path,
        metavar="TRACE",
        help="a trace (.json or .json.gz), or a folder: every trace in it",
    )
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
        help=f"base URL of the guide for links (default: the published site, ${env.SITE_URL.name} "
        f"or site_url in mkdocs.yml, else {LOCAL_GUIDE_URL}; with --lang ja, its ja/)",
    )
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        default="en",
        help="language of the text, markdown and html reports, and of the progress and error "
        "lines (json holds both: English fields, each with its *_ja twin)",
    )
    parser.add_argument(
        "--ranks",
        action="store_true",
        help="the traces are the ranks of one distributed job: compare them across the ranks "
        "even where their distributedInfo does not say so",
    )
    parser.add_argument("--perfetto-origin", default=DEFAULT_PERFETTO_ORIGIN)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument(
        "--timings",
        action="store_true",
        help="after the report, print on stderr the seconds of each phase (the engine's import "
        "of each trace, the trust gate, each detector's SQL with any module it is the first to "
        "include, the rendering), slowest first; a JSON report also holds them (timings)",
    )
    parser.add_argument("--tp-bin", help="native trace_processor_shell to use")
    parser.add_argument(
        "--engine",
        choices=["auto", "native", "wasm"],
        default=None,
        help="the trace processor: wasm (the default: the build the guide pins), native (the "
        "perfetto package's trace_processor_shell, downloaded if need be) or auto",
    )
    return parser


def expand_traces(paths: Sequence[Path]) -> list[Path]:
    """The traces named: a folder stands for every ``.json`` and ``.json.gz`` file in it (sorted
    by name). A folder without any is an error (ValueError)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                p for p in path.iterdir() if p.is_file() and p.name.endswith((".json", ".json.gz"))
            )
            if not found:
                raise ValueError(f"{path}: a folder without any trace (.json or .json.gz)")
            out += found
        else:
            out.append(path)
    return out


def build_diff_parser() -> argparse.ArgumentParser:
    """The parser of ``diff BEFORE AFTER``."""
    parser = argparse.ArgumentParser(
        prog="python -m generators.doctor diff",
        description="Compare two runs of the same code, per step (means over each run's "
        "profiled steps): kernels that appeared, vanished or changed (by the kernel-name "
        "decoder's family), operator calls, launches, the GPU's busy share, exposed "
        "communication, the memory peak where recorded, and which of the doctor's findings were "
        "fixed or are new.",
        epilog="exit codes: 0: compared; 2: a trace could not be read, or the command line was "
        "wrong",
    )
    parser.add_argument("before", type=Path, metavar="BEFORE", help="the trace before the change")
    parser.add_argument("after", type=Path, metavar="AFTER", help="the trace after the change")
    parser.add_argument("--format", choices=["text", "markdown", "json", "html"], default="text")
    parser.add_argument("-o", "--output", type=Path, help="write the report to this file")
    parser.add_argument("--only", help="comma-separated detector ids to run on both traces")
    parser.add_argument(
        "--set", action="append", default=[], metavar="DETECTOR.PARAM=N", help="change a threshold"
    )
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        default="en",
        help="language of the text, markdown and html reports (json stays English)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--tp-bin", help="native trace_processor_shell to use")
    parser.add_argument("--engine", choices=["auto", "native", "wasm"], default=None)
    return parser


def diff_main(argv: Sequence[str]) -> int:
    """``diff BEFORE AFTER``: the two runs compared (exit 2 when a trace cannot be read)."""
    from generators.doctor.diff import diff_traces
    from generators.doctor.render_diff import render_diff

    args = build_diff_parser().parse_args(argv)
    logging.getLogger("generators.tp").setLevel(logging.ERROR)
    try:
        detectors = load_detectors()
    except DetectorError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    only = None
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        unknown = sorted(set(wanted) - {d.id for d in detectors})
        if unknown:
            print(f"error: unknown detector {', '.join(unknown)} (see --list)", file=sys.stderr)
            return 2
        detectors = [d for d in detectors if d.id in wanted]
        only = tuple(wanted)
    try:
        overrides = _parse_set(args.set, {d.id: {p.name for p in d.params} for d in detectors})
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for path in (args.before, args.after):
        if path.is_dir():
            print(f"error: {path}: a folder; diff compares two trace files", file=sys.stderr)
            return 2

    def progress(message: str) -> None:
        if not args.quiet:
            print(f"doctor diff: {message}", file=sys.stderr, flush=True)

    try:
        diff, errors = diff_traces(
            args.before,
            args.after,
            only=only,
            overrides=overrides or None,
            tp_bin=args.tp_bin,
            engine=args.engine,
            progress=progress,
        )
    finally:
        close_engines()
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    if diff is None:
        return 2
    text = render_diff(diff, args.format, args.lang)
    if args.output:
        atomic_write_text(args.output, text)
        progress(f"report written to {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["diff"]:
        return diff_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.guide_url is None:  # the edition in the report's language
        root = configured_site_url() or LOCAL_GUIDE_URL
        args.guide_url = root.rstrip("/") + "/" + ("ja/" if args.lang == "ja" else "")
    # The trace processor's own warnings (dropped events) are in the report's "cannot show".
    logging.getLogger("generators.tp").setLevel(logging.ERROR)

    try:
        detectors = load_detectors()
    except DetectorError as e:
        print(_t(args.lang, "error: ", "エラー: ") + str(e), file=sys.stderr)
        return 2
    if args.list:
        sys.stdout.write(_list(detectors, args.lang))
        return 0
    if not args.traces:
        parser.print_usage(sys.stderr)
        print(
            _t(
                args.lang,
                "error: name at least one trace",
                "エラー: トレースを 1 つ以上指定してください",
            ),
            file=sys.stderr,
        )
        return 2
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        unknown = sorted(set(wanted) - {d.id for d in detectors})
        if unknown:
            names = ", ".join(unknown)
            print(
                _t(
                    args.lang,
                    f"error: unknown detector {names} (see --list)",
                    f"エラー: 不明な検出器 {names}（--list を参照）",
                ),
                file=sys.stderr,
            )
            return 2
        detectors = [d for d in detectors if d.id in wanted]
    try:
        overrides = _parse_set(
            args.set, {d.id: {p.name for p in d.params} for d in detectors}, args.lang
        )
    except ValueError as e:
        print(_t(args.lang, "error: ", "エラー: ") + str(e), file=sys.stderr)
        return 2
    lang = args.lang

    try:
        traces = expand_traces(args.traces)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    job = job_of(traces, forced=args.ranks)
    ranks: CrossRank | Job | None = job

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
    # The file's own check (trust.check_file) reads the trace while the engine imports it.
    checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="doctor-check")
    try:
        if job is not None and job.is_job:
            reports, ranks, errors = examine_ranks(
                traces,
                job,
                only=tuple(d.id for d in detectors) if args.only else None,
                overrides=overrides or None,
                tp_bin=args.tp_bin,
                engine=args.engine,
                progress=progress,
            )
            for error in errors:
                print(f"error: {error}", file=sys.stderr)
            failed = bool(errors)
        for n, path in enumerate(() if job is not None and job.is_job else traces, 1):
            size = path.stat().st_size if path.is_file() else 0
            where = f"[{n}/{len(traces)}]"
            progress(
                _t(
                    lang,
                    f"{where} loading {path} ({size / 1e6:.1f} MB)",
                    f"{where} {path} を読み込みます（{size / 1e6:.1f} MB）",
                )
            )
            try:
                options = engine_options(path)
                if args.engine or args.tp_bin:  # named: it wins over the doctor's default
                    options["engine"] = args.engine

                def read(done: int, total: int, where: str = where, path: Path = path) -> None:
                    """Progress through a large trace: the engine reads it a chunk at a time,
                    then sorts and imports its events (the longer part, with no progress)."""
                    if done < total:
                        of_en = f"{done / 1e6:.0f} of {total / 1e6:.0f} MB"
                        of_ja = f"{total / 1e6:.0f} MB 中 {done / 1e6:.0f} MB"
                        progress(
                            _t(
                                lang,
                                f"{where} reading {path}: {of_en}",
                                f"{where} {path} を読んでいます: {of_ja}",
                            ),
                            detail=True,
                        )
                    else:
                        progress(
                            _t(
                                lang,
                                f"{where} importing the events of {path}",
                                f"{where} {path} のイベントを取り込んでいます",
                            ),
                            detail=True,
                        )

                def checking(i: int, total: int, det_id: str, where: str = where) -> None:
                    progress(
                        _t(
                            lang,
                            f"{where} detector {i}/{total}: {det_id}",
                            f"{where} 検出器 {i}/{total}: {det_id}",
                        ),
                        detail=True,
                    )

                checking_file = checker.submit(check_file, path)
                opening = time.perf_counter()
                # The light client: it imports in milliseconds, the perfetto package in tenths.
                with open_trace(
                    path,
                    bin_path=args.tp_bin,
                    client="light",
                    on_read=read,
                    **options,
                ) as tp:
                    imported = time.perf_counter()
                    checked = checking_file.result()
                    waited = time.perf_counter() - imported
                    report = examine(
                        tp,
                        path,
                        detectors,
                        overrides=overrides,
                        progress=checking,
                        checked=checked,
                    )
                # The file's own check ran during the import; what it took beyond is its own.
                report.timings = {
                    "import": imported - opening,
                    "file-check": waited,
                    **report.timings,
                }
            except (TraceOpenError, EngineError) as e:
                if tty and not args.quiet:
                    print(CLEAR_LINE, end="", file=sys.stderr)  # not after a progress line
                print(open_error(e, lang), file=sys.stderr)
                failed = True
                continue
            report.key = f"t{n}"
            reports.append(report)
            found, took = len(report.findings), f"{report.seconds:.1f} s"
            progress(
                _t(lang, f"{where} findings: {found}, {took}", f"{where} 所見 {found} 件、{took}")
            )
    finally:
        checker.shutdown(cancel_futures=True)
        close_engines()

    if reports:
        rendering = time.perf_counter()
        if args.format == "html":
            text = render_html(
                reports, args.guide_url, args.perfetto_origin, lang=args.lang, ranks=ranks
            )
        elif args.format == "json":
            text = RENDERERS["json"](reports, args.guide_url, ranks=ranks, timings=args.timings)
        else:
            text = RENDERERS[args.format](reports, args.guide_url, lang=args.lang, ranks=ranks)
        rendered = time.perf_counter() - rendering
        if args.output:
            atomic_write_text(args.output, text)
            progress(
                _t(
                    lang,
                    f"report written to {args.output}",
                    f"レポートを {args.output} に書き出しました",
                )
            )
        else:
            sys.stdout.write(text)
        if args.timings:
            sys.stdout.flush()
            sys.stderr.write(render_timings(reports, rendered, lang))
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
