"""The trace processor opens every reference trace, and what it shows agrees with the JSON.

Counts are taken twice: with SQL in the trace processor, and straight from the
JSON file (generators.trace_json). The importer drops complete events that
partly overlap another on the same track; those are found from the JSON and
accounted for exactly, never assumed.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from generators import trace_json as tj
from generators.tp import (
    TraceOpenError,
    close_engines,
    engine_description,
    engine_pids,
    open_trace,
)
from tests.reference_traces import (
    A100_ADD,
    A100_TRITON,
    MI300X,
    REFERENCE_TRACES,
    WITHOUT_FLOWS,
    WITHOUT_GPU_ACTIVITY,
    all_traces,
)

TEST_SQL = Path(__file__).parent / "data" / "sql"
TRACE_NAMES = [p.name for p in all_traces()]
#: The traces that hold GPU work (and those that also link it to its launches with flows).
GPU_TRACE_NAMES = [n for n in TRACE_NAMES if n not in WITHOUT_GPU_ACTIVITY]
FLOW_TRACE_NAMES = [n for n in TRACE_NAMES if n not in WITHOUT_FLOWS]
LAUNCH_CATS = set(tj.LAUNCH_CATEGORIES)
GPU_CATS = ("kernel",)

FLOW_PAIRS_SQL = """
SELECT so.category AS out_cat, si.category AS in_cat, COUNT(*) AS n
FROM flow f
JOIN slice so ON so.id = f.slice_out
JOIN slice si ON si.id = f.slice_in
JOIN args a ON a.arg_set_id = f.arg_set_id AND a.key = 'cat'
WHERE a.string_value = 'ac2g'
GROUP BY 1, 2
"""


@dataclass
class Observed:
    """What the trace processor reports for one trace."""

    by_cat: Counter[str]
    kernel_dur_ns: int
    drop_stat: int
    flow_pairs: Counter[tuple[str, str]]
    launches_with_several_kernels: int
    max_kernels_per_launch: int
    engine_pid: int


@dataclass
class FromJson:
    """What the JSON file says for the same trace."""

    events: list[dict[str, Any]]
    by_cat: Counter[str]
    overlaps: list[tj.Overlap]
    dropped_by_cat: Counter[str]
    complete_ac2g_ids: int


def _observe(path: Path) -> Observed:
    with open_trace(path, engine="wasm") as tp:
        by_cat = Counter(
            {
                r.cat: r.n
                for r in tp.query(
                    "SELECT COALESCE(category, '') AS cat, COUNT(*) AS n FROM slice GROUP BY 1"
                )
            }
        )
        kdur = next(
            iter(tp.query("SELECT COALESCE(SUM(dur), 0) AS d FROM slice WHERE category = 'kernel'"))
        ).d
        drops = next(
            iter(
                tp.query(
                    "SELECT COALESCE(SUM(value), 0) AS v FROM stats "
                    "WHERE name = 'slice_drop_overlapping_complete_event'"
                )
            )
        ).v
        pairs = Counter({(r.out_cat, r.in_cat): r.n for r in tp.query(FLOW_PAIRS_SQL)})
        per_launch = list(
            tp.query(
                "SELECT f.slice_out, COUNT(*) AS n FROM flow f "
                "JOIN slice so ON so.id = f.slice_out JOIN slice si ON si.id = f.slice_in "
                "WHERE so.category IN ('cuda_runtime', 'cuda_driver') AND si.category = 'kernel' "
                "GROUP BY f.slice_out"
            )
        )
        return Observed(
            by_cat=by_cat,
            kernel_dur_ns=int(kdur),
            drop_stat=int(drops),
            flow_pairs=pairs,
            launches_with_several_kernels=sum(1 for r in per_launch if r.n > 1),
            max_kernels_per_launch=max((r.n for r in per_launch), default=0),
            engine_pid=tp.engine.pid,
        )


def _from_json(path: Path) -> FromJson:
    events = tj.load_events(path)
    overlaps = tj.find_partial_overlaps(events)
    return FromJson(
        events=events,
        by_cat=tj.count_by_cat(events),
        overlaps=overlaps,
        dropped_by_cat=tj.dropped_by_cat(overlaps),
        complete_ac2g_ids=len(tj.complete_flow_ids(events)),
    )


@pytest.fixture(scope="module")
def traces() -> dict[str, tuple[Observed, FromJson]]:
    out = {}
    for path in all_traces():
        out[path.name] = (_observe(path), _from_json(path))
    return out


def _observed(name: str, traces) -> tuple[Observed, FromJson]:
    if name not in traces:
        pytest.fail(f"reference trace {name} not found in {REFERENCE_TRACES}")
    return traces[name]


@pytest.fixture(params=TRACE_NAMES)
def trace(request, traces) -> tuple[Observed, FromJson]:
    return _observed(request.param, traces)


@pytest.fixture(params=GPU_TRACE_NAMES)
def gpu_trace(request, traces) -> tuple[Observed, FromJson]:
    return _observed(request.param, traces)


@pytest.fixture(params=FLOW_TRACE_NAMES)
def flow_trace(request, traces) -> tuple[Observed, FromJson]:
    return _observed(request.param, traces)


def test_the_traces_without_gpu_work_or_flows_lack_them(traces):
    """The exceptions to the GPU checks below are exactly the traces that lack what they read."""
    for name in WITHOUT_FLOWS:
        seen, js = traces[name]
        assert not seen.flow_pairs and js.complete_ac2g_ids == 0, name
        assert (seen.by_cat["kernel"] == 0) is (name in WITHOUT_GPU_ACTIVITY), name


def test_all_reference_traces_open(traces):
    assert set(traces) == set(TRACE_NAMES)
    assert len(traces) >= 5


def test_gpu_kernel_count_matches_json_minus_drops(gpu_trace):
    seen, js = gpu_trace
    assert js.by_cat["kernel"] > 0
    assert seen.by_cat["kernel"] == js.by_cat["kernel"] - js.dropped_by_cat["kernel"]


def test_launch_count_matches_json_minus_drops(gpu_trace):
    seen, js = gpu_trace
    json_launches = sum(js.by_cat[c] for c in LAUNCH_CATS)
    dropped = sum(js.dropped_by_cat[c] for c in LAUNCH_CATS)
    assert json_launches > 0
    assert sum(seen.by_cat[c] for c in LAUNCH_CATS) == json_launches - dropped


def test_every_category_is_accounted_for(trace):
    seen, js = trace
    for cat, n in js.by_cat.items():
        assert seen.by_cat[cat] == n - js.dropped_by_cat[cat], cat


def test_drop_stat_equals_overlaps_found_in_json(trace):
    seen, js = trace
    assert seen.drop_stat == len(js.overlaps)


def test_kernel_durations_sum_to_json(trace):
    seen, js = trace
    kept = [e for e in tj.complete_events(js.events, GPU_CATS)]
    dropped = {id(o.event) for o in js.overlaps}
    kept = [e for e in kept if id(e) not in dropped]
    # Exactly, with the importer's arithmetic ...
    assert seen.kernel_dur_ns == sum(tj.perfetto_ns(e["dur"]) for e in kept)
    # ... and to within a nanosecond per kernel at the file's own precision.
    assert abs(seen.kernel_dur_ns - tj.total_dur_ns(kept)) <= len(kept)


def test_ac2g_flows_match_json(flow_trace):
    seen, js = flow_trace
    predicted = tj.predict_flow_links(js.events, overlaps=js.overlaps)
    pairs = Counter((str(link.out.get("cat")), str(link.into.get("cat"))) for link in predicted)
    assert seen.flow_pairs == pairs
    total = sum(seen.flow_pairs.values())
    if js.complete_ac2g_ids == 0:
        # A trace written without launch arrows (the sampled HTA training trace): none seen.
        assert total == 0 and tj.count_by_cat(js.events, ph=None)["ac2g"] == 0
        return
    assert 0 < total <= js.complete_ac2g_ids
    # Nearly every flow links a launch to the GPU work it queued.
    from_launch = sum(n for (a, _), n in seen.flow_pairs.items() if a in LAUNCH_CATS)
    assert from_launch >= 0.9 * total


def test_each_launch_links_to_at_most_one_kernel(flow_trace):
    seen, _ = flow_trace
    assert seen.launches_with_several_kernels == 0
    assert seen.max_kernels_per_launch == 1


def test_v100_drops_are_the_known_ones(traces):
    seen, js = traces["v100-resnet-train.json.gz"]
    assert js.by_cat["kernel"] == 4350
    assert js.dropped_by_cat["kernel"] == 8
    assert js.dropped_by_cat["cuda_runtime"] == 288
    assert seen.by_cat["kernel"] == 4342
    # None of them overlaps at the file's own nanosecond precision: they collide
    # only once the importer has rounded the timestamps through a double.
    assert all(o.rounding_artefact for o in js.overlaps)
    assert tj.find_partial_overlaps(js.events, timestamps="exact") == []


def test_a100_drops_are_real_overlaps(traces):
    _, js = traces["a100-simple-add.json.gz"]
    assert js.dropped_by_cat == Counter({"cuda_sync": 7})
    assert not any(o.rounding_artefact for o in js.overlaps)


def test_engine_is_reused_between_traces_and_gives_same_answers(reference_traces):
    close_engines()
    path = A100_ADD
    first = _observe(path)
    second = _observe(reference_traces[-1])
    third = _observe(path)
    assert first.engine_pid == second.engine_pid == third.engine_pid
    assert first == third
    with open_trace(path, engine="wasm", reuse=False) as tp:
        assert tp.engine.pid != first.engine_pid
        n = next(iter(tp.query("SELECT COUNT(*) AS n FROM slice WHERE category = 'kernel'"))).n
    assert n == first.by_cat["kernel"]
    assert engine_pids() == [first.engine_pid]


def test_sql_package_registration():
    path = A100_TRITON
    with open_trace(path, engine="wasm", sql_packages=[Path(f"{TEST_SQL}@guide_test")]) as tp:
        rows = list(
            tp.query(
                "INCLUDE PERFETTO MODULE guide_test.kernel_totals; "
                "SELECT name, n FROM kernel_totals"
            )
        )
    assert [(r.name, r.n) for r in rows] == [("triton_poi_fused_add_cos_sin_0", 1)]
    # Without a name the folder name is the package name.
    with open_trace(path, engine="wasm", sql_packages=[TEST_SQL]) as tp:
        rows = list(
            tp.query("INCLUDE PERFETTO MODULE sql.kernel_totals; SELECT n FROM kernel_totals")
        )
    assert [r.n for r in rows] == [1]


def test_default_package_is_guide():
    path = A100_TRITON
    with open_trace(path, engine="wasm") as tp, pytest.raises(Exception) as err:
        tp.query("INCLUDE PERFETTO MODULE guide.no_such_module_here; SELECT 1")
    # The package is registered (only the module is unknown) ...
    assert "unknown module 'guide.no_such_module_here'" in str(err.value)
    # ... unlike a package that is not.
    with open_trace(path, engine="wasm") as tp, pytest.raises(Exception) as err:
        tp.query("INCLUDE PERFETTO MODULE nopkg.x; SELECT 1")
    assert "not found" in str(err.value)
    missing = [Path("/nonexistent/sqlpkg")]
    with (
        pytest.raises(TraceOpenError, match="SQL package folder not found"),
        open_trace(path, engine="wasm", sql_packages=missing),
    ):
        pass


def test_export_is_refused_with_a_clear_error(tmp_path):
    out = tmp_path / "out.perfetto"
    path = A100_TRITON
    with (
        open_trace(path, engine="wasm") as tp,
        pytest.raises(NotImplementedError, match="export"),
    ):
        tp.export(str(out), "perfetto")
    assert not out.exists()


def test_engine_description_is_stable_and_serialisable():
    a = engine_description(engine="wasm")
    b = engine_description(engine="wasm")
    assert a == b
    assert json.loads(json.dumps(a)) == a
    assert a["engine"] == "wasm-node"
    assert a["version"].startswith("v52.")
    assert a["node"].startswith("v24.")


def test_reused_engine_keeps_sql_packages():
    close_engines()
    pids = set()
    for path in (A100_TRITON, MI300X) * 2:
        with open_trace(path, engine="wasm", sql_packages=[TEST_SQL]) as tp:
            pids.add(tp.engine.pid)
            n = next(
                iter(
                    tp.query(
                        "INCLUDE PERFETTO MODULE sql.kernel_totals; "
                        "SELECT SUM(n) AS n FROM kernel_totals"
                    )
                )
            ).n
            assert (
                n
                == next(
                    iter(tp.query("SELECT COUNT(*) AS n FROM slice WHERE category = 'kernel'"))
                ).n
                > 0
            )
    assert len(pids) == 1


def _kernel(ts: str, dur: str, name: str = "k", tid: int = 7) -> dict[str, Any]:
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": tid, "ts": ts, "dur": dur}


def test_kernel_overlaps_reads_the_file_stream_by_stream() -> None:
    """Derive's kernel_overlaps: a kernel that starts before the previous one on its stream has
    ended, by how much, at the file's own (nanosecond) precision; other streams never count."""
    events = [
        _kernel("100.000", "0.640", "gemm"),
        _kernel("100.544", "0.352", "reduce"),  # 96 ns before the GEMM's end
        _kernel("101.000", "0.640", "gemm"),
        _kernel("101.640", "0.352", "reduce"),  # right at the end: no overlap
        _kernel("102.000", "0.641", "gemm"),
        _kernel("102.609", "0.352", "reduce"),  # 32 ns
        _kernel("100.100", "0.352", "other", tid=8),  # another stream, inside the first GEMM
        {"ph": "X", "cat": "cpu_op", "name": "mm", "pid": 1, "tid": 1, "ts": "100.1", "dur": "5"},
    ]
    found = tj.kernel_overlaps(events)
    assert found == {
        "kernels": 7,
        "overlapping_kernels": 2,
        "overlap_min_ns": 32,
        "overlap_max_ns": 96,
        "overlapping_name": "reduce",
        "overlapping_name_overlaps": 2,
        "overlapping_name_kernels": 3,
        "overlapping_name_pct": pytest.approx(200 / 3),
        # 640, 352 and 641 ns: multiples of 32 (not all of 64), give or take 1 ns.
        "kernel_dur_step_ns": 32,
    }
    nothing = tj.kernel_overlaps(events[:1] + events[2:3])
    assert nothing["overlapping_kernels"] == 0 and nothing["overlap_min_ns"] is None


def test_kernel_overlaps_agree_with_the_importers_kernel_drops(traces):
    """On a real trace the kernels that overlap their predecessor are the kernels the importer
    dropped (the A100 trace's drops are synchronisations, not kernels: none there)."""
    for name in ("a100-simple-add.json.gz", "v100-resnet-train.json.gz"):
        _, js = traces[name]
        exact = tj.find_partial_overlaps(js.events, timestamps="exact")
        found = tj.kernel_overlaps(js.events)
        assert found["kernels"] == js.by_cat["kernel"]
        assert found["overlapping_kernels"] == sum(o.cat == "kernel" for o in exact)
