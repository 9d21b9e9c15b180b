"""Run every detector on one opened trace: what they found, and what the trace cannot show."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from generators.doctor.detectors import (
    EVIDENCE_COLUMNS,
    JA_SUFFIX,
    SEVERITIES,
    Detector,
    render_template,
)
from generators.doctor.kernels import KernelView, kernel_view
from generators.doctor.trust import (
    DroppedEvents,
    FileCheck,
    check_file,
    dropped_events,
    recovered_steps_sql,
    world_size,
)
from generators.doctor.trust_lines import both, overflow_keys, text
from generators.tp import DROP_STAT, rows_of
from generators.units import format_bytes, format_duration_ns, format_value

#: The prefix of a detector's phase in :attr:`Report.timings`.
DETECTOR_PHASE = "detector:"

#: Evidence rows a report lists per finding (all rows count in its totals).
LISTED_ROWS = 10

#: Why a finding about the step loop is information on a trace without step markers.
NO_LOOP_DEMOTION = (
    "Shown as information: the trace has no step markers, so the whole trace stands for the "
    "loop, and this may be one-time work (start-up, weight uploads, warm-up) rather than work "
    "every step repeats.",
    "情報として示します。トレースにステップの目印がないためトレース全体をループとみなしており、"
    "これはステップごとに繰り返す仕事ではなく、一度きりの仕事（立ち上げ、重みのアップロード、"
    "ウォームアップ）かもしれません。",
)
#: Why a finding that the launched kernels could overturn is information without them.
ONE_STEP_DEMOTION = (
    "Shown as information: the trace holds one real profiled step, so nothing tells a cold "
    "step (start-up, warm-up) from the loop's steady state.",
    "情報として示します。トレースにはプロファイルされた実際のステップが 1 つしかないため、"
    "コールドなステップ（立ち上げ、ウォームアップ）とループの定常状態を区別できません。",
)

#: A warning whose cost is under this share (%) of the step loop's time is shown as information:
#: whatever its share of the detector's own measure (GPU busy time, kernel time, a step), fixing it
#: could give back less than this of the loop, too little to act on before anything larger.
SMALL_SHARE_PCT = 1.0


def small_share_demotion(cost_ns: int, loop_ns: int | None) -> tuple[str, str] | None:
    """Why a warning is information when its cost is a small share of the loop, or None."""
    if not loop_ns or cost_ns >= SMALL_SHARE_PCT / 100 * loop_ns:
        return None
    pct = 100 * cost_ns / loop_ns
    # One decimal: the share only has to show how far under the floor it is.
    share, share_ja = (f"{pct:.1f} %",) * 2 if pct >= 0.1 else ("under 0.1 %", "0.1 % 未満")
    cost, loop = _ms(cost_ns), _ms(loop_ns)
    return (
        f"Shown as information: it costs {cost} of the loop's {loop} ({share}; the floor for a "
        f"warning is {SMALL_SHARE_PCT:g} %), too little to act on before anything larger.",
        f"情報として示します。コストはループの {loop} のうち {cost}（{share_ja}。警告にするのは "
        f"{SMALL_SHARE_PCT:g} % 以上）で、ほかのより大きな問題より先に手を付ける"
        "ほどではありません。",
    )


NO_KERNELS_DEMOTION = (
    "Shown as information: the trace does not tie launches to kernels, and the kernels are what "
    "would show a fused or foreach implementation behind these operators.",
    "情報として示します。トレースは起動とカーネルを結びつけておらず、これらの演算子の裏にある"
    "fused や foreach の実装を示すのはそのカーネルだからです。",
)


class Group(NamedTuple):
    """One value of a finding's breakdown column: its rows and their cost."""

    value: str
    rows: int
    cost_ns: int
    #: The value in Japanese (the column's ``_ja`` twin), or None when it has none.
    value_ja: str | None = None

    def label(self, lang: str = "en") -> str:
        return self.value_ja if lang == "ja" and self.value_ja is not None else self.value


