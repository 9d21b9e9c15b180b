"""Command line for the two stages: ``python -m generators artifacts|derive``.

    python -m generators artifacts --device auto --step matmul_add   # capture + derive
    python -m generators derive                                      # derive every device set

The Makefile's ``artifacts`` and ``derive`` targets call these.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import time
from pathlib import Path

from generators.capture import CaptureError, capture_steps, resolve_device
from generators.derive import DeriveError, derive_set
from generators.steps import DEVICES, UnknownStepError, select_steps
from generators.store import ARTIFACTS_ROOT, staged_device_set
from generators.tp import TraceOpenError

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
    with staged_device_set(device, args.artifacts) as stage:
        results = capture_steps(steps, device, stage)
        manifest = derive_set(stage, device)
    for result in results:
        print(f"captured {result.step}/{result.variant} on {device} in {result.wall_s:.1f} s")
    print(_summary(device, manifest, time.perf_counter() - started, args.artifacts))


def cmd_derive(args: argparse.Namespace) -> None:
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
            manifest = derive_set(stage, device)
        print(_summary(device, manifest, time.perf_counter() - started, args.artifacts))


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
    der.set_defaults(run=cmd_derive)
    args = parser.parse_args(argv)
    # Workloads run with the repository as their working folder: hand them absolute paths.
    args.artifacts = args.artifacts.resolve()
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        args.run(args)
    except (CaptureError, DeriveError, TraceOpenError, UnknownStepError, ValueError) as exc:
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
