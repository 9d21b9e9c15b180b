"""Physics guards: every number derived from a trace must be one the hardware allows.

A rate above the GPU's peak, a share above 100 % or a negative duration is a wrong number (a
wrong denominator, a wrong count), never a fast kernel. This walks every ``values.json`` and CSV
of every device set under ``artifacts/`` and holds each cell to what its column's unit suffix
says (``generators.units``): ``_tflops`` at most the capture GPU's dense peak for the row's type,
``_bytes_per_s`` at most its memory bandwidth, ``_pct`` within 0-100, ``_ns`` / ``_s`` never
negative (unless named ``_offset_ns`` / ``_offset_s``). The peaks are the ``guide.hardware``
module's, asked of the trace processor: there is no second copy of them here.

It also checks the hardware module itself, the trace's GPU as SQL sees it, that every achieved
rate a page can show divides by GPU time, and the manifests' lists of missing variants.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from generators.derive import build_manifest
from generators.queries import QUERIES_DIR, load_query
from generators.steps import DEVICES, STEPS
from generators.store import CAPTURE_FILE
from generators.units import is_datasheet, is_signed, unit_of
from tests.reference_traces import A100_ADD, H100_BERT, MI300X, V100
from tests.sql_rows import trace_rows

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "artifacts"
DEVICE_SETS = sorted(d for d in DEVICES if (ARTIFACTS / d / "MANIFEST.json").exists())

MATHS = ("bf16", "fp16", "tf32", "fp8", "fp32")


# ---- the peaks, from the SQL module ----------------------------------------------------------


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class Peak:
    """One GPU's peaks as guide_hardware_peak gives them (None where the GPU lacks the math)."""

    gpu: str
    tflops: dict[str, float | None]
    bytes_per_s: float

    def tflops_for(self, dtype: str | None) -> float:
        """The most a rate of this type can reach: fp32 inputs may run as tf32 on tensor cores,
        and an unknown type is held to the highest dense peak the GPU has."""
        known = [v for v in self.tflops.values() if v is not None]
        math_ = _math_of(dtype)
        if math_ is None:
            return max(known)
        if math_ == "fp32":
            return max(v for v in (self.tflops["fp32"], self.tflops["tf32"]) if v is not None)
        value = self.tflops[math_]
        return max(known) if value is None else value


def _math_of(dtype: str | None) -> str | None:
    """A type label (a table's `dtype` column, a capture's `--dtype`) as a math of the table."""
    if not dtype:
        return None
    label = dtype.strip().lower()
    if label.startswith("fp8"):
        return "fp8"
    return label if label in MATHS else None


def peaks_for(names: set[str]) -> dict[str, Peak]:
    """Peaks of the GPUs named (device names as captures record them), matched by the module."""
    if not names:
        return {}
    values = ", ".join(f"({_literal(n)})" for n in sorted(names))
    rows = trace_rows(
        A100_ADD,
        "INCLUDE PERFETTO MODULE guide.hardware; "
        f"WITH n(name) AS (VALUES {values}) "
        "SELECT n.name AS device_name, p.* FROM n JOIN guide_hardware_peak AS p "
        "ON n.name GLOB p.name_glob",
    )
    out: dict[str, Peak] = {}
    for r in rows:
        name = str(r["device_name"])
        assert name not in out, f"{name!r} matches two rows of guide_hardware_peak"
        out[name] = Peak(
            gpu=str(r["gpu"]),
            tflops={m: r[f"{m}_tflops"] for m in MATHS},  # type: ignore[misc]
            bytes_per_s=float(r["peak_bytes_per_s"]),  # type: ignore[arg-type]
        )
    return out


# ---- the checker -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Violation:
    """One impossible cell: where it is and why it cannot be."""

    file: str
    column: str
    row: str
    value: float
    why: str

    @property
    def cell(self) -> tuple[str, str, str]:
        return (self.file, self.column, self.row)

    def __str__(self) -> str:
        return f"{self.file}: column {self.column!r}, row {self.row}: {self.value!r} {self.why}"


def _number(cell: object) -> float | None:
    """A cell as a number, or None for text, booleans and empty cells."""
    if isinstance(cell, bool) or cell is None or cell == "":
        return None
    if isinstance(cell, int | float):
        return float(cell)
    if isinstance(cell, str):
        try:
            return float(cell)
        except ValueError:
            return None
    return None