@dataclass
class Finding:
    detector: Detector
    rows: list[dict[str, Any]]
    seen: str
    sql: str
    #: ``seen`` in Japanese (the detector's ``seen_ja`` filled from the same rows).
    seen_ja: str = ""
    #: Why the finding is shown as information rather than at its detector's severity (English,
    #: Japanese), or None.
    demoted: tuple[str, str] | None = None

    @property
    def severity(self) -> str:
        return "info" if self.demoted else self.detector.severity

    @property
    def cost_ns(self) -> int:
        return int(sum(r["cost_ns"] or 0 for r in self.rows))

    @property
    def evidence(self) -> list[dict[str, Any]]:
        """The rows to list: evidence rows, costliest first, at most LISTED_ROWS."""
        shown = [r for r in self.rows if r.get("evidence", 1)]
        return shown[:LISTED_ROWS]

    @property
    def unlisted(self) -> int:
        return sum(1 for r in self.rows if r.get("evidence", 1)) - len(self.evidence)

    @functools.cached_property
    def breakdown(self) -> list[Group]:
        """The rows and their cost per value of the detector's breakdown column, costliest
        first (with the value's Japanese twin, where the column has one)."""
        col = self.detector.breakdown
        if not col:
            return []
        groups: dict[str, list[Any]] = {}
        for r in self.rows:
            twin = r.get(col + JA_SUFFIX)
            g = groups.setdefault(str(r.get(col)), [0, 0, None if twin is None else str(twin)])
            g[0] += 1
            g[1] += int(r["cost_ns"] or 0)
        return sorted(
            (Group(k, n, c, ja) for k, (n, c, ja) in groups.items()),
            key=lambda g: (-g.cost_ns, g.value),
        )


@dataclass(frozen=True)
class Limitation:
    """One line of the trust gate ("Can I trust this trace?"): something the trace does not hold,
    or holds in a way that bends some lessons' numbers, read from the trace itself."""

    id: str
    text: str
    #: Detectors that could not run because of it.
    skipped: tuple[str, ...] = ()
    #: ``text`` in Japanese.
    text_ja: str = ""
    #: Detectors that ran, but whose numbers it bends (read them with this line in mind).
    weakens: tuple[str, ...] = ()
    #: "info" for a line that only says what the trace is (steps counted, steps recovered).
    level: str = "caution"


@dataclass
class Report:
    path: Path
    size_bytes: int
    gpu: str | None
    findings: list[Finding] = field(default_factory=list)
    silent: list[Detector] = field(default_factory=list)
    skipped: list[Detector] = field(default_factory=list)
    failed: list[tuple[Detector, str]] = field(default_factory=list)
    limitations: list[Limitation] = field(default_factory=list)
    #: Wall-clock time the detectors took; None where a report must not change between runs.
    seconds: float | None = 0.0
    #: The trace's first timestamp (ns): evidence times are shown from it.
    trace_start_ns: int = 0
    #: The trace's last timestamp (ns); 0 when unknown.
    trace_end_ns: int = 0
    #: A short id unique within one rendered report (HTML anchors, file pickers).
    key: str = "t1"
    #: Where a trace that is not the reader's own comes from (the gallery's reference traces:
    #: another project's, with its licence), shown under its name in the HTML report.
    provenance: str | None = None
    #: What ran the trace, in words: the GPU's name, "GPU model unknown" (kernels, no
    #: deviceProperties), an accelerator's kind, or None (no device work at all).
    device: str | None = None
    device_ja: str | None = None
    #: The kernels that take the GPU's time and how the launches met their streams (None on a
    #: trace without kernels, or where the view could not be computed).
    kernels: KernelView | None = None
    #: Wall-clock seconds of each phase, in the order they ran: ``import`` (the engine reading
    #: the trace, where the caller timed it), ``dropped-events`` (the file read again for the
    #: events the importer dropped, only then), ``trust-gate`` (what the trace holds: the first
    #: queries, which include the domain modules they read) and ``detector:<id>`` for each
    #: detector that ran (its SQL, with any module it is the first to include), then
    #: ``kernel-view`` (what the top kernels achieved, and the launch queue).
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def detector_seconds(self) -> dict[str, float]:
        """Each detector that ran, and the seconds its SQL took."""
        return {
            k.removeprefix(DETECTOR_PHASE): v
            for k, v in self.timings.items()
            if k.startswith(DETECTOR_PHASE)
        }

    @property
    def bounds(self) -> tuple[int, int] | None:
        """The trace's [start, end] (ns), or None when unknown."""
        return (self.trace_start_ns, self.trace_end_ns) if self.trace_end_ns else None

    def worst(self) -> str | None:
        """The most serious severity found, or None."""
        found = {f.severity for f in self.findings}
        for s in reversed(SEVERITIES):
            if s in found:
                return s
        return None


