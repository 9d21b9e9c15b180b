"""`python -m generators.doctor diff BEFORE AFTER`: the guide's eager and compiled MLP against what
their committed artifacts say (kernels per step, the kernels each step runs, the doctor's
findings in the gallery), the busy share against a count from the JSON, the memory peak against
the JSON of a reference trace that records it, the matching rules on the guide's own kernel
names, every format in both languages with every name escaped, and bad input. Each trace is
opened once in this module.
"""

from __future__ import annotations

import csv
import gzip
import html
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from generators.doctor.__main__ import first_trace
from generators.doctor.diff import (
    APPEARED,
    MATCHED_BY,
    VANISHED,
    Diff,
    Run,
    RunRows,
    Slot,
    compare,
    diff_traces,
    match_kernels,
    run_rows,
)
from generators.doctor.examine import TraceTask, examine_in_worker
from generators.doctor.render_diff import md_cell, render_diff
from tests import reference_traces as ref
from tests.doctor_cli import run_doctor

REPO = Path(__file__).resolve().parent.parent
MLP = REPO / "artifacts" / "cuda" / "mlp"
EAGER, COMPILED = MLP / "eager", MLP / "compiled"
SYNTHETIC = REPO / "tests" / "data" / "doctor-traces"
HOSTILE = SYNTHETIC / "hostile-names.json"
GRAPHS = SYNTHETIC / "graphs-and-comm.json"
JOB = [SYNTHETIC / "job-rank-0.json", SYNTHETIC / "job-rank-1.json"]
URL = "http://127.0.0.1:8000/"


def _values(variant: Path) -> dict:
    return json.loads((variant / "values.json").read_text(encoding="utf-8"))


def _kernel_names(variant: Path) -> list[str]:
    """The kernels of one step, as the artifact's table lists them (mlp_work.csv)."""
    with (variant / "mlp_work.csv").open(encoding="utf-8", newline="") as f:
        return [row["name"] for row in csv.DictReader(f) if row["kind"] == "GPU kernel"]


@pytest.fixture(scope="module")
def mlp() -> Diff:
    diff, errors = diff_traces(EAGER / "trace.json.gz", COMPILED / "trace.json.gz")
    assert errors == [] and diff is not None
    return diff


def test_the_kernel_count_change_is_the_artifacts(mlp: Diff) -> None:
    """Kernels per step before and after, and so the change, are those the artifacts' values
    give (mlp_summary's work_per_step: every kernel launched from inside a step, per step)."""
    before = _values(EAGER)["mlp_summary"]["work_per_step"]
    after = _values(COMPILED)["mlp_summary"]["work_per_step"]
    change = mlp.change("kernels")
    assert (change.before, change.after) == (before, after)
    assert change.delta == after - before
    data = json.loads(render_diff(mlp, "json"))
    assert data["per_step"]["kernels"]["change"] == after - before
    # The artifacts count over the same steps the comparison averages over: the active ones.
    for run, variant in ((mlp.before, EAGER), (mlp.after, COMPILED)):
        capture = json.loads((variant / "capture.json").read_text(encoding="utf-8"))
        assert run.steps == capture["schedule"]["active"]
    assert sum((k.after.per_step if k.after else 0) for k in mlp.kernels) == after
    assert sum((k.before.per_step if k.before else 0) for k in mlp.kernels) == before