def check_cell(
    column: str, value: float, peak: Peak | None, gpu: str | None, dtype: str | None
) -> str | None:
    """Why ``value`` cannot be in ``column`` (None when it can)."""
    unit = unit_of(column)
    if not math.isfinite(value):
        return "is not a finite number"
    if unit == "pct" and not 0 <= value <= 100:
        return "is a share outside 0-100 %"
    if unit in ("ns", "s") and value < 0 and not is_signed(column):
        return "is a negative duration (a signed one ends in _offset_ns / _offset_s)"
    if unit in ("bytes", "tflops", "bytes/s", "/s") and value < 0:
        return "is a negative amount or rate"
    if unit not in ("tflops", "bytes/s") or gpu is None or is_datasheet(column):
        return None  # a CPU set has no peak table: finite and not negative is all we can say
    if peak is None:
        return f"cannot be checked: no peak for the GPU {gpu!r} in guide_hardware_peak"
    if unit == "tflops" and value > peak.tflops_for(dtype):
        return (
            f"exceeds the {peak.gpu}'s dense {_math_of(dtype) or 'highest'} peak of "
            f"{peak.tflops_for(dtype)} TFLOP/s"
        )
    if unit == "bytes/s" and value > peak.bytes_per_s:
        return f"exceeds the {peak.gpu}'s memory bandwidth of {peak.bytes_per_s:.4g} bytes/s"
    return None


def _variant_dirs(set_dir: Path) -> list[Path]:
    return sorted(p.parent for p in set_dir.glob(f"*/*/{CAPTURE_FILE}"))


def _gpu_of(variant_dir: Path) -> tuple[str | None, str | None]:
    capture = json.loads((variant_dir / CAPTURE_FILE).read_text())
    gpu = capture.get("environment", {}).get("gpu")
    dtype = capture.get("settings", {}).get("dtype")
    return (
        gpu if isinstance(gpu, str) and gpu else None,
        dtype if isinstance(dtype, str) else None,
    )


def check_set(set_dir: Path) -> list[Violation]:
    """Every impossible cell of one device set's CSVs and values.json files."""
    variants = _variant_dirs(set_dir)
    gpus = {g for g in (_gpu_of(v)[0] for v in variants) if g}
    peaks = peaks_for(gpus)
    found: list[Violation] = []

    def check(file: Path, column: str, row: str, cell: object, gpu: str | None, dtype: str | None):
        value = _number(cell)
        if value is None:
            return
        why = check_cell(column, value, peaks.get(gpu) if gpu else None, gpu, dtype)
        if why:
            found.append(Violation(file.relative_to(set_dir).as_posix(), column, row, value, why))

    for variant in variants:
        gpu, capture_dtype = _gpu_of(variant)
        for path in sorted(variant.glob("*.csv")):
            with path.open(newline="") as fh:
                for i, row in enumerate(csv.DictReader(fh), start=1):
                    dtype = row.get("dtype") or capture_dtype
                    for column, cell in row.items():
                        check(path, column, str(i), cell, gpu, dtype)
        values_path = variant / "values.json"
        if values_path.exists():
            for query, obj in json.loads(values_path.read_text()).items():
                if not isinstance(obj, dict):
                    continue
                for column, cell in obj.items():
                    check(values_path, column, query, cell, gpu, capture_dtype)
    return found


@pytest.mark.parametrize("device_set", DEVICE_SETS)
def test_every_derived_number_is_physically_possible(device_set: str) -> None:
    violations = check_set(ARTIFACTS / device_set)
    assert not violations, "impossible numbers:\n" + "\n".join(map(str, violations))


@pytest.mark.parametrize("device_set", DEVICE_SETS)
def test_a_training_steps_utilisation_and_optimizer_traffic_are_possible(device_set: str) -> None:
    """A step is at least as long as its GEMMs' kernel time, so its MFU is at most the GEMMs' own
    share of the bf16 peak; and any AdamW moves at least what the fused one must: each parameter's
    value, gradient and two moments read, and the value and two moments written (7 operands)."""
    checked = 0
    for values_path in sorted((ARTIFACTS / device_set).glob("train/*/values.json")):
        v = json.loads(values_path.read_text())
        if (m := v.get("train_mfu")) and m["mfu_pct"] is not None:
            gemm_ns = v["train_backward"]["forward_gemm_gpu_ns"]
            gemm_ns += v["train_backward"]["backward_gemm_gpu_ns"]
            assert m["step_mean_ns"] >= gemm_ns, values_path
            # The GEMMs' rate over their own kernel time, as a share of the same bf16 peak.
            gemm_share = m["mfu_pct"] * m["step_mean_ns"] / gemm_ns
            assert 0 < m["mfu_pct"] <= gemm_share <= 100, values_path
            checked += 1
        if (t := v.get("train_optimizer_traffic")) and t["bytes_per_parameter"] is not None:
            assert t["bytes_per_parameter"] >= 7 * t["parameter_elem_bytes"], values_path
            assert 0 < t["optimizer_bytes_peak_pct"] <= 100, values_path
            checked += 1
    if device_set == "cuda":
        assert checked, "no training step's MFU or optimizer traffic in the CUDA set"