# What the trace holds, asked once per trace.
_FACTS_SQL = """
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.hardware;
SELECT
  (SELECT COUNT(*) FROM guide_kineto_gpu_activity) AS gpu_activities,
  (SELECT COUNT(*) FROM guide_kineto_gpu_activity WHERE category = 'kernel') AS kernels,
  (SELECT COUNT(*) FROM guide_kineto_launch_link) AS launch_links,
  (SELECT COUNT(*) FROM guide_kineto_runtime_call) AS runtime_calls,
  (SELECT COUNT(*) FROM guide_kineto_shared_correlation) AS shared_correlations,
  (SELECT COUNT(*) FROM guide_kineto_launch_process) AS launch_processes,
  (SELECT COUNT(*) FROM slice WHERE category = 'cpu_op') AS cpu_ops,
  (SELECT COUNT(*) FROM slice WHERE category = 'python_function') AS python_functions,
  EXISTS (SELECT 1 FROM args WHERE key GLOB 'args.Input Dims*') AS cpu_ops_with_shapes,
  (SELECT COUNT(*) FROM guide_windows_real_loop WHERE step IS NOT NULL) AS steps,
  (SELECT SUM(dur) FROM guide_windows_real_loop) AS loop_ns,
  (SELECT COUNT(*) FROM guide_windows_stub_step) AS stub_steps,
  (SELECT GROUP_CONCAT('ProfilerStep#' || step || ' (' || printf('%.0f', dur / 1e3) || ' µs)', ', ')
   FROM guide_windows_stub_step) AS stub_list,
  (SELECT COUNT(*) FROM guide_trace_recovered_step) AS recovered_steps,
  (SELECT step FROM guide_windows_cold_step) AS cold_step,
  (SELECT dur FROM guide_windows_cold_step) AS cold_step_ns,
  (SELECT warm_median_ns FROM guide_windows_cold_step) AS warm_step_ns,
  (SELECT COUNT(*) FROM guide_kineto_runtime_call
   WHERE name GLOB '*BeginCapture*' OR name GLOB '*EndCapture*'
     OR name GLOB '*GraphInstantiate*') AS capture_calls,
  (SELECT COUNT(*) FROM guide_kineto_runtime_call WHERE name GLOB '*GraphLaunch*')
    AS graph_launches,
  (SELECT COUNT(*) FROM slice WHERE category GLOB 'mtia*') AS mtia_events,
  (SELECT name FROM guide_trace_device ORDER BY device LIMIT 1) AS gpu_name,
  (SELECT compute_major || '.' || compute_minor FROM guide_trace_device
   ORDER BY device LIMIT 1) AS gpu_compute,
  (SELECT sms FROM guide_trace_device ORDER BY device LIMIT 1) AS gpu_multiprocessors,
  (SELECT memory_bytes FROM guide_trace_device ORDER BY device LIMIT 1) AS gpu_memory_bytes,
  (SELECT gpu FROM guide_hardware_device) AS known_gpu,
  (SELECT start_ts FROM trace_bounds) AS trace_start,
  (SELECT end_ts FROM trace_bounds) AS trace_end
"""

# Importer problems other than the drops counted above.
_STATS_SQL = f"""
SELECT name, SUM(value) AS value FROM stats
WHERE value > 0 AND severity IN ('error', 'data_loss') AND name != '{DROP_STAT}'
GROUP BY name ORDER BY name
"""

_DROPS_SQL = f"SELECT COALESCE(SUM(value), 0) AS dropped FROM stats WHERE name = '{DROP_STAT}'"
#: What the importer kept, against which trust.dropped_events counts the file's events: the
#: slices per category, and the step markers.
_KEPT_SQL = "SELECT category, COUNT(*) AS n FROM slice WHERE category IS NOT NULL GROUP BY category"
_STEPS_KEPT_SQL = "SELECT COUNT(*) AS n FROM slice WHERE name GLOB 'ProfilerStep#*'"

#: Accelerators other than GPUs whose work a trace can hold, by the prefix of their events'
#: category; the doctor's checks read CUDA/ROCm kernels only.
ACCELERATORS = {"mtia": "MTIA"}


def _ms(ns: float) -> str:
    return format_duration_ns(int(ns))