def test_kernels_that_vanished_and_appeared_are_the_artifacts(mlp: Diff) -> None:
    """The kernels eager runs and compiled does not (the GELU and the multiply, ATen's) vanished;
    the one compiled runs and eager does not (Inductor's fused kernel) appeared; the GEMMs, the
    same cuBLAS kernels in both, are matched by name (compiled passes an `out` tensor, so the
    recorded shapes differ)."""
    eager, compiled = _kernel_names(EAGER), _kernel_names(COMPILED)
    vanished = {k.before.name for k in mlp.vanished if k.before}
    appeared = {k.after.name for k in mlp.appeared if k.after}
    assert vanished == set(eager) - set(compiled) and len(vanished) == 2
    assert appeared == set(compiled) - set(eager) and len(appeared) == 1
    assert {k.family for k in mlp.vanished} == {"PyTorch ATen"}
    assert {k.family for k in mlp.appeared} == {"Inductor (Triton)"}
    matched = [k for k in mlp.kernels if k.matched]
    assert {k.before.name for k in matched if k.before} == set(eager) & set(compiled)
    assert all(k.before and k.after and k.before.name == k.after.name for k in matched)
    assert {k.family for k in matched} == {"cuBLAS"}
    # Each GEMM runs as often per step after as before: one that repeats is matched by place.
    for k in matched:
        assert k.before and k.after
        assert k.before.per_step == eager.count(k.before.name)
        assert k.after.per_step == compiled.count(k.after.name)
    text = render_diff(mlp, "text")
    assert "not matched: before only (vanished)" in text
    assert "Kernels of the run after with no match before (appeared): 1 kind, 1 per step." in text


def test_findings_fixed_and_new_are_the_gallerys(mlp: Diff) -> None:
    """The doctor's findings on each trace, as the committed gallery records them: found only
    after are new, found in both are still found, found only before are fixed."""
    gallery = json.loads((REPO / "artifacts" / "doctor" / "gallery.json").read_text("utf-8"))
    found = {
        t["trace"]: {f["id"] for f in t["findings"]}
        for t in gallery["traces"]
        if t["trace"] in (f"{p.relative_to(REPO)}/trace.json.gz" for p in (EAGER, COMPILED))
    }
    before = found[f"{EAGER.relative_to(REPO)}/trace.json.gz"]
    after = found[f"{COMPILED.relative_to(REPO)}/trace.json.gz"]
    by_status: dict[str, set[str]] = {}
    for f in mlp.findings:
        by_status.setdefault(f.status, set()).add(f.id)
    assert by_status.get("new", set()) == after - before
    assert by_status.get("fixed", set()) == before - after
    assert by_status.get("still", set()) == before & after
    assert after - before, "the compiled run should add a finding (its wrappers)"