def test_checker_reports_a_broken_copy(tmp_path: Path) -> None:
    """One impossible number in a CSV and one in a values.json: both reported, by place."""
    source = ARTIFACTS / ("cuda" if "cuda" in DEVICE_SETS else DEVICE_SETS[0])
    copy = tmp_path / "set"
    for path in source.rglob("*"):
        if path.is_file() and path.suffix in (".csv", ".json"):
            target = copy / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    variant = _variant_dirs(copy)[0]
    gpu, _ = _gpu_of(variant)
    (variant / "broken.csv").write_text("name,rate_tflops,share_pct\nx,5,20\ny,1e9,50\n")
    values_path = variant / "values.json"
    values = json.loads(values_path.read_text()) if values_path.exists() else {}
    values["broken"] = {"wait_ns": -5, "busy_pct": 120.0}
    values_path.write_text(json.dumps(values))
    reported = {(v.file, v.column, v.row) for v in check_set(copy)}
    rel = variant.relative_to(copy).as_posix()
    assert (f"{rel}/values.json", "wait_ns", "broken") in reported
    assert (f"{rel}/values.json", "busy_pct", "broken") in reported
    if gpu:  # a rate is held to a peak only where the capture names a GPU
        assert (f"{rel}/broken.csv", "rate_tflops", "2") in reported
    assert (f"{rel}/broken.csv", "rate_tflops", "1") not in reported


@pytest.mark.parametrize(
    ("column", "value", "ok"),
    [
        ("share_pct", 100.0, True),
        ("share_pct", 100.5, False),
        ("share_pct", -0.1, False),
        ("gap_ns", -1.0, False),
        ("start_offset_ns", -1.0, True),
        ("cpu_ns_per_step", -3.0, False),
        ("achieved_tflops", float("nan"), False),
        ("weight_bytes", -1.0, False),
    ],
)
def test_cell_rules(column: str, value: float, ok: bool) -> None:
    assert (check_cell(column, value, None, None, None) is None) is ok


def test_rates_are_held_to_the_peak_of_their_type() -> None:
    (h200,) = peaks_for({"NVIDIA H200"}).values()
    assert check_cell("achieved_tflops", 900.0, h200, "NVIDIA H200", "bf16") is None
    assert check_cell("achieved_tflops", 1000.0, h200, "NVIDIA H200", "bf16")
    assert check_cell("achieved_tflops", 1000.0, h200, "NVIDIA H200", None) is None  # fp8 bound
    assert check_cell("achieved_tflops", 100.0, h200, "NVIDIA H200", "fp32") is None  # as tf32
    assert check_cell("achieved_tflops", 600.0, h200, "NVIDIA H200", "fp32")
    assert check_cell("read_bytes_per_s", 5e12, h200, "NVIDIA H200", None)
    assert check_cell("peak_bytes_per_s", 5.3e12, h200, "NVIDIA H200", None) is None  # datasheet
    assert check_cell("achieved_tflops", 1.0, None, "NVIDIA B999", None)  # unknown GPU: named


# ---- the hardware module -----------------------------------------------------------------------


def _peak_table() -> list[dict[str, object]]:
    return trace_rows(
        A100_ADD, "INCLUDE PERFETTO MODULE guide.hardware; SELECT * FROM guide_hardware_peak"
    )