def device_label(facts: dict[str, Any]) -> tuple[str | None, str | None]:
    """What ran the trace, in English and Japanese, from the trace itself."""
    if facts["gpu_name"]:
        return facts["gpu_name"], facts["gpu_name"]
    if facts["gpu_activities"]:
        # What deviceProperties says of a GPU it does not name (vLLM's ROCm traces, say).
        en, ja = [], []
        if facts.get("gpu_compute"):
            en.append(f"compute capability {facts['gpu_compute']}")
            ja.append(f"計算能力 {facts['gpu_compute']}")
        if facts.get("gpu_multiprocessors"):
            en.append(f"{facts['gpu_multiprocessors']} multiprocessors")
            ja.append(f"マルチプロセッサ {facts['gpu_multiprocessors']} 個")
        if facts.get("gpu_memory_bytes"):
            en.append(format_bytes(facts["gpu_memory_bytes"]))
            ja.append(format_bytes(facts["gpu_memory_bytes"]))
        if not en:
            return "GPU model unknown", "GPU のモデルは不明"
        return f"GPU model unknown ({', '.join(en)})", f"GPU のモデルは不明（{'、'.join(ja)}）"
    if facts["mtia_events"]:
        return "MTIA accelerator (model unknown)", "MTIA アクセラレータ（モデルは不明）"
    return None, None


def _file_lines(checked: FileCheck, detectors: list[Detector]) -> list[Limitation]:
    """The trust lines about what the importer read silently from the file's bytes."""
    every = tuple(d.id for d in detectors)
    out: list[Limitation] = []
    if checked.overflowing:
        n = sum(checked.overflowing.values())
        en, ja = both("ids-overflow", n=n, keys=overflow_keys(checked.overflowing))
        out.append(Limitation("ids-overflow", en, text_ja=ja, weakens=every))
    if checked.without_pid_or_tid:
        en, ja = both("no-pid-tid", n=checked.without_pid_or_tid)
        out.append(Limitation("no-pid-tid", en, text_ja=ja, weakens=every))
    if checked.pid_or_tid_twice:
        en, ja = both("pid-tid-twice", n=checked.pid_or_tid_twice)
        out.append(Limitation("pid-tid-twice", en, text_ja=ja, weakens=every))
    if checked.invalid_utf8_bytes:
        en, ja = both("not-utf8", n=checked.invalid_utf8_bytes)
        out.append(Limitation("not-utf8", en, text_ja=ja))
    if checked.error:
        en, ja = both("file-check-partial", error=checked.error)
        out.append(Limitation("file-check-partial", en, text_ja=ja))
    return out


def _shared_correlations_line(
    facts: dict[str, Any], detectors: list[Detector], skipped: tuple[str, ...]
) -> Limitation:
    """CUPTI correlation ids on more than one launch: the launch link cannot be trusted. On
    several processes, the file merges their traces (the ranks of a job, say)."""
    n, procs = facts["shared_correlations"], facts["launch_processes"]
    ids, ids_ja = both("shared-correlations/ids", n=n, is_are=" is" if n == 1 else "s are each")
    key = "shared-correlations/processes" if procs > 1 else "shared-correlations/one-process"
    en, ja = text(key, ids=ids, procs=procs), text(key, "ja", ids=ids_ja, procs=procs)
    return Limitation(
        "shared-correlations",
        en,
        skipped,
        text_ja=ja,
        weakens=tuple(d.id for d in detectors if d.id not in skipped),
    )


