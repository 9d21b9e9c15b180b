"""Every claim the Part 4 pages (docs/part-4/) make about their traces, checked on the artifacts.

Claims about GPU-only concepts are checked on the CUDA capture and skipped until one exists;
the SQL behind them is proven on real GPU traces in tests/test_llm_sql.py.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator

import pytest

from tests.claims import (
    capture_record,
    needs_cuda,
    shown_device,
    table,
    trace_events,
    trace_table,
    values,
)

# Tests that read the same traces run in one worker process when `make test TEST_WORKERS=N` shares
# the suite out, so that each trace is imported once (tests/open_traces.py).
pytestmark = pytest.mark.xdist_group("llm-traces")


@pytest.fixture(autouse=True, scope="module")
def _forget_parsed_traces() -> Iterator[None]:
    """The parsed trace files this module's claims share (tests/claims.py) go when it ends."""
    yield
    trace_events.cache_clear()


STEP = "llm"
EAGER, BATCH, LAYERS, GRAPHS = "eager_b1", "eager_b8", "eager_b1_layers", "static_compiled_b1"


def _decode(variant: str, *, cpu_ok: bool = True) -> dict[str, object]:
    return values(STEP, variant, cpu_ok=cpu_ok)["llm_decode"]


def _number(text: str) -> float | None:
    """A CSV cell as a number; an empty cell is SQL NULL (shown as "–")."""
    return None if text == "" else float(text)


def _phases(variant: str, *, cpu_ok: bool = True) -> dict[str, dict[str, float | None]]:
    rows = table(STEP, variant, "llm_phases", cpu_ok=cpu_ok)
    return {r["phase"]: {k: _number(v) for k, v in r.items() if k != "phase"} for r in rows}


def _wall(variant: str, *, cpu_ok: bool = True) -> dict[str, float]:
    """The wall-clock measurements the page shows (values.json "capture")."""
    return values(STEP, variant, cpu_ok=cpu_ok)["capture"]  # type: ignore[return-value]


def _settings(variant: str, *, cpu_ok: bool = True) -> dict:
    return capture_record(STEP, variant, cpu_ok=cpu_ok)["settings"]


# ---- prefill against decode ---------------------------------------------------------------------
@pytest.mark.parametrize("variant", [EAGER, BATCH, LAYERS])
def test_one_prefill_then_one_decode_per_further_token(variant: str) -> None:
    """'one prefill, then one decode for each token after the first'."""
    settings = _settings(variant)
    phases = _phases(variant)
    assert list(phases) == ["prefill", "decode"]
    assert phases["prefill"]["forwards"] == 1
    assert phases["decode"]["forwards"] == settings["new_tokens"] - 1
    assert _decode(variant)["decodes_per_call"] == settings["new_tokens"] - 1


@pytest.mark.parametrize("variant", [EAGER, BATCH])
def test_prefill_and_decode_run_about_the_same_operators(variant: str) -> None:
    """'they run about the same number of CPU operators'."""
    phases = _phases(variant)
    ratio = phases["prefill"]["cpu_ops"] / phases["decode"]["cpu_ops"]
    assert 0.8 <= ratio <= 1.25, ratio


@needs_cuda(STEP, EAGER)
def test_prefill_same_kernel_count_more_kernel_time() -> None:
    """'The GPU capture shows the same of the kernels: about as many per prefill as per decode
    ... the prefill's kernel time per forward is larger than a decode's'."""
    phases = _phases(EAGER, cpu_ok=False)
    ratio = phases["prefill"]["kernels"] / phases["decode"]["kernels"]
    assert 0.75 <= ratio <= 1.33, ratio
    assert phases["prefill"]["kernel_ns"] > 1.5 * phases["decode"]["kernel_ns"]


# ---- overhead-bound decode ----------------------------------------------------------------------
@needs_cuda(STEP, EAGER)
def test_decode_gpu_busy_less_than_half() -> None:
    """'the GPU waits between kernels and is busy for only X of the decode step'."""
    decode = _decode(EAGER, cpu_ok=False)
    assert 0 < decode["gpu_busy_pct"] < 50


@needs_cuda(STEP, EAGER)
def test_kernels_fill_under_a_fifth_of_the_unprofiled_token() -> None:
    """'even against the time per output token with the profiler off, X, the step's kernels would
    fill less than a fifth of it'."""
    d, wall = _decode(EAGER, cpu_ok=False), _wall(EAGER, cpu_ok=False)
    assert d["kernel_ns_per_token"] < 0.2 * wall["tpot_s"] * 1e9


@needs_cuda(STEP, EAGER)
def test_dropped_kernels_are_counted_from_their_launches() -> None:
    """'The kernel count includes a few kernels that the trace itself lacks ... split-K reduction
    kernels ... X per decode step on average. The SQL counts those kernels from their launch
    calls ...; the figure above does not draw them'."""
    d = _decode(EAGER, cpu_ok=False)
    assert 0 < d["dropped_kernels_per_token"] < 0.05 * d["kernels_per_token"]
    assert d["kernels_per_token"] == d["kernel_launches_per_token"]
    decode = _phases(EAGER, cpu_ok=False)["decode"]
    assert decode["kernels"] == decode["kernel_launches"]
    rows = table(STEP, EAGER, "llm_decode_timeline", cpu_ok=False)
    drawn = [r for r in rows if r["category"] == "kernel"]
    assert drawn and all(r["name"] for r in drawn)
    launches = [r for r in rows if "aunchKernel" in r["name"] and r["lane"].startswith("CPU")]
    assert len(drawn) < len(launches)  # the dropped kernels are not drawn