def test_peak_table_is_dense_sourced_and_consistent() -> None:
    rows = _peak_table()
    gpus = {r["gpu"] for r in rows}
    for wanted in (
        "H200 SXM", "H200 NVL", "H100 SXM", "H100 PCIe", "H100 NVL", "A100 40GB SXM",
        "A100 40GB PCIe", "A100 80GB SXM", "A100 80GB PCIe", "L4", "L40S", "GeForce RTX 4090",
        "V100 SXM2", "Instinct MI300X",
    ):  # fmt: skip
        assert wanted in gpus
    for r in rows:
        assert str(r["source"]).startswith("https://"), r
        number, unit = str(r["datasheet"]).split()
        scale = {"TB/s": 1e12, "GB/s": 1e9}[unit]
        assert float(number.replace(",", "")) * scale == pytest.approx(r["peak_bytes_per_s"])
        # Dense figures: each halving of precision at most doubles the rate, and no dense bf16
        # figure of these GPUs reaches the 1,979 TFLOP/s that H100/H200 datasheets print with
        # sparsity.
        tf = {m: r[f"{m}_tflops"] for m in MATHS}
        assert tf["fp32"] and tf["fp16"], r
        if tf["bf16"]:
            assert tf["bf16"] == tf["fp16"] < 1979
        if tf["tf32"]:
            assert tf["tf32"] == pytest.approx(tf["fp16"] / 2, rel=0.02)
        if tf["fp8"]:
            assert tf["fp8"] == pytest.approx(tf["fp16"] * 2, rel=0.02)
    by_gpu = {r["gpu"]: r for r in rows}
    assert by_gpu["H200 SXM"]["bf16_tflops"] == pytest.approx(989, abs=1)
    assert by_gpu["H200 SXM"]["fp32_tflops"] == pytest.approx(67)
    assert by_gpu["H200 SXM"]["peak_bytes_per_s"] == 4.8e12


@pytest.mark.parametrize(
    ("name", "gpu"),
    [
        ("NVIDIA H200", "H200 SXM"),
        ("NVIDIA H200 NVL", "H200 NVL"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA H100 NVL", "H100 NVL"),
        ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
        ("NVIDIA A100-SXM4-40GB", "A100 40GB SXM"),
        ("NVIDIA A100-PCIE-40GB", "A100 40GB PCIe"),
        ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090"),
        ("Tesla V100-SXM2-32GB", "V100 SXM2"),
        ("AMD Instinct MI300X", "Instinct MI300X"),
        ("NVIDIA A100-PG509-200", None),  # a board name no datasheet uses: no guess
        ("cpu", None),
    ],
)
def test_device_names_match_one_row(name: str, gpu: str | None) -> None:
    found = peaks_for({name})
    assert (found[name].gpu if found else None) == gpu


@pytest.mark.parametrize(
    ("trace", "name", "gpu"),
    [
        (H100_BERT, "NVIDIA H100 80GB HBM3", "H100 SXM"),
        (MI300X, "AMD Instinct MI300X", "Instinct MI300X"),
        (V100, "Tesla V100-SXM2-32GB", "V100 SXM2"),
        (A100_ADD, "NVIDIA A100-PG509-200", None),
    ],
)
def test_trace_device_comes_from_device_properties(trace: Path, name: str, gpu: str) -> None:
    """The GPU is read from the trace's own deviceProperties (also written after the events, as
    in the H100 trace), on reference traces that carry no annotation naming it."""
    (row,) = trace_rows(
        trace, "INCLUDE PERFETTO MODULE guide.hardware; SELECT * FROM guide_hardware_device"
    )
    assert row["name"] == name and row["gpu"] == gpu and row["device"] == 0


def test_cpu_trace_has_no_device_and_no_peak() -> None:
    cpu_traces = sorted((ARTIFACTS / "cpu").glob("*/*/trace.json.gz"))
    if not cpu_traces:
        pytest.skip("no CPU set")
    (row,) = trace_rows(
        cpu_traces[0],
        "INCLUDE PERFETTO MODULE guide.hardware; SELECT "
        "(SELECT COUNT(*) FROM guide_trace_device) AS devices, "
        "guide_hardware_peak_tflops('bf16') AS tflops, "
        "guide_hardware_peak_bytes_per_s() AS bandwidth",
    )
    assert row == {"devices": 0, "tflops": None, "bandwidth": None}


def test_device_name_is_data_not_sql(tmp_path: Path) -> None:
    """A trace is untrusted input: a device name that looks like SQL stays a name."""
    name = "GPU'); DROP TABLE slice; --\x00 \u00e9"
    trace = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": name, "totalGlobalMem": "lots", "numSms": 7}],
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 2}
        ],
    }
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps(trace).encode()))
    (row,) = trace_rows(
        path,
        "SELECT name, memory_bytes, sms, (SELECT COUNT(*) FROM slice) AS n FROM guide_trace_device",
    )
    assert row == {"name": name.replace("\x00", ""), "memory_bytes": None, "sms": 7, "n": 1}


