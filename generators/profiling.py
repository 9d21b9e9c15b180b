"""Run a workload under ``torch.profiler`` and write what the guide needs from it.

Every workload in ``generators/workloads/`` builds its tensors, defines the code the reader
runs, and hands a zero-argument ``step`` callable to :func:`profile_steps`. This module owns the
profiler settings so that every trace in the guide is captured the same way:

* ``with_stack=False``: Perfetto's JSON importer drops ``user_annotation`` slices that partly
  overlap ``python_function`` slices, which would hide ``ProfilerStep#N`` and our labels.
* ``record_shapes=True``: later parts compute FLOPs and bytes from input shapes.
* CUDA activity only when the workload really runs on CUDA (asking for it without CUDA only
  produces a warning and a CPU-only trace).

Outputs, all written to temporary names and renamed into place only when complete:
``trace.json.gz`` (Kineto trace), ``key_averages.txt`` (the profiler's own table) and
``capture.json`` (environment, schedule, settings and the wall-clock time of the profiled loop).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import importlib.metadata
import os
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from generators.store import (
    CAPTURE_FILE,
    KEY_AVERAGES_FILE,
    TRACE_FILE,
    atomic_write_bytes,
    dump_json,
)


@dataclass(frozen=True)
class Schedule:
    """The profiler's step schedule (see ``torch.profiler.schedule``)."""

    wait: int = 1
    warmup: int = 1
    active: int = 3

    @property
    def total_steps(self) -> int:
        return self.wait + self.warmup + self.active


def add_common_arguments(parser: argparse.ArgumentParser, *, warmup: int = 0) -> None:
    """Flags shared by every workload: device, untraced warm-up calls, schedule, output."""
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument(
        "--warmup",
        type=int,
        default=warmup,
        help="untraced calls before the profiler starts (they also trigger any compilation)",
    )
    parser.add_argument("--wait", type=int, default=1, help="profiler schedule: skipped steps")
    parser.add_argument(
        "--warmup-steps", type=int, default=1, help="profiler schedule: traced but dropped steps"
    )
    parser.add_argument("--active", type=int, default=3, help="profiler schedule: kept steps")
    parser.add_argument(
        "--out", type=Path, required=True, help="output folder (trace.json.gz and friends)"
    )


def schedule_from_args(args: argparse.Namespace) -> Schedule:
    return Schedule(wait=args.wait, warmup=args.warmup_steps, active=args.active)


def resolve_device(requested: str) -> torch.device:
    if requested == "cuda" and not torch.cuda.is_available():
        raise SystemExit(
            "error: --device cuda was requested but torch.cuda.is_available() is False "
            f"(torch {torch.__version__}, built with CUDA {torch.version.cuda}). "
            "Capture the CPU set with --device cpu, or run on a machine with an NVIDIA GPU."
        )
    return torch.device(requested)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _nvidia_driver() -> str | None:
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip().splitlines()[0] if out.strip() else None


def environment(device: torch.device) -> dict[str, object]:
    """What the trace was captured on: named on every page that shows its data."""
    env: dict[str, object] = {
        "device": device.type,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "cpu_model": _cpu_model(),
        "cpu_threads": torch.get_num_threads(),
        "cuda_runtime": torch.version.cuda,
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env.update(
            gpu=props.name,
            gpu_memory_bytes=props.total_memory,
            gpu_sm_count=props.multi_processor_count,
            gpu_compute_capability=f"{props.major}.{props.minor}",
            nvidia_driver=_nvidia_driver(),
            cudnn=torch.backends.cudnn.version(),
        )
    env["libraries"] = library_versions()
    return env


#: Installed packages whose version can change what a trace shows (kernel choice, fusion, the
#: model's code); recorded when present so that a page can name them.
LIBRARIES = (
    "transformers",
    "triton",
    "liger-kernel",
    "nvidia-cublas",
    "nvidia-cublas-cu12",
    "nvidia-cublas-cu13",
    "nvidia-cudnn-cu12",
    "nvidia-cudnn-cu13",
)


def library_versions() -> dict[str, str]:
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def profile_steps(
    step: Callable[[], object],
    *,
    device: torch.device,
    out_dir: Path,
    sched: Schedule,
    label: str,
    settings: dict[str, object],
    sort_by: str | None = None,
    profile_memory: bool = False,
) -> Path:
    """Profile ``sched.total_steps`` calls of ``step``, each inside ``record_function(label)``.

    Returns the path of the written trace. ``settings`` (the workload's own flags) is stored in
    the capture record so a page can say exactly what ran. ``profile_memory`` adds the
    allocator's ``[memory]`` events (every allocation and free, with the running total).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)

    exported: dict[str, Path] = {}
    tmp_dir = Path(tempfile.mkdtemp(prefix=".capture.", dir=out_dir))

    def on_trace_ready(prof: profile) -> None:
        # Kineto records the export path as the trace's "traceName": export under a relative
        # name from inside the temporary folder, so no machine path ends up in the trace.
        previous = Path.cwd()
        os.chdir(tmp_dir)
        try:
            prof.export_chrome_trace("trace.json")
        finally:
            os.chdir(previous)
        exported["trace"] = tmp_dir / "trace.json"

    try:
        # --8<-- [start:profile]
        with profile(
            activities=activities,
            schedule=schedule(wait=sched.wait, warmup=sched.warmup, active=sched.active, repeat=1),
            on_trace_ready=on_trace_ready,
            record_shapes=True,
            with_stack=False,
            profile_memory=profile_memory,
        ) as prof:
            # No synchronisation inside the loop: it would add a cudaDeviceSynchronize to every
            # step of the trace. The one at the end is the window's closing synchronisation.
            t0 = time.perf_counter()
            for _ in range(sched.total_steps):
                with record_function(label):
                    step()
                prof.step()
            synchronize(device)
            loop_wall_s = time.perf_counter() - t0
        # --8<-- [end:profile]
        if "trace" not in exported:
            raise RuntimeError("the profiler never exported a trace (is the schedule empty?)")

        sort_key = sort_by or (
            "self_cuda_time_total" if device.type == "cuda" else "self_cpu_time_total"
        )
        table = prof.key_averages().table(sort_by=sort_key, row_limit=25, max_name_column_width=60)

        trace_path = out_dir / TRACE_FILE
        # mtime=0 keeps the gzip header free of the capture time.
        atomic_write_bytes(
            trace_path, gzip.compress(exported["trace"].read_bytes(), compresslevel=6, mtime=0)
        )
        atomic_write_bytes(out_dir / KEY_AVERAGES_FILE, (table.rstrip() + "\n").encode())
        record = {
            "label": label,
            "captured_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
            "schedule": asdict(sched),
            "settings": settings,
            "environment": environment(device),
            "loop_wall_s": round(loop_wall_s, 6),
        }
        atomic_write_bytes(
            out_dir / CAPTURE_FILE,
            dump_json(record).encode(),
        )
        return trace_path
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
