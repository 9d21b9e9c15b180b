"""The doctor's kernel view: the top kernels' rates and the launch queue, each checked against an
independent count from the trace file itself, in every format and both languages."""

from __future__ import annotations

import gzip
import html
import json
from pathlib import Path

import pytest

from generators.doctor.examine import Report
from generators.doctor.kernels import KernelView, LaunchQueue
from generators.doctor.render import render_html, render_json, render_markdown, render_text
from generators.doctor.render_kernels import KERNELS_HEADING, queue_line
from tests.test_doctor import CUDA, HOSTILE, doctor

#: A small H200 trace with GEMMs (one of them launching two kernels) and elementwise kernels.
MLP = CUDA / "mlp" / "eager" / "trace.json.gz"
LAUNCHES = ("cuda_runtime", "cuda_driver")


def _events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)["traceEvents"]


def _kernels_with_operator(events: list[dict]) -> list[tuple[dict, dict, dict]]:
    """(kernel, launch call, innermost CPU operator around the call) for every linked kernel,
    read straight from the JSON: the launch by CUPTI correlation id, the operator by time on the
    launch's thread."""
    launches = {
        e["args"]["correlation"]: e
        for e in events
        if e.get("cat") in LAUNCHES and "correlation" in e.get("args", {})
    }
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    out = []
    for k in (e for e in events if e.get("cat") == "kernel"):
        launch = launches.get(k["args"]["correlation"])
        if launch is None:
            continue
        around = [
            o
            for o in ops
            if o["tid"] == launch["tid"]
            and o["ts"] <= launch["ts"]
            and launch["ts"] + launch["dur"] <= o["ts"] + o["dur"]
        ]
        out.append((k, launch, min(around, key=lambda o: o["dur"])))
    return out


@pytest.fixture(scope="module")
def mlp_report() -> Report:
    return doctor(MLP)


@pytest.fixture(scope="module")
def mlp_view(mlp_report: Report) -> KernelView:
    view = mlp_report.kernels
    assert view is not None and view.top
    return view


def test_a_gemms_rate_is_its_work_over_its_kernels_time(mlp_view: KernelView) -> None:
    """Every GEMM row with a rate: 2·M·N·K from the operator's recorded shapes over the summed
    kernel time, counted only where the operator launched that one kernel."""
    linked = _kernels_with_operator(_events(MLP))
    per_op: dict[tuple, list[dict]] = {}
    for k, _, op in linked:
        per_op.setdefault((op["tid"], op["ts"]), []).append(k)
    checked = 0
    for row in mlp_view.top:
        if row["achieved_tflops"] is None:
            continue
        flops = dur_us = 0.0
        for k, _, op in linked:
            if k["name"] != row["name"] or len(per_op[(op["tid"], op["ts"])]) != 1:
                continue
            (m, k_), (_, n) = op["args"]["Input Dims"][:2]
            flops += 2 * m * n * k_
            dur_us += k["dur"]
        assert row["flops"] == flops
        assert row["achieved_tflops"] == pytest.approx(flops / (dur_us * 1e-6) / 1e12, rel=1e-3)
        assert row["math"] == "bf16" and 0 < row["tflops_peak_pct"] <= 100
        assert row["side"] == "compute"  # hundreds of FLOPs per byte, past the ridge
        checked += 1
    assert checked
    # The GEMM whose operator also launched a second kernel has no rate ('–').
    assert any(r["family"] == "cuBLAS" and r["achieved_tflops"] is None for r in mlp_view.top)


def test_elementwise_kernels_are_held_to_the_bandwidth(mlp_view: KernelView) -> None:
    rows = [r for r in mlp_view.top if r["family"] == "PyTorch ATen"]
    assert rows
    for r in rows:
        assert r["flops"] is None and r["traffic_bytes"] > 0
        assert r["side"] == "memory" and 0 < r["bytes_peak_pct"] <= 100
    assert sum(r["kernel_pct"] for r in mlp_view.top) == pytest.approx(100.0)


def test_the_launch_queue_agrees_with_the_file(mlp_view: KernelView) -> None:
    """A launch is queued when its stream was still running earlier work (the latest end of the
    activities that started before its kernel on the same stream) when the call returned."""
    events = _events(MLP)
    activities = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    queued = launched = 0
    for k, launch, _ in _kernels_with_operator(events):
        earlier = [
            a["ts"] + a["dur"]
            for a in activities
            if a["args"].get("stream") == k["args"]["stream"]
            and a["args"].get("device") == k["args"]["device"]
            and a["ts"] < k["ts"]
        ]
        launched += 1
        queued += bool(earlier) and max(earlier) > launch["ts"] + launch["dur"]
    queue = mlp_view.queue
    assert queue is not None
    assert (queue.launches, queue.queued) == (launched, queued)


def test_the_pace_follows_the_share_queued() -> None:
    def line(queued: int) -> str:
        return queue_line(LaunchQueue(100, queued, 5_000, 20_000)) or ""

    assert "the GPU set the pace" in line(80)
    assert "the GPU mostly waited for the CPU" in line(3)
    assert "Between the two" in line(30)
    assert "GPU がペースを" in (queue_line(LaunchQueue(100, 80, 5_000, 20_000), "ja") or "")


def test_the_view_is_in_every_format_and_both_languages(mlp_report: Report) -> None:
    report = mlp_report
    base = "https://x.test/"
    for lang in ("en", "ja"):
        heading = KERNELS_HEADING[0 if lang == "en" else 1]
        assert heading in render_text([report], base, lang=lang)
        assert f"### {heading}" in render_markdown([report], base, lang=lang)
        assert f"<h3>{heading}</h3>" in render_html([report], base, lang=lang)
    data = json.loads(render_json([report], base))[0]["kernels"]
    assert data["top_kernels"][0]["name"].startswith("nvjet_")
    assert data["launch_queue"]["kernel_launches"] > 0


def test_a_trace_without_kernels_has_no_kernel_view() -> None:
    report = doctor(CUDA.parent / "cpu" / "mlp" / "eager" / "trace.json.gz")
    assert report.kernels is None
    assert KERNELS_HEADING[0] not in render_text([report], "https://x.test/")


def test_kernel_names_are_escaped_in_the_view() -> None:
    report = doctor(HOSTILE)
    assert report.kernels is not None
    assert any("<script>" in r["name"] for r in report.kernels.top)
    page = render_html([report], "https://x.test/")
    section = page[page.index('<section class="kernels">') :]
    assert "<script>alert" not in section and html.escape("<script>") in section
    md = render_markdown([report], "https://x.test/")
    assert "<script>" not in md[md.index(KERNELS_HEADING[0]) :]


def test_the_pages_say_how_many_kernels_the_view_lists() -> None:
    """README and both editions of "Check your own trace" say "the ten kernel ...": the view's
    own number."""
    from generators.doctor.kernels import TOP_KERNELS

    root = CUDA.parent.parent
    assert TOP_KERNELS == 10
    assert "the ten kernels with the most GPU time" in " ".join(
        (root / "README.md").read_text().split()
    )
    assert "the ten kernel names with the most GPU time" in " ".join(
        (root / "docs" / "check-your-trace.md").read_text().split()
    )
    japanese = (root / "docs-ja" / "check-your-trace.md").read_text()
    assert "GPU 時間の最も長いカーネル名を 10 個" in japanese