def _union_ns(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def busy_pct_from_json(path: Path) -> float:
    """The GPU's busy share of the profiled steps, read from the JSON in Python: per step, the
    union of kernels, copies and sets clipped to the step; over the steps' total width."""
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    steps = [
        (e["ts"], e["ts"] + e["dur"])
        for e in events
        if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")
    ]
    gpu = [
        (e["ts"], e["ts"] + e["dur"])
        for e in events
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
    ]
    busy = sum(
        _union_ns([(max(s, ws), min(e, we)) for s, e in gpu if s < we and e > ws])
        for ws, we in steps
    )
    return 100 * busy / sum(we - ws for ws, we in steps)


def test_busy_share_agrees_with_the_json(mlp: Diff) -> None:
    change = mlp.change("busy_pct")
    assert change.before == pytest.approx(busy_pct_from_json(EAGER / "trace.json.gz"), rel=1e-3)
    assert change.after == pytest.approx(busy_pct_from_json(COMPILED / "trace.json.gz"), rel=1e-3)


@pytest.fixture(scope="module")
def bert() -> Run:
    """The reference BERT trace (it records the allocator's memory events), opened once."""
    result = examine_in_worker(TraceTask(ref.H100_BERT, "before", run_rows))
    assert result.error is None and result.rows is not None
    return Run(ref.H100_BERT, result.report, result.rows)


def test_a_run_against_itself(bert: Run) -> None:
    """Every kernel matched by name and shape, every number unchanged, nothing left unmatched,
    every finding still found; the memory peak is the JSON's highest CUDA total in the step."""
    diff = compare(bert, bert)
    assert diff.kernels and all(k.how == MATCHED_BY[0] and not k.changed for k in diff.kernels)
    assert all(c.delta in (0, None) for c in diff.changes)
    assert not diff.vanished and not diff.appeared
    assert not diff.ops_only_before and not diff.ops_only_after
    assert {f.status for f in diff.findings} == {"still"}
    with gzip.open(ref.H100_BERT, "rt") as f:
        events = json.load(f)["traceEvents"]
    (step,) = [
        e
        for e in events
        if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")
    ]
    peak = max(
        e["args"]["Total Allocated"]
        for e in events
        if e.get("name") == "[memory]"
        and e["args"].get("Device Type") == 1
        and step["ts"] <= e["ts"] < step["ts"] + step["dur"]
    )
    assert diff.change("memory_peak_bytes").before == peak
    assert bert.rows.summary["memory_peak_device"] == 0
    text = render_diff(diff, "text")
    assert "Every kernel and operator of each run was matched in the other." in text


# The guide's own kernel names (artifacts/cuda/mlp/*/mlp_work.csv).
GEMM_A = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"
GEMM_B = "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT"
FUSED = "triton_poi_fused__unsafe_view_gelu_mul_0"


def _run(slots: list[Slot], steps: int = 2) -> Run:
    report = SimpleNamespace(findings=[], silent=[], limitations=[], device="NVIDIA H200")
    summary = {"steps": steps, "memory_peak_device": None}
    return Run(Path("t.json"), report, RunRows(summary, slots, {}))


def _slot(name: str, shape: str | None, occurrence: int, position: float, family: str) -> Slot:
    work = "GEMM" if family == "cuBLAS" else "pointwise"
    return Slot(name, family, work, shape, occurrence, "aten::mm", 2, 2000, position)


def test_matching_by_name_shape_place_then_family() -> None:
    """A name that repeats is matched by place among its namesakes; one left with another shape
    is matched by name; a GEMM that changed its kernel by family and work; the rest is not
    matched and says which side it came from."""
    s1, s2 = "[8192, 768] × [768, 3072]", "[8192, 3072] × [3072, 768]"
    before = _run(
        [
            _slot(GEMM_A, s1, 1, 1, "cuBLAS"),
            _slot(GEMM_A, s1, 2, 2, "cuBLAS"),
            _slot(GEMM_A, s1, 3, 3, "cuBLAS"),
            _slot(GEMM_B, s2, 1, 4, "cuBLAS"),
        ]
    )
    after = _run(
        [
            _slot(GEMM_A, s1, 1, 1, "cuBLAS"),
            _slot(GEMM_A, s1, 2, 2, "cuBLAS"),
            _slot(GEMM_A, s2, 1, 3, "cuBLAS"),
            _slot(FUSED, None, 1, 4, "Inductor (Triton)"),
        ],
        steps=1,
    )
    changes = match_kernels(before, after)
    by_how = {k.how: k for k in changes}
    same = by_how[MATCHED_BY[0]]
    assert same.before and same.after and same.before.name == GEMM_A
    # Two namesakes matched in place; 4 runs over 2 steps before, 2 over 1 step after.
    assert (same.before.per_step, same.after.per_step) == (2, 4)
    shape = by_how[MATCHED_BY[1]]
    assert shape.before and shape.after
    assert (shape.before.shape, shape.after.shape) == (s1, s2)
    # GEMM_B has no namesake after, and the fused kernel is not a GEMM: nothing to pair.
    assert MATCHED_BY[2] not in by_how
    assert by_how[VANISHED].before and by_how[VANISHED].before.name == GEMM_B
    assert by_how[APPEARED].after and by_how[APPEARED].after.name == FUSED
    # With a GEMM after instead of the fused kernel, the family pass pairs them.
    after.rows.slots[3] = _slot(GEMM_B.replace("192x128", "256x128"), s2, 1, 4, "cuBLAS")
    family = {k.how: k for k in match_kernels(before, after)}[MATCHED_BY[2]]
    assert family.before and family.before.name == GEMM_B and family.changed


@pytest.fixture(scope="module")
def hostile() -> Diff:
    """Two of the hand-written traces: one holds names with markup, Markdown and a terminal
    escape (make_traces.py)."""
    diff, errors = diff_traces(GRAPHS, HOSTILE)
    assert errors == [] and diff is not None
    return diff


def test_every_format_in_both_languages_escapes_every_name(hostile: Diff) -> None:
    kernel = next(k.after.name for k in hostile.appeared if k.after and "<script>" in k.after.name)
    op = next(o.name for o in hostile.ops_only_after if "<script>" in o.name)
    for lang, heading, words in (
        ("en", "Before and after", "Not matched"),
        ("ja", "変更前と変更後", "対応が見つからなかったもの"),
    ):
        text = render_diff(hostile, "text", lang)
        assert text.startswith(f"== {heading}") and words in text
        assert "\x1b" not in text and op in text
        md = render_diff(hostile, "markdown", lang)
        assert md.startswith(f"## {heading}") and words in md
        assert "<script>" not in md and "**bold**" not in md and "\x1b" not in md
        page = render_diff(hostile, "html", lang)
        assert f"<h1>{heading}</h1>" in page and words in page
        assert "<script>" not in page and "<script" not in page.split("<body>")[1]
        assert html.escape(op, quote=True) in page
        assert f'lang="{lang}"' in page
    # What else a name could start in Markdown: a link, emphasis, strike-through.
    assert md_cell("[x](javascript:alert(1)) _a_ ~~b~~ \\_") == (
        "\\[x\\](javascript:alert(1)) \\_a\\_ \\~\\~b\\~\\~ \\\\\\_"
    )
    data = json.loads(render_diff(hostile, "json", "ja"))
    assert kernel in data["not_matched"]["kernels_appeared"]
    assert op in data["not_matched"]["operators_only_after"]
    assert data["per_step"]["kernels"]["before"] == hostile.change("kernels").before


def test_cli_exposed_communication_of_the_handmade_ranks() -> None:
    """`diff` on the command line: the hand-written job's two ranks (make_traces.py: 24
    all-reduces a step, 18 of them alone; rank 0's run 70 µs, rank 1's 50 µs)."""
    result = run_doctor("diff", *map(str, JOB), "-q", "--only", "comm-exposed", "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    exposed, comm = data["per_step"]["exposed_ns"], data["per_step"]["comm_ns"]
    assert (exposed["before"], exposed["after"]) == (18 * 70_000, 18 * 50_000)
    assert (comm["before"], comm["after"]) == (24 * 70_000, 24 * 50_000)
    assert data["before"]["steps"] == data["after"]["steps"] == 2
    # Same kernels, same places: all matched by name and shape.
    assert {k["matched_by"] for k in data["kernels"]} == {MATCHED_BY[0]}
    assert [f["status"] for f in data["findings"]] == ["still"]


def test_cli_bad_input(tmp_path: Path) -> None:
    """A trace that cannot be read is named, with exit status 2 and no traceback; so is each
    of two; a folder is refused."""
    whole = JOB[0].read_bytes()
    broken = tmp_path / "broken.json"
    broken.write_bytes(whole[: len(whole) // 2])
    missing = tmp_path / "missing.json.gz"
    result = run_doctor("diff", str(broken), str(missing), "-q")
    assert result.returncode == 2 and result.stdout == ""
    assert f"error: {broken}" in result.stderr and f"error: {missing}" in result.stderr
    assert "Traceback" not in result.stderr
    folder = run_doctor("diff", str(tmp_path), str(broken), "-q")
    assert folder.returncode == 2 and "a folder" in folder.stderr
    usage = run_doctor("diff", str(broken))
    assert usage.returncode == 2 and "AFTER" in usage.stderr


def test_no_engine_starts_early_for_diff() -> None:
    """The two traces open in worker processes: an engine started early for the first would sit
    unused beside theirs."""
    traces = [str(p) for p in JOB]
    assert first_trace(traces) == traces[0]
    assert first_trace(["diff", *traces]) is None
