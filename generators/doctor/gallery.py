"""The doctor's gallery: its report on every trace the guide captured and on the public
reference traces the tests use, written by ``python -m generators derive`` into
``artifacts/doctor/``.

``gallery.json`` holds one entry per trace (where it comes from, its GPU, the findings and what
the trace cannot show) and ``<slug>.html`` the full report. Both are deterministic: no run times,
no absolute paths, so a fresh derive reproduces them byte for byte.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from generators.doctor.detectors import load_detectors
from generators.doctor.examine import examine
from generators.doctor.render import render_html, to_json_obj
from generators.steps import REPO_ROOT
from generators.store import MANIFEST_FILE, atomic_write_text, dump_json
from generators.tp import open_trace

REFERENCE_DIR = REPO_ROOT / "tests" / "data" / "reference-traces"
GALLERY_DIR = "doctor"
GALLERY_FILE = "gallery.json"
#: Links in a gallery report lead from artifacts/doctor/<slug>.html back to the site's root.
SITE_ROOT_FROM_REPORT = "../../"


@dataclass(frozen=True)
class GalleryTrace:
    slug: str
    path: Path
    #: "guide" for the guide's own captures, "reference" for another project's trace.
    origin: str
    label: str
    #: Where the trace comes from: the capture (device set, step, variant) or the upstream
    #: repository, commit and path with its licence.
    source: str


def reference_traces(folder: Path = REFERENCE_DIR) -> list[GalleryTrace]:
    """The reference traces, described by the table in their README (the one place that says
    where each comes from)."""
    readme = (folder / "README.md").read_text(encoding="utf-8")
    out = []
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[0].endswith(".json.gz"):
            continue
        name, gpu, what, source, licence = cells
        what = re.sub(r"`([^`]*)`", r"\1", what)
        out.append(
            GalleryTrace(
                slug="reference-" + name.removesuffix(".json.gz"),
                path=folder / name,
                origin="reference",
                label=f"{gpu}: {what}",
                source=f"{source} ({licence})",
            )
        )
    return out


def guide_traces(artifacts: Path) -> list[GalleryTrace]:
    """Every trace in the committed device sets, in manifest order."""
    out = []
    for device in ("cuda", "cpu"):
        manifest_path = artifacts / device / MANIFEST_FILE
        if not manifest_path.exists():
            continue
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        for rel, entry in sorted(manifest["files"].items()):
            if entry.get("kind") != "trace":
                continue
            step, variant = entry["step"], entry["variant"]
            gpu = manifest["variants"][step][variant]["environment"].get("gpu")
            out.append(
                GalleryTrace(
                    slug=f"{device}-{step}-{variant}",
                    path=artifacts / device / rel,
                    origin="guide",
                    label=f"{step} / {variant} ({gpu or 'CPU'})",
                    source=f"artifacts/{device}/{rel}",
                )
            )
    return out


def build_gallery(artifacts: Path, *, progress=print) -> Path:  # type: ignore[no-untyped-def]
    """Run the doctor on every gallery trace and write ``artifacts/doctor/``; returns it.

    The folder is written beside the old one and swapped in at the end, so a failure halfway
    leaves the previous gallery whole.
    """
    detectors = load_detectors()
    traces = guide_traces(artifacts) + reference_traces()
    out = artifacts / GALLERY_DIR
    stage = artifacts / f".{GALLERY_DIR}.staging"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    entries = []
    for n, trace in enumerate(traces, 1):
        progress(f"doctor gallery [{n}/{len(traces)}] {trace.slug}")
        with open_trace(trace.path) as tp:
            report = examine(tp, trace.path, detectors)
        report.path = Path(trace.source if trace.origin == "guide" else trace.path.name)
        report.seconds = None  # no run times in committed files
        report.key = "t1"
        data = to_json_obj(report, SITE_ROOT_FROM_REPORT)
        data.pop("seconds", None)
        data["trace"] = trace.source if trace.origin == "guide" else trace.path.name
        for finding in data["findings"]:
            finding.pop("sql", None)  # the detector file is one click away on the site
        entries.append(
            {
                "slug": trace.slug,
                "origin": trace.origin,
                "label": trace.label,
                "source": trace.source,
                "report": f"{trace.slug}.html",
                **data,
            }
        )
        atomic_write_text(
            stage / f"{trace.slug}.html",
            render_html([report], SITE_ROOT_FROM_REPORT, with_findings=False),
        )
    atomic_write_text(stage / GALLERY_FILE, dump_json({"traces": entries}))
    old = artifacts / f".{GALLERY_DIR}.old"
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    stage.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    return out
