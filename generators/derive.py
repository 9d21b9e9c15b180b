"""Stage 2, derive: traces in, tables / values / figures / manifest out. Same traces, same bytes.

For every variant folder of a device set, opens ``trace.json.gz`` once, runs the step's queries
and figure-data queries, and writes:

* ``<query>.csv`` and ``<query>.md`` for table queries,
* ``values.json`` with one object per values query,
* ``<figure>.svg`` for each figure (its data is the CSV of the query it draws), and its twin
  in each other language of the guide (``<figure>.ja.svg``, see ``generators.i18n``),

then the set's ``MANIFEST.json``. Everything is written inside the staging copy of the set
(see ``generators.store``), so a bad trace fails the run without touching the live artifacts.
"""

from __future__ import annotations

import csv
import io
import logging
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from generators import figures, i18n, tp_launch, trace_json
from generators.parallel import run_each
from generators.queries import Query, load_query
from generators.steps import EVERY_TRACE_QUERIES, REPO_ROOT, STEPS, Step
from generators.store import (
    CAPTURE_FILE,
    CAPTURED_FILES,
    KEY_AVERAGES_FILE,
    MANIFEST_FILE,
    MANIFEST_NOTE,
    MEMORY_SNAPSHOT_FILE,
    OPTIONAL_CAPTURED_FILES,
    TRACE_FILE,
    atomic_write_bytes,
    atomic_write_text,
    dump_json,
    read_json,
    sha256_file,
    source_hashes,
    sources_changed,
)
from generators.table_cells import cell_html
from generators.tp import engine_description, open_trace
from generators.units import format_value

log = logging.getLogger(__name__)


VALUES_FILE = "values.json"
SQL_MODULES = REPO_ROOT / "generators" / "sql"


class DeriveError(RuntimeError):
    """Deriving failed; the message names the trace or query that caused it."""


@dataclass(frozen=True)
class Rows:
    columns: list[str]
    rows: list[dict[str, object]]


def _plain(value: object) -> object:
    """numpy scalars from the query iterator -> plain Python values (JSON-safe, stable repr)."""
    return value.item() if hasattr(value, "item") else value


def run_query(tp: object, query: Query) -> Rows:
    result = tp.query(query.sql)  # type: ignore[attr-defined]
    columns = list(result.column_names)
    rows = [{c: _plain(getattr(row, c)) for c in columns} for row in result]
    return Rows(columns, rows)


def to_csv(rows: Rows) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=rows.columns, lineterminator="\n")
    writer.writeheader()
    for row in rows.rows:
        writer.writerow({c: "" if row[c] is None else row[c] for c in rows.columns})
    return buffer.getvalue()


#: What a table shows when its query found nothing in the trace.
NO_ROWS = i18n.NO_ROWS["en"]


