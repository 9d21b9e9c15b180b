"""Stage 1, capture: run each variant's workload under the profiler, one process per variant.

A fresh process per variant keeps captures independent (no allocator, cuBLAS or compile cache
state carried from one variant to the next) and lets a crash in one variant be reported by name.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from generators.env import CAPTURE_TIMEOUT_S as TIMEOUT_VAR
from generators.steps import REPO_ROOT, Step, Variant
from generators.store import CAPTURE_FILE, atomic_write_text, dump_json, source_hashes

log = logging.getLogger(__name__)

# A workload that hangs (a stuck GPU, a deadlocked compile) must not hang the whole run.
CAPTURE_TIMEOUT_S = int(TIMEOUT_VAR.get())


class CaptureError(RuntimeError):
    """A workload failed; the message names the step, the variant and the command."""


@dataclass(frozen=True)
class CaptureResult:
    step: str
    variant: str
    wall_s: float
    error: str | None = None


def cuda_available() -> bool:
    """Ask torch in a subprocess, so the parent never initialises CUDA itself."""
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.cuda.is_available())"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.returncode == 0 and probe.stdout.strip() == "True"


def resolve_device(requested: str) -> str:
    """``auto`` becomes ``cuda`` when a GPU is usable, else ``cpu``; ``cuda`` without one fails."""
    if requested == "auto":
        return "cuda" if cuda_available() else "cpu"
    if requested == "cuda" and not cuda_available():
        raise CaptureError(
            "DEVICE=cuda was requested but torch sees no CUDA device on this machine. "
            "Capture the CPU set with DEVICE=cpu, or run on a GPU runner "
            "(the 'artifacts' workflow in .github/workflows/)."
        )
    if requested not in ("cpu", "cuda"):
        raise CaptureError(f"unknown DEVICE {requested!r}: use auto, cuda or cpu")
    return requested


def capture_sources(step: Step) -> list[Path]:
    """The files whose content decides what a capture of ``step`` records."""
    gen = REPO_ROOT / "generators"
    return [step.workload_path, gen / "profiling.py"]


def parse_only(text: str, steps: tuple[Step, ...], device: str) -> frozenset[str]:
    """``step/variant`` or ``step`` names, comma-separated, as the ``step/variant`` pairs they mean.

    Every name must exist and run on ``device``: a typo must not silently capture nothing.
    """
    runnable = {s.slug: [v.name for v in s.variants_for(device)] for s in steps}
    chosen: set[str] = set()
    for item in filter(None, (part.strip() for part in text.split(","))):
        slug, _, name = item.partition("/")
        if slug not in runnable:
            raise CaptureError(f"--only {item!r}: no step {slug!r} (known: {', '.join(runnable)})")
        if not name:
            chosen.update(f"{slug}/{v}" for v in runnable[slug])
        elif name in runnable[slug]:
            chosen.add(item)
        else:
            raise CaptureError(
                f"--only {item!r}: {slug} has no variant {name!r} that runs on {device} "
                f"(those that do: {', '.join(runnable[slug])})"
            )
    if not chosen:
        raise CaptureError("--only names no variant")
    return frozenset(chosen)


def capture_variant(step: Step, variant: Variant, device: str, out_dir: Path) -> CaptureResult:
    args = variant.args_for(device)
    if args is None:
        raise CaptureError(f"{step.slug}/{variant.name} needs CUDA and cannot run on {device}")
    cmd = [
        sys.executable,
        "-m",
        step.workload_module,
        *args,
        "--device",
        device,
        "--out",
        str(out_dir),
    ]
    log.info("capture %s/%s: %s", step.slug, variant.name, " ".join(cmd[1:]))
    out_dir.mkdir(parents=True, exist_ok=True)
    pythonpath = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": pythonpath}
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd,
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=CAPTURE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        raise CaptureError(
            f"capture of {step.slug}/{variant.name} on {device} did not finish within "
            f"{CAPTURE_TIMEOUT_S} s (set {TIMEOUT_VAR.name} to allow more): "
            f"{' '.join(cmd[1:])}"
        ) from exc
    wall_s = time.perf_counter() - started
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise CaptureError(
            f"capture of {step.slug}/{variant.name} on {device} failed "
            f"(exit {proc.returncode}): {' '.join(cmd[1:])}\n{tail}"
        )
    # Record what produced the trace and how long the whole process took, in the capture record.
    record_path = out_dir / CAPTURE_FILE
    record = json.loads(record_path.read_text())
    record.update(
        step=step.slug,
        variant=variant.name,
        command=["python", *cmd[1:-2], "--out", "<folder>"],
        process_wall_s=round(wall_s, 3),
        sources=source_hashes(capture_sources(step)),
    )
    atomic_write_text(record_path, dump_json(record))
    return CaptureResult(step.slug, variant.name, wall_s)


def capture_steps(
    steps: tuple[Step, ...],
    device: str,
    stage: Path,
    *,
    keep_going: bool = False,
    only: frozenset[str] | None = None,
) -> list[CaptureResult]:
    """Capture every variant of ``steps`` that can run on ``device`` into ``stage``.

    Variants that compile run last, so that a run cut short by a time limit has the cheap,
    fundamental captures first. With ``keep_going`` a failed variant is logged and skipped
    (its folder removed) instead of ending the run; the failures come back in the results.
    ``only`` keeps the named ``step/variant`` pairs (see ``parse_only``).
    """
    jobs = [(step, variant) for step in steps for variant in step.variants_for(device)]
    if only is not None:
        jobs = [(s, v) for s, v in jobs if f"{s.slug}/{v.name}" in only]
    jobs.sort(key=lambda job: "--compile" in (job[1].args_for(device) or ()))
    skipped = [f"{s.slug}/{v.name}" for s in steps for v in s.variants if v.needs_cuda]
    if skipped and device != "cuda":
        log.info("not captured on %s (needs CUDA): %s", device, ", ".join(skipped))
    results = []
    with tqdm(jobs, desc=f"capture ({device})", unit="variant", file=sys.stderr) as bar:
        for step, variant in bar:
            bar.set_postfix_str(f"{step.slug}/{variant.name}")
            out_dir = stage / step.slug / variant.name
            try:
                results.append(capture_variant(step, variant, device, out_dir))
            except CaptureError as exc:
                if not keep_going:
                    raise
                log.error("%s", exc)
                shutil.rmtree(out_dir, ignore_errors=True)
                results.append(CaptureResult(step.slug, variant.name, 0.0, error=str(exc)))
    return results