def _limitations(
    facts: dict[str, Any],
    stats: list[list[Any]],
    detectors: list[Detector],
    dropped: DroppedEvents | None,
    checked: FileCheck | None = None,
):
    def needing(need: str) -> tuple[str, ...]:
        return tuple(d.id for d in detectors if need in d.needs)

    def relying(*what: str) -> tuple[str, ...]:
        return tuple(d.id for d in detectors if set(what) & (set(d.relies) | set(d.needs)))

    out: list[Limitation] = _file_lines(checked, detectors) if checked else []
    missing: set[str] = set()
    if facts["shared_correlations"]:
        out.append(_shared_correlations_line(facts, detectors, needing("flows")))
        missing.add("flows")
    if not facts["gpu_activities"] and facts["mtia_events"]:
        missing |= {"gpu", "flows"}
        out.append(
            Limitation(
                "accelerator-not-read",
                text("accelerator-not-read", mtia=facts["mtia_events"]),
                needing("gpu"),
                weakens=tuple(d for d in relying("kernels", "flows") if d not in needing("gpu")),
                text_ja=text("accelerator-not-read", "ja", mtia=facts["mtia_events"]),
            )
        )
    elif not facts["gpu_activities"]:
        missing |= {"gpu", "flows"}
        out.append(
            Limitation(
                "no-gpu",
                text("no-gpu"),
                needing("gpu"),
                weakens=tuple(d for d in relying("flows") if d not in needing("gpu")),
                text_ja=text("no-gpu", "ja"),
            )
        )
    elif not facts["launch_links"] and not facts["shared_correlations"]:
        missing.add("flows")
        out.append(
            Limitation(
                "no-flows",
                text("no-flows"),
                tuple(d for d in needing("flows") if d not in needing("gpu")) or needing("flows"),
                weakens=tuple(d for d in relying("flows") if d not in needing("flows")),
                text_ja=text("no-flows", "ja"),
            )
        )
    if facts["cpu_ops"] and not facts["cpu_ops_with_shapes"]:
        missing.add("shapes")
        out.append(
            Limitation(
                "no-shapes",
                text("no-shapes"),
                needing("shapes"),
                text_ja=text("no-shapes", "ja"),
            )
        )
    if dropped is not None and (facts["dropped"] or dropped.total):
        out.append(_dropped_line(facts, dropped, detectors, relying))
    if not facts["steps"]:
        missing.add("steps")
        out.append(
            Limitation(
                "no-steps",
                text("no-steps"),
                needing("steps"),
                text_ja=text("no-steps", "ja"),
                weakens=tuple(d.id for d in detectors if d.scope == "loop"),
            )
        )
    else:
        out.append(_steps_line(facts, detectors, relying))
    if facts["python_functions"]:
        out.append(
            Limitation(
                "with-stack",
                text("with-stack", python=facts["python_functions"]),
                text_ja=text("with-stack", "ja", python=facts["python_functions"]),
                weakens=relying("cpu-time"),
            )
        )
    if facts["capture_calls"]:
        replays = facts["graph_launches"]
        tail, tail_ja = both(
            "graph-capture/replays" if replays else "graph-capture/no-replays", replays=replays
        )
        out.append(
            Limitation(
                "graph-capture",
                text("graph-capture", capture=facts["capture_calls"]) + tail,
                () if replays else relying("execution"),
                text_ja=text("graph-capture", "ja", capture=facts["capture_calls"]) + tail_ja,
                weakens=relying("execution") if replays else (),
            )
        )
        if not replays:
            missing.add("execution")
    for name, value in stats:
        en, ja = both("importer", value=value, name=name)
        out.append(Limitation(f"importer-{name}", en, text_ja=ja))
    if facts["gpu_activities"] and not facts["gpu_name"]:
        missing.add("device")
        out.append(
            Limitation(
                "no-device",
                text("no-device", kernels=facts["kernels"]),
                needing("device"),
                text_ja=text("no-device", "ja", kernels=facts["kernels"]),
            )
        )
    if facts["gpu_name"] and not facts["known_gpu"]:
        out.append(
            Limitation(
                "unknown-gpu",
                text("unknown-gpu", gpu=facts["gpu_name"]),
                text_ja=text("unknown-gpu", "ja", gpu=facts["gpu_name"]),
                level="info",
            )
        )
    return out, missing