def to_markdown(rows: Rows, query: Query) -> str:
    """A Markdown table with readable headers and formatted values (units from column names)."""
    if query.shown:
        missing = [c for c in query.shown if c not in rows.columns]
        if missing:
            raise DeriveError(
                f"{query.path.name}: '-- shown:' names columns the query does not return: "
                + ", ".join(missing)
            )
        rows = Rows(list(query.shown), rows.rows)
    titles = [query.column_titles.get(c, c.replace("_", " ")) for c in rows.columns]
    numeric = [
        all(isinstance(r[c], int | float) or r[c] is None for r in rows.rows) for c in rows.columns
    ]
    if not rows.rows:
        # A sentence, not a row of dashes: the page says plainly that nothing matched.
        return f"*{NO_ROWS}*\n"
    lines = [
        "| " + " | ".join(cell_html(t) for t in titles) + " |",
        "| " + " | ".join("---:" if n else "---" for n in numeric) + " |",
    ]
    for row in rows.rows:
        # A number keeps its unit on its line (56.1 µs, 69.7 %): a no-break space between them.
        cells = [
            cell_html(
                format_value(row[c], c).replace(" ", "\u00a0") if num else format_value(row[c], c)
            )
            for c, num in zip(rows.columns, numeric, strict=True)
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def derive_engine() -> str | None:
    """Artifacts are derived with the pinned offline engine unless one is named explicitly
    (:func:`generators.tp_launch.pinned_engine`): the committed files must be reproducible byte
    for byte on any machine; the manifest records an engine chosen on purpose."""
    return tp_launch.pinned_engine()


def derive_sources(step: Step) -> list[Path]:
    """The files whose content decides the derived artifacts of ``step``."""
    gen = REPO_ROOT / "generators"
    paths = [
        gen / name
        for name in (
            "derive.py",
            "units.py",
            "table_cells.py",
            "store.py",
            "queries/__init__.py",
            "trace_json.py",  # kernel_overlaps: values read from the JSON itself
        )
    ]
    paths += sorted(SQL_MODULES.glob("*.sql"))
    paths += [load_query(q).path for q in _queries_of(step)]
    # Figure modules import one another (and the package's style): hash them all.
    paths += sorted((gen / "figures").glob("*.py")) if step.figures else []
    return paths


def _queries_of(step: Step, variant: str | None = None, device: str = "cuda") -> list[str]:
    """Queries to run: the variant's tables and values, then its figures' data.

    Without ``variant``: every query any variant of the step may run (for source hashes).
    """
    if variant is None:
        names = [*step.queries, *EVERY_TRACE_QUERIES]
        for v in step.variants:
            names += [q for q in (*(v.queries or ()), *v.cuda_queries) if q not in names]
        figures = step.figures
    else:
        names = list(step.queries_for(variant, device))
        figures = tuple(f for f in step.figures if variant in f.variants)
    for fig in figures:
        if fig.data not in names:
            names.append(fig.data)
    return names


def derive_variant(step: Step, variant_dir: Path, device: str) -> list[Path]:
    """Derive every output of one captured variant; returns the files written."""
    trace = variant_dir / TRACE_FILE
    capture = read_json(variant_dir / CAPTURE_FILE)
    table_queries = step.queries_for(variant_dir.name, device)
    queries = [load_query(name) for name in _queries_of(step, variant_dir.name, device)]
    if device != "cuda":
        queries = [q for q in queries if not q.needs_cuda]
    written: list[Path] = []
    values: dict[str, dict[str, object]] = {}
    results: dict[str, Rows] = {}
    with open_trace(trace, engine=derive_engine()) as tp:
        for query in queries:
            try:
                results[query.name] = run_query(tp, query)
            except Exception as exc:  # the engine's message is the useful part
                raise DeriveError(f"{query.path.name} failed on {trace}: {exc}") from exc
    for query in queries:
        rows = results[query.name]
        if query.output == "values":
            if len(rows.rows) != 1:
                raise DeriveError(
                    f"{query.path.name} must return exactly one row on {trace}, "
                    f"got {len(rows.rows)}"
                )
            values[query.name] = rows.rows[0]
            continue
        outputs = [(".csv", to_csv(rows))]
        if query.name in table_queries:  # figure data only needs its CSV (linked under the figure)
            outputs.append((".md", to_markdown(rows, query)))
        for suffix, text in outputs:
            path = variant_dir / f"{query.name}{suffix}"
            atomic_write_text(path, text)
            written.append(path)
    # Kernels Perfetto's importer dropped are not in the SQL's tables: where it dropped any, what
    # the file says about the kernels that overlap the one before them on their stream.
    if values.get("trace_import", {}).get("kernels_dropped"):
        values["kernel_overlaps"] = trace_json.kernel_overlaps(trace_json.load_trace_fast(trace))
    # Timings measured outside the profiler by the workload itself (e.g. time to first token),
    # so pages can set them beside what the trace says.
    wall_clock = capture.get("settings", {}).get("wall_clock")
    if isinstance(wall_clock, dict):
        values["capture"] = {k: v for k, v in sorted(wall_clock.items()) if not isinstance(v, dict)}
    # The workload's own settings (sizes, dtype, model shape), so pages describe a workload from
    # the record of the run they show instead of retyping it.
    settings = capture_settings(capture)
    if values and settings:
        values["settings"] = settings
    if values:
        path = variant_dir / VALUES_FILE
        atomic_write_text(path, dump_json(values))
        written.append(path)
    for fig in step.figures:
        if variant_dir.name not in fig.variants:
            continue
        if fig.data not in results and device != "cuda" and load_query(fig.data).needs_cuda:
            continue  # drawn from a CUDA-only question: the CPU set has no such figure
        for lang in i18n.LANGUAGES:  # the same data, drawn with each edition's words
            context = figures.FigureContext(
                step=step.slug,
                step_title=(step.title_ja or step.title) if lang == "ja" else step.title,
                variant=variant_dir.name,
                device=device,
                environment=capture.get("environment", {}),
                lang=lang,
            )
            svg = figures.render_svg(fig.name, results[fig.data].rows, context)
            path = variant_dir / i18n.figure_file(f"{fig.name}.svg", lang)
            atomic_write_bytes(path, svg)
            written.append(path)
    return written


def capture_settings(capture: dict[str, object]) -> dict[str, object]:
    """The capture record's scalar settings, one level of nesting flattened (``model`` ->
    ``model_hidden_size``), wall-clock timings left to ``capture``. Lists are left out: a
    placeholder shows one value."""
    raw = capture.get("settings")
    out: dict[str, object] = {}
    if not isinstance(raw, dict):
        return out
    for key, value in raw.items():
        if key == "wall_clock":
            continue
        if isinstance(value, dict):
            out.update(
                (f"{key}_{k}", v)
                for k, v in value.items()
                if isinstance(v, str | int | float | bool) or v is None
            )
        elif isinstance(value, str | int | float | bool) or value is None:
            out[key] = value
    return dict(sorted(out.items()))


def _clean_derived(variant_dir: Path) -> None:
    for path in variant_dir.iterdir():
        if path.name not in CAPTURED_FILES + OPTIONAL_CAPTURED_FILES:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()


def _derive_job(job: tuple[str, Path, str]) -> None:
    """One variant's derive, as a worker process runs it: (step slug, variant folder, device)."""
    slug, variant_dir, device = job
    step = next(s for s in STEPS if s.slug == slug)
    _clean_derived(variant_dir)
    derive_variant(step, variant_dir, device)


def _trace_weight(job: tuple[str, Path, str]) -> float:
    """A variant's expected cost: the size of its trace on disk."""
    return (job[1] / TRACE_FILE).stat().st_size


def derive_set(stage: Path, device: str, only_step: str | None = None) -> dict:
    """Re-derive the captured variants in ``stage`` (all, or one step's) and write the manifest.

    The manifest always covers the whole set; ``only_step`` just skips re-deriving the others,
    whose derived files are kept as they are.
    """
    jobs: list[tuple[Step, Path]] = []
    known = {s.slug: s for s in STEPS}
    for step_dir in sorted(p for p in stage.iterdir() if p.is_dir()):
        if step_dir.name not in known:
            log.warning("dropping %s: no step %r in the registry", step_dir, step_dir.name)
            shutil.rmtree(step_dir)
            continue
        step = known[step_dir.name]
        variant_names = {v.name for v in step.variants}
        for variant_dir in sorted(p for p in step_dir.iterdir() if p.is_dir()):
            if variant_dir.name not in variant_names:
                log.warning("dropping %s: %s has no variant of that name", variant_dir, step.slug)
                shutil.rmtree(variant_dir)
                continue
            missing = [f for f in CAPTURED_FILES if not (variant_dir / f).exists()]
            if missing:
                raise DeriveError(f"{variant_dir} is missing {', '.join(missing)}: recapture it")
            jobs.append((step, variant_dir))
    todo = [(step.slug, variant_dir, device) for step, variant_dir in jobs]
    todo = [job for job in todo if only_step in (None, job[0])]
    with tqdm(total=len(todo), desc=f"derive ({device})", unit="trace", file=sys.stderr) as bar:

        def finished(job: tuple[str, Path, str]) -> None:
            bar.set_postfix_str(f"{job[0]}/{job[1].name}")
            bar.update()

        for _ in run_each(_derive_job, todo, weight=_trace_weight, done=finished):
            pass
    manifest = build_manifest(stage, device, jobs)
    atomic_write_text(stage / MANIFEST_FILE, dump_json(manifest))
    stale = manifest["stale_captures"]
    if stale:
        log.warning(
            "%d %s captures came from workload code that has changed since (recapture with "
            "`make artifacts DEVICE=%s`): %s",
            len(stale),
            device,
            device,
            ", ".join(stale),
        )
    return manifest


def stale_captures(jobs: list[tuple[Step, Path]]) -> list[str]:
    """Variants whose capture record names source hashes that differ from today's files."""
    stale = []
    for step, variant_dir in jobs:
        if sources_changed(read_json(variant_dir / CAPTURE_FILE).get("sources", {})):
            stale.append(f"{step.slug}/{variant_dir.name}")
    return stale


def build_manifest(stage: Path, device: str, jobs: list[tuple[Step, Path]]) -> dict:
    files: dict[str, dict[str, object]] = {}
    variants: dict[str, dict[str, object]] = {}
    for step, variant_dir in jobs:
        capture = read_json(variant_dir / CAPTURE_FILE)
        derived_sources = source_hashes(derive_sources(step))
        variants.setdefault(step.slug, {})[variant_dir.name] = {
            key: capture.get(key)
            for key in ("captured_at", "environment", "schedule", "settings", "command")
        }
        for path in sorted(variant_dir.iterdir()):
            kind = _kind_of(path.name)
            files[path.relative_to(stage).as_posix()] = {
                "sha256": sha256_file(path),
                "step": step.slug,
                "variant": variant_dir.name,
                "kind": kind,
                "sources": capture.get("sources", {})
                if path.name in CAPTURED_FILES + OPTIONAL_CAPTURED_FILES
                else derived_sources,
            }
    # Say plainly what this set lacks: every registered variant this device can run that has no
    # capture here, and every CUDA-only variant not captured (all of them on a CPU set).
    captured = {f"{step.slug}/{variant_dir.name}" for step, variant_dir in jobs}
    not_captured = sorted(f"{s.slug}/{v.name}" for s in STEPS for v in s.variants_for(device))
    needs_cuda = sorted(f"{s.slug}/{v.name}" for s in STEPS for v in s.variants if v.needs_cuda)
    return {
        "note": MANIFEST_NOTE,
        "device_set": device,
        "not_captured": [name for name in not_captured if name not in captured],
        "needs_cuda_not_captured": [name for name in needs_cuda if name not in captured],
        # Captures whose workload code has changed since: their data stand, but what the changed
        # workload adds (a new timing, a new file) is missing until they are captured again.
        "stale_captures": stale_captures(jobs),
        "trace_processor": engine_description(engine=derive_engine()),
        "variants": variants,
        "files": files,
    }


def _kind_of(name: str) -> str:
    kinds = {
        TRACE_FILE: "trace",
        KEY_AVERAGES_FILE: "profiler-table",
        CAPTURE_FILE: "capture-record",
        VALUES_FILE: "values",
        MEMORY_SNAPSHOT_FILE: "memory-snapshot",
    }
    if name in kinds:
        return kinds[name]
    return {".csv": "table-csv", ".md": "table-markdown", ".svg": "figure"}.get(
        Path(name).suffix, "other"
    )
