"""Command line for the two stages: ``python -m generators artifacts|derive|capture|import``.

    python -m generators artifacts --device auto --step matmul_add   # capture + derive
    python -m generators derive                                      # derive every device set
    python -m generators capture --device cuda --out DIR             # capture only, into DIR
    python -m generators import --device cuda DIR                    # DIR's captures -> derive

The Makefile's ``artifacts`` and ``derive`` targets call the first two. ``capture`` and
``import`` split the stages across machines: capture where the GPU is (it needs only torch and
tqdm there), derive where the site is built.
"""

from __future__ import annotations

import argparse
import logging
import re
import shutil
import sys
import time
from pathlib import Path

from generators.capture import CaptureError, capture_steps, parse_only, resolve_device
from generators.steps import DEVICES, STEPS, UnknownStepError, select_steps
from generators.store import ARTIFACTS_ROOT, CAPTURED_FILES, dump_json, staged_device_set

# derive and the trace processor are imported where they are used: `capture` runs on GPU
# machines that have torch but not the site's packages.

log = logging.getLogger("generators")


def _summary(device: str, manifest: dict, seconds: float, root: Path) -> str:
    files = manifest["files"]
    traces = sum(1 for f in files.values() if f["kind"] == "trace")
    figures = sum(1 for f in files.values() if f["kind"] == "figure")
    tables = sum(1 for f in files.values() if f["kind"] == "table-csv")
    engine = manifest["trace_processor"]
    return (
        f"{root / device}: {traces} traces, {tables} tables, {figures} figures, "
        f"{len(files)} files in the manifest; trace processor {engine.get('engine')} "
        f"{engine.get('version')}; {seconds:.1f} s"
    )


def cmd_artifacts(args: argparse.Namespace) -> None:
    steps = select_steps(args.step)
    device = resolve_device(args.device)
    started = time.perf_counter()
    from generators.derive import derive_set

    with staged_device_set(device, args.artifacts) as stage:
        results = capture_steps(steps, device, stage)
        manifest = derive_set(stage, device)
    for result in results:
        print(f"captured {result.step}/{result.variant} on {device} in {result.wall_s:.1f} s")
    print(_summary(device, manifest, time.perf_counter() - started, args.artifacts))
    _rebuild_gallery(args.artifacts)


def cmd_capture(args: argparse.Namespace) -> None:
    steps = select_steps(args.step)
    device = resolve_device(args.device)
    out = args.out.resolve()
    started = time.perf_counter()
    only = parse_only(args.only, steps, device) if args.only else None
    results = capture_steps(steps, device, out, keep_going=args.keep_going, only=only)
    log_path = out / "capture-log.json"
    log_path.write_text(
        dump_json(
            {
                "device": device,
                "wall_s": round(time.perf_counter() - started, 1),
                "variants": [
                    {
                        "step": r.step,
                        "variant": r.variant,
                        "wall_s": round(r.wall_s, 1),
                        "error": r.error,
                    }
                    for r in results
                ],
            }
        )
    )
    failed = [r for r in results if r.error]
    for result in results:
        status = (
            f"FAILED: {result.error.splitlines()[0]}" if result.error else f"{result.wall_s:.1f} s"
        )
        print(f"{result.step}/{result.variant} on {device}: {status}")
    if failed:
        raise CaptureError(f"{len(failed)} of {len(results)} captures failed (see {log_path})")


def cmd_import(args: argparse.Namespace) -> None:
    """Bring captures made elsewhere into a device set, then derive the whole set."""
    from generators.derive import derive_set

    source = args.source.resolve()
    known = {s.slug: {v.name for v in s.variants} for s in STEPS}
    found = sorted(
        p
        for p in source.glob("*/*")
        if p.is_dir() and all((p / name).exists() for name in CAPTURED_FILES)
    )
    found = [p for p in found if p.name in known.get(p.parent.name, set())]
    if not found:
        raise CaptureError(
            f"no complete captures (step/variant/{{{', '.join(CAPTURED_FILES)}}}) in {source}"
        )
    started = time.perf_counter()
    with staged_device_set(args.device, args.artifacts) as stage:
        for variant_dir in found:
            target = stage / variant_dir.parent.name / variant_dir.name
            if target.exists():
                shutil.rmtree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(variant_dir, target, ignore=shutil.ignore_patterns(".*"))
            print(f"imported {variant_dir.parent.name}/{variant_dir.name}")
        manifest = derive_set(stage, args.device)
    print(_summary(args.device, manifest, time.perf_counter() - started, args.artifacts))
    _rebuild_gallery(args.artifacts)