def _dropped_line(facts, dropped: DroppedEvents, detectors, relying) -> Limitation:
    """The importer's drops, by kind, and what they take from which detectors."""
    n = facts["dropped"] or dropped.total
    if dropped.error is not None:
        return Limitation(
            "dropped-events",
            f"Perfetto's JSON importer dropped {n} events that partly overlap another event on "
            "the same track, and the file could not be read again to tell which "
            f"({dropped.error}): "
            "any count may be short.",
            text_ja=f"Perfetto の JSON インポータが、同じトラック上の別のイベントと部分的に重なる"
            f"イベントを {n} 個落としました。どれかを確かめるためにファイルを読み直せませんでした"
            f"（{dropped.error}）。どの集計も足りないおそれがあります。",
            weakens=tuple(d.id for d in detectors),
        )
    kinds = ", ".join(f"{cat or '?'}: {k}" for cat, k in dropped.by_category.most_common())
    kinds = kinds or "not identified"
    kinds_ja = "、".join(f"{cat or '?'} {k} 個" for cat, k in dropped.by_category.most_common())
    kinds_ja = f"Kineto のカテゴリ別: {kinds_ja}" if kinds_ja else "種類は特定できません"
    kernels = dropped.by_category.get("kernel", 0) + dropped.by_category.get("gpu_memcpy", 0)
    operators = dropped.by_category.get("cpu_op", 0)
    steps = len(dropped.steps)
    en = [
        f"Perfetto's JSON importer dropped {n} event{'s' if n != 1 else ''} that partly "
        f"overlap{'s' if n == 1 else ''} "
        "another event on the "
        f"same track (by kind: {kinds}); `python -m generators.tp info TRACE --dropped` lists "
        "them."
    ]
    ja = [
        "Perfetto の JSON インポータが、同じトラック上の別のイベントと部分的に重なるイベントを"
        f" {n} 個落としました（{kinds_ja}）。`python -m generators.tp info TRACE --dropped` "
        "で一覧できます。"
    ]
    weakens: set[str] = set()
    if kernels:
        en.append(f"{kernels} of them ran on the GPU: GPU totals are short by them.")
        ja.append(
            f"そのうち {kernels} 個は GPU 上の仕事です。GPU の合計時間はその分だけ少なく出ます。"
        )
        weakens |= set(relying("kernels", "gpu"))
    if operators:
        en.append(f"{operators} of them are operators: operator counts are short by them.")
        ja.append(f"そのうち {operators} 個は演算子です。演算子の数はその分だけ少なく出ます。")
        weakens |= set(relying("operators"))
    if steps:
        en.append(
            f"{steps} of them {'is a' if steps == 1 else 'are'} ProfilerStep#N "
            f"marker{'' if steps == 1 else 's'}: recovered from the file, so the step loop is "
            "the trace's own."
        )
        ja.append(
            f"そのうち {steps} 個は ProfilerStep#N の目印です。ファイルから取り戻したので、"
            "ステップのループは元のまま保たれます。"
        )
    unknown = n - dropped.total
    if unknown > 0:
        en.append(
            f"{unknown} of them could not be identified from the file: any count that rests on "
            "kernels or operators may be short by them."
        )
        ja.append(
            f"そのうち {unknown} 個はファイルから特定できませんでした。カーネルや演算子に基づく"
            "集計は、その分だけ足りないかもしれません。"
        )
        weakens |= set(relying("kernels", "gpu", "operators"))
    elif not (kernels or operators):
        en.append("None of them is a kernel or an operator.")
        ja.append("カーネルや演算子は含まれません。")
    return Limitation(
        "dropped-events",
        " ".join(en),
        text_ja="".join(ja),
        weakens=tuple(d.id for d in detectors if d.id in weakens),
        level="caution" if weakens else "info",
    )


def _one_rank_line(ranks: int, detectors) -> Limitation:
    """A trace of one rank of several: its communication kernels wait for the others."""
    return Limitation(
        "one-rank",
        text("one-rank", ranks=ranks),
        text_ja=text("one-rank", "ja", ranks=ranks),
        weakens=tuple(d.id for d in detectors if d.id == "comm-exposed"),
    )


def _stub_note(facts) -> tuple[str, str]:
    """The sentence naming the stub steps left out (none: two empty strings)."""
    if not facts["stub_steps"]:
        return "", ""
    return (
        f" Left out as stubs (no operator, or under 5 % of the median step: what the profiler's "
        f"stop leaves): {facts['stub_list']}.",
        f"スタブとして除外したステップ（演算子がない、またはステップの中央値の 5 % 未満。プロ"
        f"ファイラの停止が残すもの）: {facts['stub_list']}。",
    )


