"""The doctor's gallery: its report on every trace the guide captured and on the public
reference traces the tests use, written by ``python -m generators derive`` into
``artifacts/doctor/``.

``gallery.json`` holds one entry per trace (where it comes from, its GPU, the trust gate and the
findings, each text a reader sees also in Japanese: ``seen_ja``, ``text_ja``, ``value_ja``, the
evidence rows' ``what_ja`` and ``location_ja``), ``<slug>.html`` the full report and
``<slug>.ja.html`` the same report in Japanese. All are deterministic: no run times, no absolute
paths, so a fresh derive reproduces them byte for byte.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from generators.doctor.detectors import Detector, load_detectors
from generators.doctor.examine import examine
from generators.doctor.render import render_html, to_json_obj
from generators.parallel import run_each
from generators.steps import REPO_ROOT
from generators.store import MANIFEST_FILE, atomic_write_text, dump_json
from generators.tp import open_trace
from generators.tp_launch import pinned_engine

REFERENCE_DIR = REPO_ROOT / "tests" / "data" / "reference-traces"
GALLERY_DIR = "doctor"
GALLERY_FILE = "gallery.json"
#: Links in a gallery report lead from artifacts/doctor/<slug>.html back to the site's root (each
#: edition publishes the reports in its language under its own root: docs/hooks/doctor.py).
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
    #: ``label`` in Japanese (the same for the guide's traces: step, variant and device).
    label_ja: str = ""


def reference_traces(folder: Path = REFERENCE_DIR) -> list[GalleryTrace]:
    """The reference traces, described by the table in their README (the one place that says
    where each comes from, and what each is, in English and in Japanese)."""
    readme = (folder / "README.md").read_text(encoding="utf-8")
    out = []
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not cells[0].endswith(".json.gz"):
            continue
        name, gpu, what, what_ja, source, licence = (re.sub(r"`([^`]*)`", r"\1", c) for c in cells)
        out.append(
            GalleryTrace(
                slug="reference-" + name.removesuffix(".json.gz"),
                path=folder / name,
                origin="reference",
                label=f"{gpu}: {what}",
                source=f"{source} ({licence})",
                label_ja=f"{gpu}: {what_ja}",
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
                    label_ja=f"{step} / {variant} ({gpu or 'CPU'})",
                )
            )
    return out


@functools.cache
def _detectors() -> list[Detector]:
    """The detectors, read once per process."""
    return load_detectors()


def _examine_one(trace: GalleryTrace) -> tuple[dict, dict[str, str]]:
    """The doctor on one gallery trace, as a worker process runs it: the gallery entry, and the
    report page in each language."""
    with open_trace(trace.path, engine=pinned_engine()) as tp:
        report = examine(tp, trace.path, _detectors())
    report.path = Path(trace.source if trace.origin == "guide" else trace.path.name)
    report.seconds = None  # no run times in committed files
    report.key = "t1"
    if trace.origin == "reference":
        report.provenance = trace.source
    data = to_json_obj(report, SITE_ROOT_FROM_REPORT)
    data.pop("seconds", None)
    data["trace"] = trace.source if trace.origin == "guide" else trace.path.name
    for finding in data["findings"]:
        finding.pop("sql", None)  # the detector file is one click away on the site
    entry = {
        "slug": trace.slug,
        "origin": trace.origin,
        "label": trace.label,
        "label_ja": trace.label_ja,
        "source": trace.source,
        "report": f"{trace.slug}.html",
        "report_ja": f"{trace.slug}.ja.html",
        **data,
    }
    pages = {
        lang: render_html([report], SITE_ROOT_FROM_REPORT, with_findings=False, lang=lang)
        for lang in ("en", "ja")
    }
    return entry, pages


def build_gallery(artifacts: Path, *, progress=print) -> Path:  # type: ignore[no-untyped-def]
    """Run the doctor on every gallery trace and write ``artifacts/doctor/``; returns it.

    The folder is written beside the old one and swapped in at the end, so a failure halfway
    leaves the previous gallery whole.
    """
    traces = guide_traces(artifacts) + reference_traces()
    out = artifacts / GALLERY_DIR
    stage = artifacts / f".{GALLERY_DIR}.staging"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    entries = []
    finished = 0

    def done(trace: GalleryTrace) -> None:
        nonlocal finished
        finished += 1
        progress(f"doctor gallery [{finished}/{len(traces)}] {trace.slug}")

    weight = lambda trace: trace.path.stat().st_size  # noqa: E731 (the biggest start first)
    for trace, (entry, pages) in zip(
        traces, run_each(_examine_one, traces, weight=weight, done=done), strict=True
    ):
        entries.append(entry)
        for lang, name in (("en", f"{trace.slug}.html"), ("ja", f"{trace.slug}.ja.html")):
            atomic_write_text(stage / name, pages[lang])
    atomic_write_text(stage / GALLERY_FILE, dump_json({"traces": entries}))
    old = artifacts / f".{GALLERY_DIR}.old"
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    stage.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    return out