@needs_cuda(STEP, EAGER)
def test_decode_figure_longest_gap_where_the_cpu_ran_no_operator() -> None:
    """'each kernel starts soon after its launch ... The longest stretch with no kernel on the
    stream is marked. In this capture the CPU thread launched nothing during it: it read a value
    back from the GPU (aten::item, with a cudaMemcpyAsync and a cudaStreamSynchronize ...), then
    ran operators that launch no kernel, such as aten::unsqueeze and aten::expand, with stretches
    between them where it ran no operator at all'."""
    rows = table(STEP, EAGER, "llm_decode_timeline", cpu_ok=False)
    kernels = sorted(
        (int(r["start_ns"]), int(r["start_ns"]) + int(r["dur_ns"]))
        for r in rows
        if r["category"] == "kernel"
    )
    gap_start, gap_end = max(
        ((end, nxt[0]) for (_, end), nxt in itertools.pairwise(kernels)),
        key=lambda g: g[1] - g[0],
    )
    ops = sorted(
        (int(r["start_ns"]), int(r["start_ns"]) + int(r["dur_ns"]))
        for r in rows
        if r["lane"].startswith("CPU") and int(r["depth"]) >= 1
    )
    # Some stretch inside the gap is covered by no CPU operator or call.
    free, covered_to = 0, gap_start
    for start, end in ops:
        if end <= covered_to or start >= gap_end:
            continue
        free = max(free, min(start, gap_end) - covered_to)
        covered_to = max(covered_to, end)
    free = max(free, gap_end - covered_to)
    assert free > 0
    # Nothing launched inside the gap but the kernel that ends it; a read-back and views instead.
    cpu = [r for r in rows if r["lane"].startswith("CPU")]
    inside = [r for r in cpu if gap_start <= int(r["start_ns"]) < gap_end]
    launches = [r for r in inside if "aunch" in r["name"]]
    closing = {
        r["launched_by"]
        for r in rows
        if r["category"] == "kernel" and int(r["start_ns"]) == gap_end
    }
    assert all(r["id"] in closing for r in launches)
    names = {r["name"] for r in inside}
    assert {"aten::item", "cudaMemcpyAsync", "cudaStreamSynchronize"} <= names
    assert {"aten::unsqueeze", "aten::expand"} <= names
    # Launch to kernel start: short next to the step, the GPU had nothing queued.
    by_id = {r["id"]: r for r in rows}
    waits = [
        int(r["start_ns"]) - int(by_id[r["launched_by"]]["start_ns"])
        for r in rows
        if r["category"] == "kernel" and r["launched_by"] in by_id
    ]
    waits.sort()
    assert waits and waits[len(waits) // 2] < 100_000


@needs_cuda(STEP, EAGER)
def test_decode_kernels_last_a_few_microseconds() -> None:
    """'Each kernel lasts a few microseconds' (the decode figure; the part's check-yourself
    question): the mean decode kernel, and the mean of every class of them, is under 10 µs."""
    d = _decode(EAGER, cpu_ok=False)
    assert 0 < d["kernel_ns_per_token"] / d["kernels_per_token"] < 10_000
    rows = table(STEP, EAGER, "llm_decode_kernels", cpu_ok=False)
    means = [float(r["mean_ns"]) for r in rows if r["mean_ns"]]
    assert means and all(0 < m < 10_000 for m in means), means


@needs_cuda(STEP, EAGER)
def test_kernels_finish_sooner_than_the_next_launch() -> None:
    """'expect a kernel to finish, on average, sooner than the CPU gets the next one
    launched'."""
    d = _decode(EAGER, cpu_ok=False)
    mean_kernel = d["kernel_ns_per_token"] / d["kernels_per_token"]
    mean_launch_interval = d["token_ns"] / d["kernel_launches_per_token"]
    assert mean_kernel < mean_launch_interval
    assert d["kernels_per_token"] > 0 and d["gpu_idle_ns_per_token"] > 0


def test_decode_step_operators_forward_and_generate() -> None:
    """'A decode step (the forward plus generate's own work ...) runs N CPU operators, M of them
    in the forward (the CPU ops per forward of the phases table) and the rest in generate's own
    work; X of the step's time is spent inside the forward'."""
    d = _decode(EAGER)
    assert 50 < d["forward_share_pct"] <= 100
    assert 0 < d["forward_ops_per_token"] < d["cpu_ops_per_token"]
    assert d["forward_ops_per_token"] == _phases(EAGER)["decode"]["cpu_ops"]


def test_cpu_capture_has_no_kernels() -> None:
    """'On a CPU there is only the thread's lane' / 'there are no kernels' / 'a CPU capture has
    none and shows "–" there': GPU metrics are NULL on a CPU capture, not measured zeros."""
    if shown_device(STEP, EAGER) != "cpu":
        pytest.skip("the page shows a CUDA capture")
    gpu_values = (
        "kernels_per_token",
        "kernel_launches_per_token",
        "graph_launches_per_token",
        "launch_ns_per_token",
        "kernel_ns_per_token",
        "gpu_busy_pct",
        "gpu_idle_ns_per_token",
        "max_gap_ns",
        "kernel_read_bytes_per_s",
    )
    for variant in (EAGER, BATCH, LAYERS):
        d = _decode(variant)
        assert all(d[key] is None for key in gpu_values), {k: d[k] for k in gpu_values}
        for phase in _phases(variant).values():
            gpu = ("kernel_launches", "graph_launches", "kernels", "kernel_ns")
            assert all(phase[key] is None for key in gpu)
        assert all(r["kernel_name"] == "" for r in trace_table(STEP, variant, "llm_attention"))
    for row in table(STEP, LAYERS, "llm_layers"):
        assert row["kernels"] == "" and row["kernel_ns"] == ""
    lanes = {r["lane"] for r in table(STEP, EAGER, "llm_decode_timeline")}
    assert all(lane.startswith("CPU") for lane in lanes)


# ---- memory-bound -------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", [EAGER, BATCH])
def test_weights_dominate_the_bytes_read(variant: str) -> None:
    """'At this prompt length the weights dominate: a decode's attention reads at most N cached
    positions per sequence (the prompt plus the tokens generated so far)'."""
    settings = _settings(variant)
    d = _decode(variant)
    assert d["weight_bytes"] > d["kv_bytes"] > 0
    assert d["read_bytes"] == d["weight_bytes"] + d["kv_bytes"]
    assert d["max_kv_len"] == settings["prompt_len"] + settings["new_tokens"] - 1
    kv_len = max(int(r["kv_len"]) for r in table(STEP, variant, "llm_attention"))
    assert kv_len == d["max_kv_len"]


@pytest.mark.parametrize("variant", [EAGER, BATCH])
def test_cpu_decode_is_not_memory_bound(variant: str) -> None:
    """'The CPU numbers do not show a memory-bound step ... a rate well below what a CPU's
    memory can deliver ... the linear layers take X of the decode step ... The toy model's
    weights are also small enough for much of them to stay in a CPU's caches'."""
    if shown_device(STEP, variant) != "cpu":
        pytest.skip("the page shows a CUDA capture")
    d = _decode(variant)
    assert 0 < d["linear_ns_per_token"] < d["token_ns"]
    assert 0 < d["linear_share_pct"] < 60
    assert d["weight_bytes"] < 32 * 2**20


def test_weight_bytes_match_the_model() -> None:
    """The weights read per decode forward are the linear layers' parameters: every parameter
    except the embedding table and the norm weights (the page says the embedding is not
    counted)."""
    settings = _settings(EAGER)
    model = settings["model"]
    elem = 2 if settings["dtype"] == "bf16" else 4
    embedding = model["vocab_size"] * model["hidden_size"] * elem
    norms = (2 * model["num_hidden_layers"] + 1) * model["hidden_size"] * elem
    assert _decode(EAGER)["weight_bytes"] == model["parameter_bytes"] - embedding - norms


def test_no_percentage_without_a_known_peak() -> None:
    """'A GPU missing from this table, or a CPU, gets no percentage'."""
    for variant in (EAGER, BATCH):
        d = _decode(variant)
        if d["peak_bytes_per_s"] is None:
            assert d["floor_share_pct"] is None and d["read_at_peak_ns"] is None
        else:
            assert 0 < d["floor_share_pct"] <= 100


def test_peaks_table_has_sources() -> None:
    """The peaks table: every row has a vendor source URL."""
    rows = table(STEP, EAGER, "llm_peaks")
    assert {r["gpu"] for r in rows} >= {"H100 SXM", "H200 SXM", "A100 80GB SXM"}
    assert all(r["source"].startswith("https://") for r in rows)


@needs_cuda(STEP, EAGER)
def test_reading_at_peak_is_a_floor() -> None:
    """'The last row is the floor for a decode step ... On the H200 the eager step sits far above
    that floor, and so does the kernel time alone'."""
    d = _decode(EAGER, cpu_ok=False)
    if d["read_at_peak_ns"] is None:
        pytest.skip(f"no peak bandwidth known for {d['device_name']}")
    assert 10 * d["read_at_peak_ns"] < d["token_ns"]
    assert d["read_at_peak_ns"] < d["kernel_ns_per_token"]


@needs_cuda(STEP, EAGER)
def test_eager_decode_is_not_memory_bound_on_the_gpu() -> None:
    """'Eager decoding at batch 1 is nowhere near memory-bound on the H200. Reading those bytes at
    peak bandwidth would fill only a small share of the step ... Counted over the time kernels
    run, the rate is well under the peak ... the aten::linear calls take X of the decode step
    (Y)'."""
    d = _decode(EAGER, cpu_ok=False)
    assert d["device_name"].startswith("NVIDIA H200")
    assert 0 < d["floor_share_pct"] < 10
    assert abs(d["floor_share_pct"] - 100 * d["read_at_peak_ns"] / d["token_ns"]) < 0.1
    assert d["kernel_read_bytes_per_s"] < 0.5 * d["peak_bytes_per_s"]
    assert 0 < d["linear_ns_per_token"] < d["token_ns"]
    assert 0 < d["linear_share_pct"] < 50


# ---- static cache + CUDA graphs -----------------------------------------------------------------
@needs_cuda(STEP, EAGER, GRAPHS)
def test_graph_launch_replaces_kernel_launches() -> None:
    """'A decode forward of this variant runs N CPU operators, launches no kernel one by one and
    makes a single cudaGraphLaunch (the decode row above) ... Ordinary launches are left only in
    generate's own work between forwards (the table counts the whole step)'."""
    eager, graphs = _decode(EAGER, cpu_ok=False), _decode(GRAPHS, cpu_ok=False)
    decode = _phases(GRAPHS, cpu_ok=False)["decode"]
    assert decode["kernel_launches"] == 0 and decode["graph_launches"] == 1
    assert decode["cpu_ops"] == graphs["forward_ops_per_token"]
    assert graphs["forward_ops_per_token"] < eager["forward_ops_per_token"] / 100
    assert graphs["graph_launches_per_token"] == 1 and eager["graph_launches_per_token"] == 0
    assert 0 < graphs["kernel_launches_per_token"] < eager["kernel_launches_per_token"] / 10
    # In the figure's step every ordinary launch comes after the forward's label has ended.
    rows = table(STEP, GRAPHS, "llm_decode_timeline", cpu_ok=False)
    label = next(r for r in rows if r["name"] == "decode")
    label_end = int(label["start_ns"]) + int(label["dur_ns"])
    ordinary = [r for r in rows if r["name"] in ("cudaLaunchKernel", "cuLaunchKernel")]
    ordinary += [r for r in rows if r["name"] in ("cuLaunchKernelEx", "cudaLaunchKernelExC")]
    assert ordinary and all(int(r["start_ns"]) >= label_end for r in ordinary)


def _graph_step(rows: list[dict[str, str]]) -> dict[str, object]:
    """The figure's graphed decode step: its kernels by launcher, and the CPU rows by name."""
    by_id = {r["id"]: r for r in rows}
    kernels = sorted(
        (
            int(r["start_ns"]),
            int(r["start_ns"]) + int(r["dur_ns"]),
            by_id[r["launched_by"]]["name"] if r["launched_by"] in by_id else None,
            r["name"],
        )
        for r in rows
        if r["category"] == "kernel"
    )
    return {"kernels": kernels, "graph": [k for k in kernels if k[2] == "cudaGraphLaunch"]}


@needs_cuda(STEP, EAGER, GRAPHS)
def test_graphs_run_fewer_kernels_fused_by_inductor() -> None:
    """'a decode step runs fewer kernels than in eager mode ... the small kernels are far fewer: in
    place of ATen's one kernel per operator, the graph runs Triton kernels Inductor generated
    (triton_... names, each naming the operators it fuses, among them the norms' casts, squares,
    means and reciprocal square roots)'."""
    eager, graphs = _decode(EAGER, cpu_ok=False), _decode(GRAPHS, cpu_ok=False)
    assert graphs["kernels_per_token"] < eager["kernels_per_token"]
    assert 0 < graphs["small_kernels_per_token"] < eager["small_kernels_per_token"] / 2
    step = _graph_step(table(STEP, GRAPHS, "llm_decode_timeline", cpu_ok=False))
    triton = [k[3] for k in step["graph"] if k[3].startswith("triton_")]
    assert triton and all(re.match(r"triton_(poi|red|per)_fused_", n) for n in triton)
    assert any(all(op in n for op in ("_to_copy", "mean", "pow", "rsqrt")) for n in triton)
    # The eager forward runs no generated kernel.
    eager_rows = table(STEP, EAGER, "llm_decode_timeline", cpu_ok=False)
    assert not any(r["name"].startswith("triton_") for r in eager_rows)


@needs_cuda(STEP, EAGER, GRAPHS)
def test_graphed_step_shorter_but_gpu_still_idle_most_of_it() -> None:
    """'The decode step is several times shorter, in the trace and with the profiler off, and the
    GPU busy share rises several-fold, yet the GPU is still idle for more than half of the
    step'."""
    eager, graphs = _decode(EAGER, cpu_ok=False), _decode(GRAPHS, cpu_ok=False)
    assert graphs["token_ns"] < eager["token_ns"] / 3
    assert _wall(GRAPHS, cpu_ok=False)["tpot_s"] < _wall(EAGER, cpu_ok=False)["tpot_s"] / 3
    assert 3 * eager["gpu_busy_pct"] < graphs["gpu_busy_pct"] < 50


@needs_cuda(STEP, EAGER, GRAPHS)
def test_forward_cpu_drop_is_dispatch_not_launches() -> None:
    """'Its CPU time per decode forward fell from X to Y as its N CPU operators became M, while
    the eager forward's launch calls took only L of it: the rest was Python and operator
    dispatch' (most of the drop is not launch calls)."""
    eager, graphs = _decode(EAGER, cpu_ok=False), _decode(GRAPHS, cpu_ok=False)
    drop = eager["forward_cpu_ns"] - graphs["forward_cpu_ns"]
    assert drop > 0.9 * eager["forward_cpu_ns"]
    assert 0 < eager["forward_launch_ns"] < 0.5 * drop
    assert graphs["forward_ops_per_token"] < eager["forward_ops_per_token"] / 100
    # The decode forward's launch calls are a part of the step's.
    assert eager["forward_launch_ns"] <= eager["launch_ns_per_token"]


@functools.cache
def _op_counts(variant: str, phase: str) -> dict[str, float]:
    """CPU operators per forward of a phase, by name: for 'decode', those of generate's own work
    (from the end of each decode forward to the start of the next forward); for 'prefill', those
    of the prefill forward."""
    from tests.claims import variant_dir
    from tests.open_traces import shared_trace

    window = "ts + dur AS ts, token_dur - dur AS dur" if phase == "decode" else "ts, dur"
    sql = f"""
        INCLUDE PERFETTO MODULE guide.llm;
        WITH w AS (
          SELECT id AS window_id, {window}, track_id FROM guide_llm_forward WHERE phase = '{phase}'
        )
        SELECT s.name, COUNT(*) * 1.0 / (SELECT COUNT(*) FROM w) AS per_forward
        FROM guide_llm_window_slice!(w) AS s
        WHERE s.category = 'cpu_op'
        GROUP BY s.name
    """
    with shared_trace(variant_dir(STEP, variant, cpu_ok=False) / "trace.json.gz") as tp:
        return {r.name: r.per_forward for r in tp.query(sql)}


@needs_cuda(STEP, EAGER, GRAPHS)
def test_generate_own_work_grew_with_the_static_cache() -> None:
    """'generate's own work did not shrink with it; it grew. Per decode step it now runs N CPU
    operators with L ordinary launches and takes T, against N', L' and T' in eager mode. The extra
    operators (more aten::arange and aten::unsqueeze, and aten::le, aten::pad and aten::index,
    which eager decoding's own work does not run) ...'."""
    eager, graphs = _decode(EAGER, cpu_ok=False), _decode(GRAPHS, cpu_ok=False)
    for d in (eager, graphs):
        assert abs(d["own_ns_per_token"] - (d["token_ns"] - d["forward_cpu_ns"])) <= 1
        own_ops = d["cpu_ops_per_token"] - d["forward_ops_per_token"]
        assert d["own_ops_per_token"] == pytest.approx(own_ops)
    assert graphs["own_ops_per_token"] > 1.3 * eager["own_ops_per_token"]
    assert graphs["own_kernel_launches_per_token"] > eager["own_kernel_launches_per_token"]
    assert graphs["own_kernel_launches_per_token"] == graphs["kernel_launches_per_token"]
    assert graphs["own_ns_per_token"] > 1.2 * eager["own_ns_per_token"]
    ops_e, ops_g = _op_counts(EAGER, "decode"), _op_counts(GRAPHS, "decode")
    for op in ("aten::arange", "aten::unsqueeze"):
        assert ops_g[op] > 2 * ops_e[op], op
    for op in ("aten::le", "aten::pad", "aten::index"):
        assert ops_g.get(op, 0) > 0.5 and op not in ops_e, op


@needs_cuda(STEP, EAGER, GRAPHS)
def test_graph_launch_holds_the_cpu_before_the_gpu_starts() -> None:
    """'TorchDynamo Cache Lookup, the guard check ... (G per forward on average), then
    Torch-Compiled Region, which makes M cudaMemcpyAsync calls ... and the cudaGraphLaunch. The
    replay is not free on the CPU: cudaGraphLaunch takes L per forward, P of the forward's CPU
    time, and the graph's first kernel starts only about when the call returns. These are
    profiled times ... with the profiler off the time per output token ... is shorter than the
    profiled step. Until the graph's first kernel the GPU has no kernel of this step to run: on
    average a step's first kernel starts F after the step begins'."""
    graphs = _decode(GRAPHS, cpu_ok=False)
    assert graphs["guard_ns_per_token"] > 0 and _decode(EAGER)["guard_ns_per_token"] is None
    assert graphs["forward_memcpys_per_token"] == 2
    assert graphs["graph_launch_ns_per_token"] == graphs["forward_launch_ns"]  # no other launch
    share = 100 * graphs["graph_launch_ns_per_token"] / graphs["forward_cpu_ns"]
    assert graphs["graph_launch_share_pct"] == pytest.approx(share, rel=1e-3)
    assert 25 < graphs["graph_launch_share_pct"] < 60
    first = graphs["to_first_kernel_ns"]
    assert first > graphs["guard_ns_per_token"] + graphs["graph_launch_ns_per_token"]
    assert _wall(GRAPHS, cpu_ok=False)["tpot_s"] * 1e9 < graphs["token_ns"]
    # In the figure's step: the wrapper, then the launch; the first kernel is the graph's and
    # starts just after the call returns.
    rows = table(STEP, GRAPHS, "llm_decode_timeline", cpu_ok=False)
    step = _graph_step(rows)
    named = {r["name"]: r for r in rows if r["lane"].startswith("CPU")}
    lookup, region = named["TorchDynamo Cache Lookup"], named["Torch-Compiled Region: 0/0"]
    launch = named["cudaGraphLaunch"]
    r0, r1 = int(region["start_ns"]), int(region["start_ns"]) + int(region["dur_ns"])
    assert int(lookup["start_ns"]) < r0 <= int(launch["start_ns"]) < r1
    copies = [
        r
        for r in rows
        if r["name"] == "cudaMemcpyAsync" and r0 <= int(r["start_ns"]) < int(launch["start_ns"])
    ]
    assert len(copies) == graphs["forward_memcpys_per_token"]
    launch_end = int(launch["start_ns"]) + int(launch["dur_ns"])
    assert step["kernels"][0][2] == "cudaGraphLaunch"
    assert 0 <= step["kernels"][0][0] - launch_end < 0.05 * int(launch["dur_ns"])


@needs_cuda(STEP, EAGER, GRAPHS)
def test_graphed_step_waits_for_the_gpu_in_the_stop_check() -> None:
    """'Once launched, the graph's kernels run close to back to back ... The CPU goes on with
    generate's own work ... and queues its short kernels behind the graph, until the stop check
    reads a value back from the GPU: aten::item, whose cudaStreamSynchronize waits until
    everything queued has run. A step makes 1 such call, and the CPU waits in it for W on
    average, while the graph finishes. Then the CPU runs the rest of generate's own work, for A
    on average, while the GPU runs only a few short kernels ... The GPU's idle time lies before
    the launch and after the wait ... faster kernels would shorten the step'; 'Part of that time,
    though, is not work at all'."""
    eager, graphs = _decode(EAGER, cpu_ok=False), _decode(GRAPHS, cpu_ok=False)
    assert graphs["syncs_per_token"] == 1
    assert graphs["sync_ns_per_token"] > 0.1 * graphs["own_ns_per_token"]
    assert graphs["sync_ns_per_token"] > 10 * eager["sync_ns_per_token"]
    assert 0 < graphs["after_sync_ns"] < graphs["own_ns_per_token"]
    rows = table(STEP, GRAPHS, "llm_decode_timeline", cpu_ok=False)
    step = _graph_step(rows)
    graph = step["graph"]
    # The graph runs close to back to back.
    span = graph[-1][1] - graph[0][0]
    busy, covered = 0, None
    for start, end, _, _ in graph:
        if covered is None or start >= covered:
            busy, covered = busy + end - start, end
        elif end > covered:
            busy, covered = busy + end - covered, end
    assert busy > 0.8 * span
    graph_end = max(k[1] for k in graph)
    (sync,) = [r for r in rows if r["name"] == "cudaStreamSynchronize"]
    s0, s1 = int(sync["start_ns"]), int(sync["start_ns"]) + int(sync["dur_ns"])
    item = next(r for r in rows if r["name"] == "aten::item")
    assert int(item["start_ns"]) <= s0 and s1 <= int(item["start_ns"]) + int(item["dur_ns"])
    # The CPU waits while the graph finishes, then for the kernels queued behind it.
    assert s0 < graph_end <= s1
    by_id = {r["id"]: r for r in rows}
    queued = [
        r
        for r in rows
        if r["category"] == "kernel"
        and by_id[r["launched_by"]]["name"] != "cudaGraphLaunch"
        and int(by_id[r["launched_by"]]["start_ns"]) < graph_end <= int(r["start_ns"]) < s1
    ]
    assert queued
    # From the first kernel to the end of the wait the GPU is busy; after it, nearly idle.
    kernels = step["kernels"]
    busy, covered = 0, kernels[0][0]
    for start, end, _, _ in kernels:
        start, end = max(start, covered), min(end, s1)
        if end > start:
            busy, covered = busy + end - start, end
    assert busy > 0.85 * (s1 - kernels[0][0])
    step_end = round((graphs["decode_end_s"] - graphs["decode_start_s"]) * 1e9)
    after = sum(k[1] - k[0] for k in kernels if k[0] >= s1)
    assert after < 0.1 * (step_end - s1)


@needs_cuda(STEP, EAGER, GRAPHS)
def test_graphed_step_against_the_bandwidth_floor() -> None:
    """'The bytes a decode step must read do not depend on how its kernels are launched: the same
    weights and the same cached positions as in eager mode, so the floor is the one the previous
    page computed ... (This variant's trace cannot compute it itself ...) The graphed decode step
    is still many times the floor, and the GPU time of its kernels alone ... several times it.
    The GEMMs take about as long as in eager mode ... and are now most of the kernels' GPU time'."""
    eager, graphs = _decode(EAGER, cpu_ok=False), _decode(GRAPHS, cpu_ok=False)
    same = ("model", "dtype", "batch", "prompt_len", "new_tokens")
    e_set, g_set = _settings(EAGER, cpu_ok=False), _settings(GRAPHS, cpu_ok=False)
    assert {k: e_set[k] for k in same} == {k: g_set[k] for k in same}
    # '(... the whole preallocated cache ... barely moves the floor, since the cache's keys and
    # values, K per step on average in eager mode, are about a hundredth of the bytes, next to W
    # of weights.)': reading every preallocated position adds under 0.1 % to the bytes read.
    assert 0.005 < eager["kv_bytes"] / eager["read_bytes"] < 0.02
    mean_positions = e_set["prompt_len"] + e_set["new_tokens"] / 2  # decodes 1..new_tokens-1
    whole_cache = eager["kv_bytes"] * (e_set["prompt_len"] + e_set["new_tokens"]) / mean_positions
    assert 0 < whole_cache - eager["kv_bytes"] < 0.001 * eager["read_bytes"]
    assert graphs["weight_bytes"] is None and graphs["kv_bytes"] is None
    assert graphs["read_at_peak_ns"] is None
    floor = eager["read_at_peak_ns"]
    assert floor and graphs["peak_bytes_per_s"] == eager["peak_bytes_per_s"]
    assert graphs["token_ns"] > 5 * floor
    assert graphs["kernel_union_ns_per_token"] > 3 * floor
    assert 0.8 < graphs["gemm_ns_per_token"] / eager["gemm_ns_per_token"] < 1.25
    # '... and part of that difference is bookkeeping: this trace keeps all N split-K reduce
    # kernels of a step (T), where the eager trace lost D of its S to the importer'.
    reduce_ns = graphs["splitk_reduce_ns_per_token"]
    assert graphs["splitk_reduce_kept_per_token"] == graphs["splitk_gemms_per_token"]
    assert graphs["dropped_kernels_per_token"] == 0
    assert eager["dropped_kernels_per_token"] > 0.8 * eager["splitk_gemms_per_token"]
    assert 0 < reduce_ns < graphs["gemm_ns_per_token"] - eager["gemm_ns_per_token"]
    like_for_like = graphs["gemm_ns_per_token"] - reduce_ns
    eager_like = eager["gemm_ns_per_token"] - eager["splitk_reduce_ns_per_token"]
    assert abs(like_for_like - eager_like) < 0.05 * eager_like
    assert graphs["gemm_share_pct"] > 50
    assert graphs["small_kernel_ns_per_token"] < eager["small_kernel_ns_per_token"] / 2
    # '... which the previous page found well under peak bandwidth' (its GEMV rate).
    assert eager["gemm_bandwidth_pct"] < 60


@needs_cuda(STEP, EAGER, GRAPHS)
def test_first_call_pays_for_the_compile() -> None:
    """'The compiled variant's first call takes more than a hundred times as long as a warm one.
    ... the first call also pays the one-time setup that an eager first call pays ..., but even
    without it, compiling the forward and recording its graph take longer than a hundred warm
    calls'; 'an eager first call has no compile to pay ... and takes less than ten times as long
    as a warm one'."""
    wall, eager = _wall(GRAPHS, cpu_ok=False), _wall(EAGER, cpu_ok=False)
    assert wall["first_call_s"] > 100 * wall["generate_s"]
    assert wall["first_call_s"] - eager["first_call_s"] > 100 * wall["generate_s"]
    assert eager["first_call_s"] < 10 * eager["generate_s"]


@needs_cuda(STEP, EAGER, GRAPHS)
def test_graphs_do_not_shorten_the_time_to_first_token() -> None:
    """'CUDA graphs shorten the decode steps but not the time to first token: the prefill stays
    eager, and the first token comes later than in eager mode, in the trace and with the
    profiler off. The static cache's prefill does more work: it runs N CPU operators and K
    kernels, against N' and K' in eager mode (the phases tables) ... the prefill runs aten::zeros
    and aten::index_copy_ once for each layer's keys and once for its values ..., where the eager
    prefill appends to its cache with aten::cat'."""
    eager, graphs = _decode(EAGER, cpu_ok=False), _decode(GRAPHS, cpu_ok=False)
    assert graphs["to_first_decode_ns"] > eager["to_first_decode_ns"]
    assert _wall(GRAPHS, cpu_ok=False)["ttft_s"] > _wall(EAGER, cpu_ok=False)["ttft_s"]
    prefill = _phases(GRAPHS, cpu_ok=False)["prefill"]
    assert prefill["graph_launches"] == 0 and prefill["kernel_launches"] > 0
    assert graphs["prefill_ops"] == prefill["cpu_ops"]
    assert eager["prefill_ops"] == _phases(EAGER, cpu_ok=False)["prefill"]["cpu_ops"]
    assert graphs["prefill_ops"] > eager["prefill_ops"]
    assert graphs["prefill_kernels"] > eager["prefill_kernels"]
    layers = _settings(GRAPHS, cpu_ok=False)["model"]["num_hidden_layers"]
    ops_e, ops_g = _op_counts(EAGER, "prefill"), _op_counts(GRAPHS, "prefill")
    for op in ("aten::zeros", "aten::index_copy_"):
        assert ops_g[op] == 2 * layers and op not in ops_e, op
    assert ops_e["aten::cat"] - ops_g["aten::cat"] == 2 * layers


def test_compiled_variant_has_no_cpu_capture() -> None:
    """'On a CPU this variant is not captured'."""
    from generators.steps import get_step

    assert get_step(STEP).variant(GRAPHS).cpu_args is None


# ---- batch size ---------------------------------------------------------------------------------
def test_batch_reads_same_weights_eightfold_cache() -> None:
    """'each decode forward reads the same weights and launches the same operators ... The
    cache ... grow[s] eight-fold'."""
    b1, b8 = _decode(EAGER), _decode(BATCH)
    assert _settings(BATCH)["batch"] == 8 and b8["batch"] == 8 and b1["batch"] == 1
    assert b8["weight_bytes"] == b1["weight_bytes"]
    assert b8["kv_bytes"] == 8 * b1["kv_bytes"]
    ops1, ops8 = _phases(EAGER)["decode"]["cpu_ops"], _phases(BATCH)["decode"]["cpu_ops"]
    assert abs(ops8 - ops1) <= 0.1 * ops1


def test_batch_8_makes_more_tokens_per_second() -> None:
    """'{b8} tokens per second of generate at batch 8 against {b1} at batch 1 in the trace, and
    {b8} against {b1} with the profiler off' (more at batch 8, both ways)."""
    assert _decode(BATCH)["tokens_per_second"] > _decode(EAGER)["tokens_per_second"]
    assert _wall(BATCH)["tokens_per_s"] > _wall(EAGER)["tokens_per_s"]


@needs_cuda(STEP, EAGER, BATCH)
def test_batch_raises_gpu_busy_share() -> None:
    """'a decode forward launches exactly as many kernels at batch 8 as at batch 1, and the GPU
    busy share rises, from X to Y, yet the GPU stays idle for most of the step ... a decode step
    for eight sequences takes about as long as one for a single sequence'."""
    b1, b8 = _decode(EAGER, cpu_ok=False), _decode(BATCH, cpu_ok=False)
    assert (
        _phases(BATCH, cpu_ok=False)["decode"]["kernels"]
        == (_phases(EAGER, cpu_ok=False)["decode"]["kernels"])
    )
    assert b1["gpu_busy_pct"] < b8["gpu_busy_pct"] < 50
    assert 0.67 < b8["token_ns"] / b1["token_ns"] < 1.5


# ---- attention ----------------------------------------------------------------------------------
def test_attention_query_and_key_positions() -> None:
    """'In the prefill the query has one position per prompt token; in a decode, a single
    position that reads ... up to the prompt plus all tokens generated so far'."""
    settings = _settings(EAGER)
    rows = {r["phase"]: r for r in table(STEP, EAGER, "llm_attention")}
    assert int(rows["prefill"]["query_len"]) == settings["prompt_len"]
    assert int(rows["prefill"]["kv_len"]) == settings["prompt_len"]
    assert int(rows["decode"]["query_len"]) == 1
    assert int(rows["decode"]["kv_len"]) == settings["prompt_len"] + settings["new_tokens"] - 1
    assert all(r["backend_op"].startswith("aten::_scaled_dot_product") for r in rows.values())


@needs_cuda(STEP, EAGER)
def test_attention_kernels_are_named_and_decoded() -> None:
    """'on a GPU the Kernel column the kernel that ran ... Implementation ... decoded'."""
    rows = table(STEP, EAGER, "llm_attention", cpu_ok=False)
    assert {r["phase"] for r in rows} == {"prefill", "decode"}
    assert all(r["kernel_name"] for r in rows)
    assert any(r["family"] for r in rows)


@needs_cuda(STEP, EAGER)
def test_h200_attention_is_cudnn() -> None:
    """'the dispatcher picks cuDNN's attention in both phases. The prefill runs one kernel per
    call, ... sm90. A decode runs two per call: an attention kernel ... sm80 ..., followed by a
    reduction kernel (cudnn::fusion::lean_reduction_kernel)'."""
    layers = _settings(EAGER, cpu_ok=False)["model"]["num_hidden_layers"]
    rows = table(STEP, EAGER, "llm_attention", cpu_ok=False)
    assert all("cudnn" in r["backend_op"] for r in rows)
    assert all(r["family"] == "cuDNN attention" for r in rows)
    assert all(float(r["calls"]) == layers for r in rows)
    prefill = [r for r in rows if r["phase"] == "prefill"]
    decode = [r for r in rows if r["phase"] == "decode"]
    assert len(prefill) == 1 and "sm90" in prefill[0]["decoded"]
    assert len(decode) == 2
    assert any("sm80" in r["decoded"] for r in decode)
    assert any("lean_reduction_kernel" in r["kernel_name"] for r in decode)


# ---- per-layer breakdown ------------------------------------------------------------------------
def test_each_layer_runs_one_attention_one_mlp_two_norms() -> None:
    """'Every layer runs one attention block, one MLP and two norms per token' and the rest of
    the forward is outside the labels."""
    layers = _settings(LAYERS)["model"]["num_hidden_layers"]
    rows = {r["region"]: r for r in table(STEP, LAYERS, "llm_layers")}
    assert float(rows["attention"]["calls"]) == layers
    assert float(rows["mlp"]["calls"]) == layers
    assert float(rows["norm"]["calls"]) == 2 * layers
    assert sum(float(r["cpu_share_pct"]) for r in rows.values()) < 100
    labelled_ops = sum(float(r["cpu_ops"]) for r in rows.values())
    assert labelled_ops < _phases(LAYERS)["decode"]["cpu_ops"]


@needs_cuda(STEP, LAYERS)
def test_norms_cost_more_than_the_mlp_on_the_gpu() -> None:
    """'the attention blocks take the most CPU time per token, and a layer's two norms together
    take more than its MLP ... a norm launches more kernels per call than an MLP does'."""
    rows = {r["region"]: r for r in table(STEP, LAYERS, "llm_layers", cpu_ok=False)}
    cpu = {k: float(r["cpu_ns"]) for k, r in rows.items()}
    assert max(cpu, key=cpu.__getitem__) == "attention"
    assert cpu["norm"] > cpu["mlp"]
    per_call = {k: float(r["kernels"]) / float(r["calls"]) for k, r in rows.items()}
    assert per_call["norm"] > per_call["mlp"]


def test_labels_add_no_operators() -> None:
    """'a decode forward of this variant runs exactly as many CPU operators as in eager_b1'."""
    assert _phases(LAYERS)["decode"]["cpu_ops"] == _phases(EAGER)["decode"]["cpu_ops"]


def test_labels_cost_cpu_time() -> None:
    """'The same forward, with the same operators, takes more CPU time with labels, by about a
    fifth for a decode forward, and the workload's own timing outside the profiler is slower
    too'; 'a few dozen annotations per forward'; 'each region's CPU time includes part of its
    labels' cost, and its share is a share of the labelled, longer forward'."""
    eager, labelled = _decode(EAGER), _decode(LAYERS)
    assert labelled["prefill_cpu_ns"] > eager["prefill_cpu_ns"]  # type: ignore[operator]
    extra = labelled["forward_cpu_ns"] / eager["forward_cpu_ns"] - 1  # type: ignore[operator]
    assert 0.15 < extra < 0.25
    assert _wall(LAYERS)["tpot_s"] > _wall(EAGER)["tpot_s"]
    rows = table(STEP, LAYERS, "llm_layers")
    labels = sum(float(r["calls"]) for r in rows)
    assert 24 <= labels < 100
    # The shares divide by the labelled variant's own forward.
    forward_ns = float(labelled["forward_cpu_ns"])  # type: ignore[arg-type]
    for r in rows:
        share = float(r["cpu_share_pct"])
        assert share == pytest.approx(100 * float(r["cpu_ns"]) / forward_ns, rel=1e-6)


@pytest.mark.parametrize("variant", [EAGER, BATCH])
def test_batch_keeps_positions_per_sequence(variant: str) -> None:
    """'same positions per sequence, eight sequences per call'."""
    rows = {r["phase"]: r for r in table(STEP, variant, "llm_attention")}
    base = {r["phase"]: r for r in table(STEP, EAGER, "llm_attention")}
    for phase in ("prefill", "decode"):
        assert rows[phase]["query_len"] == base[phase]["query_len"]
        assert rows[phase]["kv_len"] == base[phase]["kv_len"]


def test_only_the_layers_variant_has_layer_labels() -> None:
    """'which is why the other variants run without them'."""
    assert trace_table(STEP, EAGER, "llm_layers") == []
    assert trace_table(STEP, BATCH, "llm_layers") == []
    assert _settings(LAYERS)["layer_labels"] is True


# ---- summary and wall clock ---------------------------------------------------------------------
@pytest.mark.parametrize("variant", [EAGER, BATCH, LAYERS])
def test_wall_clock_recorded(variant: str) -> None:
    """'each capture times generate before profiling starts (... kept in capture.json under
    settings.wall_clock)'; 'Time per output token there is the time after the first token
    divided by the tokens that follow it'; 'the first token comes before the end of the call'
    (profiled and profiler off)."""
    settings = _settings(variant)
    wall = _wall(variant)
    recorded = {k: v for k, v in settings["wall_clock"].items() if not isinstance(v, dict)}
    assert wall == recorded
    assert 0 < wall["ttft_s"] < wall["generate_s"] and wall["first_call_s"] > 0
    tpot = (wall["generate_s"] - wall["ttft_s"]) / (settings["new_tokens"] - 1)
    assert wall["tpot_s"] == pytest.approx(tpot, abs=2e-6)
    tokens = settings["batch"] * settings["new_tokens"]
    assert wall["tokens_per_s"] == pytest.approx(tokens / wall["generate_s"], rel=1e-3)
    d = _decode(variant)
    assert 0 < d["to_first_decode_ns"] < d["generate_ns"]


@needs_cuda(STEP, EAGER, BATCH, GRAPHS)
@pytest.mark.parametrize("variant", [EAGER, BATCH, GRAPHS])
def test_trace_agrees_with_wall_clock_on_cuda(variant: str) -> None:
    """'the tests check the trace's figures against that wall clock'."""
    wall = _wall(variant, cpu_ok=False)
    d = _decode(variant, cpu_ok=False)
    assert d["generate_ns"] >= 0.8 * wall["generate_s"] * 1e9
    assert d["generate_ns"] <= 3 * wall["generate_s"] * 1e9
    assert d["token_ns"] <= 3 * wall["tpot_s"] * 1e9


# ---- the model, from its capture record ---------------------------------------------------------
@pytest.mark.parametrize("variant", [EAGER, BATCH, LAYERS])
def test_model_table_comes_from_the_capture_record(variant: str) -> None:
    """The model table: every row is a value derived from capture.json's settings.model, and the
    trace agrees with it (one attention call per layer in a decode forward)."""
    shown = values(STEP, variant)["settings"]
    record = _settings(variant)
    for key, value in record["model"].items():
        assert shown[f"model_{key}"] == value, key
    for key in ("dtype", "prompt_len", "new_tokens", "batch"):
        assert shown[key] == record[key]
    assert record["model"]["num_attention_heads"] % record["model"]["num_key_value_heads"] == 0
    if variant != LAYERS:
        layers = record["model"]["num_hidden_layers"]
        calls = {float(r["calls"]) for r in table(STEP, variant, "llm_attention")}
        assert calls == {float(layers)}


# ---- the prefill is overhead-bound too ----------------------------------------------------------
@needs_cuda(STEP, EAGER)
def test_decode_is_overhead_bound_not_launch_bound() -> None:
    """'Only X of the step is spent inside [launch calls]; the rest is Python and PyTorch's
    operator dispatch for N CPU operators per decode step, plus the profiler's own cost ... launch
    calls that cost nothing would still leave most of the CPU time in place'."""
    d = _decode(EAGER, cpu_ok=False)
    assert 0 < d["launch_ns_per_token"] < 0.5 * d["token_ns"]  # type: ignore[operator]
    assert d["cpu_ops_per_token"] > 2 * d["kernel_launches_per_token"]  # type: ignore[operator]


@needs_cuda(STEP, EAGER, BATCH)
def test_prefill_is_overhead_bound_at_batch_1() -> None:
    """'At batch 1 its forward spends X on the CPU ... while its kernels run for Y in all: the CPU
    takes Z times as long as the GPU needs. With the profiler off the whole time to first token
    is T, still several times the kernel time ... At batch 8 ... the ratio falls to W'."""
    d, d8 = _decode(EAGER, cpu_ok=False), _decode(BATCH, cpu_ok=False)
    prefill = _phases(EAGER, cpu_ok=False)["prefill"]
    assert d["prefill_cpu_ns"] == prefill["cpu_ns"]
    assert d["prefill_kernels"] == prefill["kernels"]
    assert d["prefill_kernel_ns"] == prefill["kernel_ns"]
    assert d["prefill_kernel_union_ns"] <= d["prefill_kernel_ns"]
    assert 0 < d["prefill_launch_ns"] < d["prefill_cpu_ns"]
    assert d["prefill_cpu_over_kernel"] > 3
    assert _wall(EAGER, cpu_ok=False)["ttft_s"] * 1e9 > 3 * d["prefill_kernel_union_ns"]
    assert 1 < d8["prefill_cpu_over_kernel"] < d["prefill_cpu_over_kernel"]


@needs_cuda(STEP, EAGER, BATCH)
def test_batch_8_prefill_close_to_the_crossover() -> None:
    """'the ratio falls to W: about a quarter more GPU work per prefill ... would let the GPU set
    the pace in the trace. That ratio is a profiled one ...: at batch 1 ... the time to first
    token is X in the trace against Y with the profiler off, nearly double. Without the
    profiler, the batch-8 prefill most likely lets the GPU set the pace already: its whole time
    to first token with the profiler off, T, is only a little more than its kernels' K'."""
    d, d8 = _decode(EAGER, cpu_ok=False), _decode(BATCH, cpu_ok=False)
    assert 1.15 < d8["prefill_cpu_over_kernel"] < 1.35
    profiled_over_off = d["to_first_decode_ns"] / (_wall(EAGER, cpu_ok=False)["ttft_s"] * 1e9)
    assert 1.6 < profiled_over_off <= 2.05, profiled_over_off
    ttft8 = _wall(BATCH, cpu_ok=False)["ttft_s"] * 1e9
    assert d8["prefill_kernel_union_ns"] < ttft8 < 1.35 * d8["prefill_kernel_union_ns"]


# ---- kernel time against the bandwidth floor ----------------------------------------------------
@needs_cuda(STEP, EAGER)
def test_kernel_time_is_several_times_the_floor() -> None:
    """'so does the GPU time of its kernels alone, X, or Y times the floor' and the GPU time is
    the union of kernel intervals, never more than the summed kernel time."""
    d = _decode(EAGER, cpu_ok=False)
    assert 0 < d["kernel_union_ns_per_token"] <= d["kernel_ns_per_token"]
    assert d["kernel_over_floor"] > 3
    ratio = d["kernel_union_ns_per_token"] / d["read_at_peak_ns"]
    assert abs(d["kernel_over_floor"] - ratio) < 0.01 * ratio
    rate = d["read_bytes"] * 1e9 / d["kernel_union_ns_per_token"]
    assert abs(d["kernel_read_bytes_per_s"] - rate) < 1e-6 * rate


@needs_cuda(STEP, EAGER)
def test_decode_kernels_gemv_under_peak_and_many_small_kernels() -> None:
    """'The GEMMs ... take X of the kernels' GPU time: N kernels per step for B of weights,
    which they read at R, or P of the peak ... narrow tiles (64x8 and 8x64) ... Most of the rest
    goes to M small kernels ... each of them short' (the attention kernels take the rest)."""
    d = _decode(EAGER, cpu_ok=False)
    rows = {r["class"]: r for r in table(STEP, EAGER, "llm_decode_kernels", cpu_ok=False)}
    gemm = rows["GEMM"]
    assert float(gemm["kernels"]) == pytest.approx(d["gemm_kernels_per_token"])
    assert 20 < d["gemm_share_pct"] < 80
    assert 0 < d["gemm_bandwidth_pct"] < 60
    assert d["gemm_read_bytes_per_s"] < d["peak_bytes_per_s"]
    assert d["small_kernels_per_token"] > 3 * d["gemm_kernels_per_token"]
    small = [r for k, r in rows.items() if k not in ("GEMM", "attention") and r["mean_ns"]]
    assert all(float(r["mean_ns"]) < float(gemm["mean_ns"]) for r in small)
    assert sum(float(r["kernels"]) for r in small) == pytest.approx(d["small_kernels_per_token"])
    rest_ns = sum(float(r["kernel_ns"]) for k, r in rows.items() if k != "GEMM" and r["kernel_ns"])
    assert 0.5 * rest_ns < d["small_kernel_ns_per_token"] < rest_ns
    assert sum(float(r["kernels"]) for r in rows.values()) == pytest.approx(d["kernels_per_token"])
    assert sum(float(r["share_pct"]) for r in rows.values() if r["share_pct"]) == pytest.approx(100)
    dropped = rows["dropped by the trace processor"]
    assert float(dropped["kernels"]) == pytest.approx(d["dropped_kernels_per_token"])
    assert dropped["kernel_ns"] == ""

    events = trace_events(STEP, EAGER, exact=True)
    gemvs = {e["name"] for e in events if e.get("cat") == "kernel" and "nvjet" in e["name"]}
    assert any("_64x8_" in n for n in gemvs) and any("_8x64_" in n for n in gemvs)


@needs_cuda(STEP, EAGER, GRAPHS)
def test_gemm_rate_slightly_high_without_the_dropped_reduce_kernels() -> None:
    """'That rate is slightly high: the split-K reduce kernels the importer dropped ... are
    missing from the GEMMs' time. The compiled variant's trace ... keeps all of them, and there
    they take T per step, a small fraction of the GEMMs' time'."""
    eager, graphs = _decode(EAGER, cpu_ok=False), _decode(GRAPHS, cpu_ok=False)
    assert eager["dropped_kernels_per_token"] > 0
    assert graphs["dropped_kernels_per_token"] == 0
    assert graphs["splitk_reduce_kept_per_token"] == graphs["splitk_gemms_per_token"]
    assert 0 < graphs["splitk_reduce_ns_per_token"] < 0.05 * eager["gemm_ns_per_token"]
    # With that time added, the rate would be lower, though not by much.
    lower = (
        eager["weight_bytes"]
        * 1e9
        / (eager["gemm_ns_per_token"] + graphs["splitk_reduce_ns_per_token"])
    )
    assert 0.9 * eager["gemm_read_bytes_per_s"] < lower < eager["gemm_read_bytes_per_s"]


# ---- split-K reduce kernels that overlap their GEMM ---------------------------------------------
@needs_cuda(STEP, EAGER)
def test_split_k_reduce_kernels_overlap_their_gemm_and_are_dropped() -> None:
    """'Each decode step runs N split-K GEMMs, each followed on the same stream by a
    splitKreduce_kernel ... In the JSON the profiler wrote, most of those reduce kernels start
    before their GEMM has ended: A of the batch-1 trace's B (P), and no other kernel ...
    drops each such kernel (stats: E events, all kernels, the same number as the launches
    without a kernel) ... K stay, D are dropped ... launched with cudaLaunchKernelExC, where every
    other kernel goes through cudaLaunchKernel or cuLaunchKernel(Ex)'."""
    from generators.trace_json import find_partial_overlaps

    d = _decode(EAGER, cpu_ok=False)
    layers = _settings(EAGER, cpu_ok=False)["model"]["num_hidden_layers"]
    assert d["splitk_gemms_per_token"] == layers
    kept, dropped = d["splitk_reduce_kept_per_token"], d["dropped_kernels_per_token"]
    assert kept + dropped == pytest.approx(d["splitk_gemms_per_token"])
    assert d["importer_dropped_events"] == d["trace_dropped_kernels"] > 0
    assert d["splitk_reduce_launch"] == d["dropped_kernel_launch"] == "cudaLaunchKernelExC"
    events = trace_events(STEP, EAGER, exact=True)
    overlaps = find_partial_overlaps(events)
    assert len(overlaps) == d["importer_dropped_events"]
    for o in overlaps:
        assert o.cat == "kernel" and "splitKreduce" in o.name
        assert "splitK" in str(o.other.get("name")) and o.tid == o.other.get("tid")
        assert not o.rounding_artefact  # an overlap in the file, not the importer's rounding
    # What the page shows (values.json "kernel_overlaps", read from the same file).
    ko = values(STEP, EAGER, cpu_ok=False)["kernel_overlaps"]
    assert ko["overlapping_kernels"] == ko["overlapping_name_overlaps"] == len(overlaps)
    assert "splitKreduce" in str(ko["overlapping_name"])
    turns = d["generate_calls"] * d["decodes_per_call"]
    assert ko["overlapping_name_kernels"] == d["splitk_gemms_per_token"] * turns  # every reduce
    assert 50 < ko["overlapping_name_pct"] < 100  # "most"
    starts_before_end = [o.other_exact_end_ns - o.exact_start_ns for o in overlaps]
    assert (min(starts_before_end), max(starts_before_end)) == (
        ko["overlap_min_ns"],
        ko["overlap_max_ns"],
    )
    # cudaLaunchKernelExC starts exactly the reduce kernels.
    ex = {
        e["args"]["correlation"]
        for e in events
        if e.get("name") == "cudaLaunchKernelExC" and e.get("ph") == "X"
    }
    reduce = {
        e["args"]["correlation"]
        for e in events
        if e.get("cat") == "kernel" and "splitKreduce" in str(e.get("name"))
    }
    assert ex == reduce


@needs_cuda(STEP, EAGER)
def test_split_k_overlaps_are_a_few_timestamp_steps() -> None:
    """'Never by more than a tenth of a microsecond: each reduce kernel starts between A and B
    before its GEMM's recorded end, against GEMMs that run for microseconds ... nearly every
    kernel's duration in this trace is a whole multiple of S, so the overlap is one to three of
    those steps'."""
    from generators.trace_json import to_ns

    d = _decode(EAGER, cpu_ok=False)
    ko = values(STEP, EAGER, cpu_ok=False)["kernel_overlaps"]
    step = ko["kernel_dur_step_ns"]
    assert 0 < ko["overlap_min_ns"] <= ko["overlap_max_ns"] <= 100
    assert step - 1 <= ko["overlap_min_ns"] and ko["overlap_max_ns"] <= 3 * step + 1
    gemm_mean_ns = d["gemm_ns_per_token"] / d["gemm_kernels_per_token"]
    assert gemm_mean_ns > 1_000 and gemm_mean_ns > 20 * ko["overlap_max_ns"]
    events = trace_events(STEP, EAGER, exact=False)
    durations = [to_ns(e["dur"]) for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"]
    near = sum(min(x % step, -x % step) <= 1 for x in durations)
    assert near > 0.98 * len(durations)  # "nearly every kernel's duration"
    assert len(durations) == ko["kernels"]


@needs_cuda(STEP, GRAPHS)
def test_the_graph_launchs_mean_is_lifted_by_two_long_calls() -> None:
    """'under the profiler, cudaGraphLaunch takes L per forward on average ... The mean sits
    above the median: two calls take several times as long as the rest': the table's calls (one
    per decode forward), shortest, median, mean and longest."""
    from tests.claims import variant_dir
    from tests.sql_rows import trace_rows

    g = _decode(GRAPHS, cpu_ok=False)
    assert g["graph_launch_calls"] == g["generate_calls"] * g["decodes_per_call"]
    assert g["graph_launches_per_token"] == 1
    low, median, mean, high = (
        g["graph_launch_min_ns"],
        g["graph_launch_median_ns"],
        g["graph_launch_ns_per_token"],
        g["graph_launch_max_ns"],
    )
    assert low <= median < mean < high
    assert mean > 1.1 * median and high > 5 * median
    calls = trace_rows(
        variant_dir(STEP, GRAPHS, cpu_ok=False) / "trace.json.gz",
        "INCLUDE PERFETTO MODULE guide.llm; SELECT s.dur FROM guide_llm_window_slice!(("
        "SELECT id AS window_id, ts, dur, track_id FROM guide_llm_forward WHERE phase = 'decode'"
        ")) AS s WHERE s.name = 'cudaGraphLaunch'",
    )
    assert len(calls) == g["graph_launch_calls"]
    long = [c["dur"] for c in calls if c["dur"] > 3 * median]  # "several times as long"
    assert len(long) == 2  # "two calls"
    # No graph launch in eager mode: the rows would be "–", not 0 ns.
    e = _decode(EAGER, cpu_ok=False)
    assert e["graph_launch_calls"] == 0 and e["graph_launch_median_ns"] is None


@needs_cuda(STEP, GRAPHS)
def test_graphed_gpu_idles_less_without_the_profiler() -> None:
    """docs/part-4/03-batch-and-cuda-graphs.md: "in the trace the GPU is still idle for more than
    half of the step (under the profiler: without it the CPU side runs faster and the GPU idles
    less)": the same kernel time over the shorter profiler-off time per token is a larger
    busy share than the trace's."""
    graphs = _decode(GRAPHS, cpu_ok=False)
    assert graphs["gpu_busy_pct"] < 50
    off_share = (
        100 * graphs["kernel_union_ns_per_token"] / (_wall(GRAPHS, cpu_ok=False)["tpot_s"] * 1e9)
    )
    assert graphs["gpu_busy_pct"] < off_share <= 100


@needs_cuda(STEP, EAGER, GRAPHS)
def test_other_captures_reduce_kernels_wait_for_their_gemm() -> None:
    """Page 2's split-K box: 'the graphed decode trace keeps all N of its reduce kernels, and none
    starts before the kernel ahead of it has ended (the closest G after); Part 5's fp32 training
    trace runs M reduce kernels, also launched with L, the closest starting H after its GEMM.
    ... every other kernel of this trace starts at least A after the one ahead of it on its
    stream has ended, and so does every kernel of the training traces (at least B, C, D); only
    inside a CUDA graph do kernels follow more closely, from E after. So this trace's reduce
    kernels start about a microsecond earlier than a kernel launched on its own usually can, far
    more than a timestamp step or two'."""
    from generators.trace_json import kernel_overlaps, to_ns

    graphs = values(STEP, GRAPHS, cpu_ok=False)["kernel_gaps"]
    assert graphs["splitk_reduce_kernels"] > 0 and graphs["splitk_reduce_overlaps"] == 0
    assert graphs["splitk_reduce_min_gap_ns"] > 0
    assert graphs["splitk_reduce_launch"] == "cudaGraphLaunch"
    assert (
        graphs["splitk_reduce_kernels"]
        == _decode(GRAPHS, cpu_ok=False)["splitk_reduce_kept_per_token"]
        * _decode(GRAPHS, cpu_ok=False)["decodes_per_call"]
        * _decode(GRAPHS, cpu_ok=False)["generate_calls"]
    )
    train = {
        v: values("train", v, cpu_ok=False)["kernel_gaps"] for v in ("naive", "tuned", "compiled")
    }
    assert train["naive"]["splitk_reduce_kernels"] > 0
    assert train["naive"]["splitk_reduce_overlaps"] == 0
    assert (
        train["naive"]["splitk_reduce_launch"]
        == _decode(EAGER, cpu_ok=False)["splitk_reduce_launch"]
    )
    eager = values(STEP, EAGER, cpu_ok=False)["kernel_gaps"]
    floor = min(eager["other_min_gap_ns"], *(t["other_min_gap_ns"] for t in train.values()))
    assert 800 < floor < 1000  # "about 0.83 µs"
    assert train["naive"]["splitk_reduce_min_gap_ns"] >= floor
    for gaps in (eager, *train.values()):
        assert gaps["other_overlaps"] == 0
    assert graphs["other_min_gap_ns"] < 0.25 * floor
    # The SQL misses the eager trace's dropped reduce kernels, so a kernel after one of them could
    # seem to follow later than it does: the file itself gives the same closest gap.
    events = trace_events(STEP, EAGER, exact=False)
    streams: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            start = to_ns(e["ts"])
            streams.setdefault((str(e.get("pid")), str(e.get("tid"))), []).append(
                (start, start + to_ns(e.get("dur", 0)), str(e.get("name", "")))
            )
    closest = min(
        b[0] - a[1]
        for kernels in streams.values()
        for a, b in itertools.pairwise(sorted(kernels))
        if "splitKreduce" not in b[2]
    )
    assert closest == eager["other_min_gap_ns"]
    ko = kernel_overlaps(events)
    # 'about a microsecond earlier ... far more than a timestamp step or two'.
    assert floor > 10 * 2 * ko["kernel_dur_step_ns"]
    assert 0 < ko["overlap_max_ns"] < 0.15 * floor


@needs_cuda(STEP, EAGER, GRAPHS)
def test_the_graphed_step_is_many_times_its_floor_mostly_waiting() -> None:
    """Page 3: 'a step of T against a floor of F. Most of the gap is the GPU waiting: it is idle
    for I of each step on average, of which B come before the step's first kernel starts (the
    compiled forward's guards and copies, then the graph launch) and A after the wait'."""
    eager, graphs = _decode(EAGER, cpu_ok=False), _decode(GRAPHS, cpu_ok=False)
    token, floor, idle = graphs["token_ns"], eager["read_at_peak_ns"], graphs["gpu_idle_in_step_ns"]
    assert token > 5 * floor
    assert idle > 0.5 * (token - floor)
    assert idle == pytest.approx(token * (1 - graphs["gpu_busy_pct"] / 100), rel=0.02)
    before, after = graphs["to_first_kernel_idle_ns"], graphs["after_sync_idle_ns"]
    assert before + after > 0.75 * idle
    assert before <= graphs["to_first_kernel_ns"] and after <= graphs["after_sync_ns"]
    assert graphs["guard_ns_per_token"] + graphs["graph_launch_ns_per_token"] < before


# ---- what the dropped kernels and the input copies do to the GPU's idle time ---------------------
def _kernel_union_ns(intervals: list[tuple[int, int]]) -> int:
    total, covered = 0, None
    for start, end in sorted(intervals):
        if covered is None or start >= covered:
            total, covered = total + end - start, end
        elif end > covered:
            total, covered = total + end - covered, end
    return total


@needs_cuda(STEP, EAGER, BATCH)
@pytest.mark.parametrize("variant", [EAGER, BATCH])
def test_dropped_reduce_kernels_make_the_busy_share_slightly_low(variant: str) -> None:
    """Page 2: 'The busy share and the idle time come from the kernels the trace kept, so for the
    same reason the busy share is slightly low and the GPU's idle time slightly high, at batch 1
    as at batch 8, whose trace drops about as many'; page 3: the two busy shares are 'both
    slightly low: the importer dropped split-K reduce kernels from both traces'. The dropped
    kernels run past the end of the GEMM they overlap, so the GPU's busy time with them is longer
    than without, by a little."""
    from generators.trace_json import find_partial_overlaps, perfetto_ns

    d = _decode(variant, cpu_ok=False)
    assert d["dropped_kernels_per_token"] > 0
    ratio = (
        d["dropped_kernels_per_token"] / _decode(EAGER, cpu_ok=False)["dropped_kernels_per_token"]
    )
    assert 0.9 <= ratio <= 1.1  # "about as many"
    events = trace_events(STEP, variant, exact=False)
    dropped = {id(o.event) for o in find_partial_overlaps(events)}
    assert len(dropped) == d["importer_dropped_events"]
    kept, every = [], []
    for e in events:
        if e.get("cat") != "kernel" or e.get("ph") != "X":
            continue
        start = perfetto_ns(e["ts"])
        span = (start, start + perfetto_ns(e["dur"]))
        every.append(span)
        if id(e) not in dropped:
            kept.append(span)
    busy_kept, busy_every = _kernel_union_ns(kept), _kernel_union_ns(every)
    assert busy_kept < busy_every < 1.05 * busy_kept  # "slightly"


@needs_cuda(STEP, GRAPHS)
def test_the_idle_before_the_first_kernel_is_the_time_to_it_less_the_input_copies() -> None:
    """Page 3: 'The idle time before the first kernel is a little less than the time to it: from
    the step's start to its first kernel, less the GPU's busy time in between, which is the two
    device-to-device copies (Memcpy DtoD) that the compiled region's cudaMemcpyAsync calls make.
    They run on the GPU before the graph's first kernel, and are copies, not kernels'."""
    from tests.claims import variant_dir
    from tests.open_traces import shared_trace

    g = _decode(GRAPHS, cpu_ok=False)
    assert (
        0 < g["to_first_kernel_ns"] - g["to_first_kernel_idle_ns"] < 0.01 * g["to_first_kernel_ns"]
    )
    # Each table materialized once: joined as views, the GPU activities would be rebuilt for
    # every decode step.
    sql = """
        INCLUDE PERFETTO MODULE guide.llm;
        INCLUDE PERFETTO MODULE guide.windows;
        WITH
          fwd AS (SELECT id AS window_id, ts, token_dur AS dur, track_id, phase
            FROM guide_llm_forward),
          dk AS MATERIALIZED (SELECT window_id, kernel_id, kernel_ts
            FROM guide_llm_window_kernel!((SELECT * FROM fwd WHERE phase = 'decode'))),
          tfk AS MATERIALIZED (SELECT f.window_id, f.ts, MIN(k.kernel_ts) AS kts
            FROM fwd AS f JOIN dk AS k USING (window_id)
            WHERE k.kernel_id IS NOT NULL GROUP BY f.window_id),
          acts AS MATERIALIZED (SELECT name, ts, dur FROM guide_kineto_gpu_activity)
        SELECT g.name, COUNT(*) AS n, COUNT(DISTINCT t.window_id) AS steps,
          SUM(MIN(g.ts + g.dur, t.kts) - MAX(g.ts, t.ts)) AS busy_ns
        FROM tfk AS t JOIN acts AS g ON g.ts < t.kts AND g.ts + g.dur > t.ts
        GROUP BY g.name
    """
    with shared_trace(variant_dir(STEP, GRAPHS, cpu_ok=False) / "trace.json.gz") as tp:
        rows = list(tp.query(sql))
    assert [r.name for r in rows] == ["Memcpy DtoD (Device -> Device)"]
    (copies,) = rows
    turns = g["generate_calls"] * g["decodes_per_call"]
    assert copies.steps == turns
    assert copies.n == g["forward_memcpys_per_token"] * turns == 2 * turns
    per_step = copies.busy_ns / turns
    assert per_step == pytest.approx(g["to_first_kernel_ns"] - g["to_first_kernel_idle_ns"], abs=2)