def _steps_line(facts, detectors, relying) -> Limitation:
    """How many real steps the loop has (stubs left out), and whether the first ran cold. The
    checks it weakens are those that read the loop step by step (they use the cold-step
    table)."""
    n = facts["steps"]
    per_step = tuple(d.id for d in detectors if d.per_step and d.severity != "info")
    stub, stub_ja = _stub_note(facts)
    if n == 1:
        return Limitation(
            "steps",
            "One real profiled step: nothing tells a cold step (start-up, warm-up) from the "
            "loop's steady state, so the per-step checks' findings are shown as information, "
            "and a per-step check that finds nothing is listed as not run." + stub,
            weakens=per_step,
            text_ja="プロファイルされた実際のステップは 1 つだけです。コールドなステップ（"
            "立ち上げ、ウォームアップ）とループの定常状態を区別できないため、ステップごとのチェックの所見は"
            "情報として示し、何も見つけなかったステップごとのチェックは実行しなかったものとして"
            "挙げます。" + stub_ja,
        )
    if facts["cold_step"] is not None:
        cold, warm = _ms(facts["cold_step_ns"]), _ms(facts["warm_step_ns"])
        return Limitation(
            "steps",
            f"{n} profiled steps; the first (ProfilerStep#{facts['cold_step']}, {cold}) ran cold, "
            f"against a median of {warm} for the others: one-time work, which per-step checks "
            "leave out." + stub,
            text_ja=f"プロファイルされたステップは {n} 個です。最初のステップ"
            f"（ProfilerStep#{facts['cold_step']}、{cold}）はコールドで、ほかのステップの中央値は "
            f"{warm} でした。一度きりの仕事なので、ステップごとのチェックはこれを除きます。"
            + stub_ja,
            weakens=per_step if n < 3 else (),
            level="caution" if n < 3 else "info",
        )
    if n < 3:
        return Limitation(
            "steps",
            f"Only {n} profiled step{'s' if n != 1 else ''}: with fewer than three, a cold "
            "first step (start-up, warm-up) cannot be told from a slow one, and every step may "
            "carry one-time work." + stub,
            text_ja=f"プロファイルされたステップは {n} 個だけです。3 個未満では、コールドな最初の"
            "ステップ（立ち上げ、ウォームアップ）と遅いステップの区別がつかず、どのステップにも一度"
            "きりの仕事が含まれているかもしれません。" + stub_ja,
            weakens=per_step,
        )
    return Limitation(
        "steps",
        f"{n} profiled steps; the first is not markedly slower than the others." + stub,
        text_ja=f"プロファイルされたステップは {n} 個です。最初のステップがほかより目立って"
        "遅いことはありません。" + stub_ja,
        level="info",
    )


def examine(
    tp: Any,
    path: Path,
    detectors: list[Detector],
    *,
    overrides: dict[str, dict[str, float]] | None = None,
    #: Called before each detector runs: (its number from 1, how many, its id).
    progress: Callable[[int, int, str], None] | None = None,
    read_dropped: bool = True,
    checked: FileCheck | None = None,
) -> Report:
    """Run ``detectors`` on the opened trace ``tp`` (from :func:`generators.tp.open_trace`),
    which no query has included a ``guide`` module into yet. ``read_dropped=False`` leaves the
    file unread when the importer dropped events, as the browser page does: no step markers
    recovered, the drops not told apart. ``checked``: what
    :func:`generators.doctor.trust.check_file` found in the file, when the caller has read it
    already (the command line does, while the engine imports the trace); read here otherwise."""
    began = time.perf_counter()
    read_s = None
    # Before any module is included: what the importer dropped, and the step markers among
    # them, which the step loop (guide.windows) takes back from the recovered-step table.
    _, drop_rows = rows_of(tp, _DROPS_SQL)
    dropped = None
    if drop_rows[0][0] and not read_dropped:
        dropped = DroppedEvents(error="not read")
    elif drop_rows[0][0]:
        _, kept = rows_of(tp, _KEPT_SQL)
        _, steps = rows_of(tp, _STEPS_KEPT_SQL)
        reading = time.perf_counter()
        dropped = dropped_events(path, dict(kept), steps[0][0], drop_rows[0][0])
        read_s = time.perf_counter() - reading
    tp.query(recovered_steps_sql(dropped.steps if dropped else []))
    cols, rows = rows_of(tp, _FACTS_SQL)
    facts = dict(zip(cols, rows[0], strict=True)) | {"dropped": drop_rows[0][0]}
    _, stats = rows_of(tp, _STATS_SQL)
    if checked is None:
        checked = check_file(path)
    limitations, missing = _limitations(facts, stats, detectors, dropped, checked)
    ranks = world_size(path)
    if ranks and ranks > 1:
        limitations.append(_one_rank_line(ranks, detectors))
    device, device_ja = device_label(facts)
    report = Report(
        path,
        path.stat().st_size,
        facts["gpu_name"],
        limitations=limitations,
        trace_start_ns=int(facts["trace_start"] or 0),
        trace_end_ns=int(facts["trace_end"] or 0),
        device=device,
        device_ja=device_ja,
    )
    if read_s is not None:  # the file read again for the events the importer dropped
        report.timings["dropped-events"] = read_s
    report.timings["trust-gate"] = time.perf_counter() - began - (read_s or 0)
    for i, det in enumerate(detectors, 1):
        if missing.intersection(det.needs) or missing.intersection(set(det.relies) & {"execution"}):
            report.skipped.append(det)
            continue
        if progress:
            progress(i, len(detectors), det.id)
        sql = det.sql((overrides or {}).get(det.id))
        started = time.perf_counter()
        try:
            names, values = rows_of(tp, sql)
        except Exception as e:  # a detector's SQL failing on an odd trace must not hide the rest
            report.failed.append((det, str(e).strip().splitlines()[-1][:300]))
            continue
        finally:
            report.timings[DETECTOR_PHASE + det.id] = time.perf_counter() - started
        missing_cols = [c for c in EVIDENCE_COLUMNS if c not in names]
        if missing_cols:
            report.failed.append((det, f"the query returns no {', '.join(missing_cols)} column"))
            continue
        # Information-only checks (the profiler's own marks) look at more than the steps.
        one_step = det.per_step and det.severity != "info" and facts["steps"] == 1
        if not values:
            # One real step: finding nothing there proves nothing about the loop.
            (report.skipped if one_step else report.silent).append(det)
            continue
        evidence = [dict(zip(names, v, strict=True)) for v in values]
        params = {p.name: p.value for p in det.params} | (overrides or {}).get(det.id, {})
        seen = render_template(det.seen, evidence, params, format_value)
        seen_ja = render_template(det.text("seen", "ja"), evidence, params, format_value)
        demoted = None
        if det.scope == "loop" and not facts["steps"] and det.severity != "info":
            demoted = NO_LOOP_DEMOTION
        elif one_step and det.severity != "info":
            demoted = ONE_STEP_DEMOTION
        elif (
            "flows" in det.relies
            and "flows" in missing
            and det.severity != "info"
            # A device ran the work (its kernels missing or unlinked): on a CPU-only trace the
            # operators are the whole story.
            and (facts["gpu_name"] or facts["gpu_activities"] or facts["mtia_events"])
        ):
            demoted = NO_KERNELS_DEMOTION
        finding = Finding(det, evidence, seen, sql, seen_ja, demoted)
        if demoted is None and det.severity == "warning":
            finding.demoted = small_share_demotion(finding.cost_ns, facts["loop_ns"])
        report.findings.append(finding)
    if facts["kernels"]:
        started = time.perf_counter()
        try:
            report.kernels = kernel_view(tp)
        except Exception:  # the view is context: a trace it cannot read still gets its findings
            report.kernels = None
        report.timings["kernel-view"] = time.perf_counter() - started
    # Most costly first; findings about how to read the trace (info) after the rest.
    report.findings.sort(key=lambda f: (f.severity == "info", -f.cost_ns, f.detector.id))
    report.seconds = time.perf_counter() - began
    return report