@pytest.mark.parametrize(
    ("dtype", "kernel", "math_"),
    [
        ("bf16", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "bf16"),
        (None, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn", "bf16"),
        ("fp32", "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_ffma", "fp32"),
        ("fp32", "ampere_sgemm_128x64_tn", "fp32"),
        ("fp32", "ampere_tf32_s1688gemm_tf32_128x128_tn", "tf32"),
        ("fp32", "nvjet_sm90_tst_128x128", None),  # the name does not say: no peak guessed
        ("fp8 e4m3fn", "nvjet_sm90_qqtst_128x128", "fp8"),
        (None, None, None),
    ],
)
def test_gemm_math(dtype: str | None, kernel: str | None, math_: str | None) -> None:
    d = "NULL" if dtype is None else _literal(dtype)
    k = "NULL" if kernel is None else _literal(kernel)
    (row,) = trace_rows(
        A100_ADD,
        f"INCLUDE PERFETTO MODULE guide.hardware; SELECT guide_hardware_gemm_math({d}, {k}) AS m",
    )
    assert row["m"] == math_


# ---- achieved rates divide by GPU time -------------------------------------------------------

# Every column a page can show as an achieved figure (a name containing `achieved`, and every
# `_tflops` / `_bytes_per_s` column a query computes), with the GPU-time term its division must
# use. A new rate column fails until it is listed here with its GPU-time denominator: "achieved"
# means work done over the time the GPU spent doing it, never over CPU time (a forward's CPU time
# ends before its kernels do, which is how a rate above the peak appears).
GPU_TIME_RATES: dict[tuple[str, str], str] = {
    ("attention_forward", "gpu_tflops"): "gpu_ns",
    ("attention_forward", "causal_gpu_tflops"): "gpu_ns",
    ("attention_sweep", "gpu_tflops"): "gpu_ns",
    ("attention_sweep", "causal_gpu_tflops"): "gpu_ns",
    ("attention_sweep", "traffic_bytes_per_s"): "gpu_ns",
    ("attention_sweep_notes", "short_traffic_bytes_per_s"): "gpu_ns",
    ("attention_sweep_notes", "best_traffic_bytes_per_s"): "gpu_ns",
    ("attention_sweep_notes", "best_gpu_tflops"): "gpu_ns",
    ("attention_traffic", "traffic_bytes_per_s"): "gpu_ns",
    ("linear_gemm", "achieved_tflops"): "kernel_dur",
    ("llm_decode", "kernel_read_bytes_per_s"): "kernel_union_ns",
    ("llm_decode", "gemm_read_bytes_per_s"): "gemm_ns",
    ("matmul_add_gemm_kernels", "median_tflops"): "kernel_dur",
    ("matmul_add_gemm_steps", "achieved_tflops"): "kernel_dur",
    ("train_gemm", "achieved_tflops"): "kernel_dur",
    ("train_optimizer_traffic", "optimizer_achieved_bytes_per_s"): "gpu_ns",
    ("train_roofline", "achieved_tflops"): "counted_dur",
    ("train_roofline", "achieved_bytes_per_s"): "counted_dur",
    # guide_dispatch_work.dur: the kernel's time on a GPU trace (the operator's on a CPU trace,
    # where the CPU is the device doing the work).
    ("mlp_work", "achieved_tflops"): "w.dur",
    ("mlp_work", "achieved_bytes_per_s"): "w.dur",
}
# Columns that select a rate computed in a CTE of the same query: the GPU-time term is looked for
# in the query's text, the CPU-time words in the column's own expression.
INDIRECT = {
    ("attention_sweep_notes", "short_traffic_bytes_per_s"),
    ("attention_sweep_notes", "best_traffic_bytes_per_s"),
}
# Columns with these words in their definition divide by time measured on the CPU.
CPU_TIME = re.compile(r"\b(cpu_\w*|\w*_cpu|self_ns|self_dur|token_ns)\b", re.IGNORECASE)
# Rates another part of the guide is replacing: they fail the rule today (strict xfail), and pass
# once fixed, when the entry must go.
KNOWN_CPU_TIME: dict[tuple[str, str], str] = {}


def _select_items(sql: str) -> dict[str, str]:
    """Output column -> the expression that defines it (`<expr> AS <name>`), comments removed."""
    text = re.sub(r"--[^\n]*", "", sql)
    items: dict[str, str] = {}
    for m in re.finditer(r"\bAS\s+(\w+)\s*(?=,|\n|FROM\b|$)", text, re.IGNORECASE):
        depth, i = 0, m.start() - 1
        while i >= 0:
            ch = text[i]
            if ch == ")":
                depth += 1
            elif ch == "(":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and (ch == "," or text[max(0, i - 5) : i + 1].upper() == "SELECT"):
                break
            i -= 1
        items[m.group(1)] = text[i + 1 : m.start()].strip()
    return items


def _rate_columns() -> list[tuple[str, str, str]]:
    out = []
    for path in sorted(QUERIES_DIR.glob("*.sql")):
        for column, expr in _select_items(load_query(path.stem).sql).items():
            rate = unit_of(column) in ("tflops", "bytes/s") or "achieved" in column
            if rate and unit_of(column) != "pct" and not is_datasheet(column):
                out.append((path.stem, column, expr))
    return out


def test_select_items_finds_the_definition() -> None:
    items = _select_items("SELECT a, MIN(x) / NULLIF(AVG(y), 0) AS r_tflops,\n  b AS c\nFROM t")
    assert items["r_tflops"] == "MIN(x) / NULLIF(AVG(y), 0)"
    assert items["c"] == "b"


@pytest.mark.parametrize(
    ("query", "column", "expr"),
    [
        pytest.param(
            *rate,
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_CPU_TIME[rate[:2]])]
            if rate[:2] in KNOWN_CPU_TIME
            else [],
            id=f"{rate[0]}.{rate[1]}",
        )
        for rate in _rate_columns()
    ],
)
def test_achieved_rates_divide_by_gpu_time(query: str, column: str, expr: str) -> None:
    gpu_time = GPU_TIME_RATES.get((query, column))
    assert gpu_time, f"{query}.{column} is a rate: list it in GPU_TIME_RATES with its GPU time"
    where = load_query(query).sql if (query, column) in INDIRECT else expr
    assert gpu_time in where, f"{query}.{column} does not divide by {gpu_time}: {expr}"
    assert not CPU_TIME.search(expr), f"{query}.{column} uses CPU time: {expr}"