def cmd_derive(args: argparse.Namespace) -> None:
    from generators.derive import DeriveError, derive_set

    devices = DEVICES if args.device == "all" else (args.device,)
    present = [d for d in devices if (args.artifacts / d).is_dir()]
    if not present:
        raise DeriveError(
            f"no device set under {args.artifacts} ({', '.join(devices)}): "
            "run `make artifacts` first"
        )
    for device in present:
        started = time.perf_counter()
        with staged_device_set(device, args.artifacts) as stage:
            manifest = derive_set(stage, device, only_step=args.step)
        print(_summary(device, manifest, time.perf_counter() - started, args.artifacts))
    if args.step is None:  # a one-step derive leaves the gallery as it is (it reads every set)
        _rebuild_gallery(args.artifacts)


def _rebuild_gallery(artifacts: Path) -> None:
    """The doctor's report on every trace of every set (``artifacts/doctor/``)."""
    from generators.doctor.gallery import build_gallery

    started = time.perf_counter()
    out = build_gallery(artifacts, progress=log.info)
    print(f"{out}: doctor gallery; {time.perf_counter() - started:.1f} s")


def _known_errors() -> tuple[type[BaseException], ...]:
    """Errors reported as one clear line (the derive stage's only where it is installed)."""
    errors: list[type[BaseException]] = [CaptureError, UnknownStepError, ValueError, OSError]
    try:
        from generators.derive import DeriveError
        from generators.tp import TraceOpenError
    except ImportError:
        return tuple(errors)
    return (*errors, DeriveError, TraceOpenError)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generators", description=__doc__)
    parser.add_argument(
        "--artifacts", type=Path, default=ARTIFACTS_ROOT, help="artifacts folder (default: ours)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log every step")
    sub = parser.add_subparsers(dest="command", required=True)
    art = sub.add_parser("artifacts", help="capture traces, then derive everything")
    art.add_argument("--device", default="auto", help="auto (default), cuda or cpu")
    art.add_argument("--step", default=None, help="one step slug (default: all)")
    art.set_defaults(run=cmd_artifacts)
    der = sub.add_parser("derive", help="re-derive tables, values and figures from the traces")
    der.add_argument("--device", default="all", choices=["all", *DEVICES])
    der.add_argument("--step", default=None, help="re-derive one step only (the rest is kept)")
    der.set_defaults(run=cmd_derive)
    cap = sub.add_parser("capture", help="capture only, into a folder (no derive)")
    cap.add_argument("--device", default="auto", help="auto (default), cuda or cpu")
    cap.add_argument("--step", default=None, help="one step slug (default: all)")
    cap.add_argument("--out", type=Path, required=True, help="folder for <step>/<variant>/")
    cap.add_argument("--keep-going", action="store_true", help="skip failed variants, go on")
    cap.add_argument(
        "--only", default=None, help="comma-separated step/variant or step names (default: all)"
    )
    cap.set_defaults(run=cmd_capture)
    imp = sub.add_parser("import", help="add captures made elsewhere to a device set, derive")
    imp.add_argument("--device", required=True, choices=list(DEVICES))
    imp.add_argument("source", type=Path, help="folder holding <step>/<variant>/ captures")
    imp.set_defaults(run=cmd_import)
    args = parser.parse_args(argv)
    # Workloads run with the repository as their working folder: hand them absolute paths.
    args.artifacts = args.artifacts.resolve()
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        args.run(args)
    except _known_errors() as exc:
        # Errors raised inside the staging copy name files there; name the live set instead.
        message = re.sub(r"/\.staging-(cuda|cpu)/", r"/\1/", str(exc))
        print(f"error: {message}", file=sys.stderr)
        print(
            f"The artifacts in {args.artifacts} were left as they were before this run.",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        print("interrupted: the artifacts were left as they were before this run.", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