@dataclass(frozen=True)
class TraceTask:
    """One trace for a worker process (:func:`examine_in_worker`), picklable: the doctor's
    detectors on it, then the rows a comparison needs (``rows``: a module-level function of the
    open trace, such as the cross-rank or the diff rows)."""

    path: Path
    #: The report's key (``t1``, ``before``...).
    key: str
    rows: Callable[[Any], Any]
    #: Detector ids to run (None: all).
    only: tuple[str, ...] | None = None
    overrides: dict[str, dict[str, float]] | None = None
    tp_bin: str | None = None
    engine: str | None = None


@dataclass
class TraceResult:
    """A trace's report and rows, or why it could not be read (naming the file)."""

    report: Any = None
    rows: Any = None
    error: str | None = None


def examine_in_worker(task: TraceTask) -> TraceResult:
    """The doctor's detectors on one trace, then its rows (run in a worker process by
    :func:`generators.parallel.run_each`)."""
    import logging

    from generators.doctor.detectors import load_detectors
    from generators.doctor.tuning import engine_options
    from generators.tp import TraceOpenError, open_trace
    from generators.tp_engine import EngineError

    # The trace processor's own warnings (dropped events) are in the trust gate's cautions.
    logging.getLogger("generators.tp").setLevel(logging.ERROR)
    detectors = load_detectors()
    if task.only is not None:
        detectors = [d for d in detectors if d.id in task.only]
    options = engine_options(task.path)
    if task.engine or task.tp_bin:  # named: it wins over the doctor's default
        options["engine"] = task.engine
    try:
        with open_trace(task.path, bin_path=task.tp_bin, client="light", **options) as tp:
            report = examine(tp, task.path, detectors, overrides=task.overrides)
            rows = task.rows(tp)
    except (TraceOpenError, EngineError) as e:
        return TraceResult(error=str(e))
    report.key = task.key
    return TraceResult(report, rows)