def test_the_rate_rule_catches_a_cpu_time_rate() -> None:
    """The sweep's old "achieved (CPU time)" column, as it was written, fails the rule."""
    (expr,) = _select_items(
        "SELECT MIN(flops) / NULLIF(AVG(cpu_ns), 0) / 1e3 AS cpu_tflops FROM t"
    ).values()
    assert CPU_TIME.search(expr)


# ---- the manifest says what each set lacks -----------------------------------------------------


@pytest.mark.parametrize("device_set", DEVICE_SETS)
def test_manifest_lists_every_missing_variant(device_set: str) -> None:
    manifest = json.loads((ARTIFACTS / device_set / "MANIFEST.json").read_text())
    captured = {f"{s}/{v}" for s, vs in manifest["variants"].items() for v in vs}
    registered = {f"{s.slug}/{v.name}" for s in STEPS for v in s.variants_for(device_set)}
    assert manifest["not_captured"] == sorted(registered - captured)
    cuda_only = {f"{s.slug}/{v.name}" for s in STEPS for v in s.variants if v.needs_cuda}
    assert manifest["needs_cuda_not_captured"] == sorted(cuda_only - captured)


def test_manifest_of_a_partial_set(tmp_path: Path) -> None:
    """A set holding one variant lists every other registered variant of its device."""
    step = STEPS[0]
    variant = step.variants_for("cuda")[0]
    vdir = tmp_path / step.slug / variant.name
    vdir.mkdir(parents=True)
    (vdir / CAPTURE_FILE).write_text("{}")
    manifest = build_manifest(tmp_path, "cuda", [(step, vdir)])
    expected = sorted(f"{s.slug}/{v.name}" for s in STEPS for v in s.variants_for("cuda"))
    expected.remove(f"{step.slug}/{variant.name}")
    assert manifest["not_captured"] == expected
    assert set(manifest["needs_cuda_not_captured"]) <= set(expected)
