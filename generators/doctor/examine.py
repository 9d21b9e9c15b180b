"""Run every detector on one opened trace: what they found, and what the trace cannot show."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generators.doctor.detectors import EVIDENCE_COLUMNS, SEVERITIES, Detector, render_template
from generators.tp import DROP_STAT, rows_of
from generators.units import format_value

#: Evidence rows a report lists per finding (all rows count in its totals).
LISTED_ROWS = 10


@dataclass
class Finding:
    detector: Detector
    rows: list[dict[str, Any]]
    seen: str
    sql: str
    #: ``seen`` in Japanese (the detector's ``seen_ja`` filled from the same rows).
    seen_ja: str = ""

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
    def breakdown(self) -> list[tuple[str, int, int]]:
        """(value, rows, cost_ns) per value of the detector's breakdown column, costliest first."""
        col = self.detector.breakdown
        if not col:
            return []
        groups: dict[str, list[int]] = {}
        for r in self.rows:
            g = groups.setdefault(str(r.get(col)), [0, 0])
            g[0] += 1
            g[1] += int(r["cost_ns"] or 0)
        return sorted(((k, n, c) for k, (n, c) in groups.items()), key=lambda t: (-t[2], t[0]))


@dataclass(frozen=True)
class Limitation:
    """Something the trace does not hold, so some lessons cannot be checked."""

    id: str
    text: str
    skipped: tuple[str, ...] = ()
    #: ``text`` in Japanese.
    text_ja: str = ""


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
    #: A short id unique within one rendered report (HTML anchors, file pickers).
    key: str = "t1"
    #: Where a trace that is not the reader's own comes from (the gallery's reference traces:
    #: another project's, with its licence), shown under its name in the HTML report.
    provenance: str | None = None

    def worst(self) -> str | None:
        """The most serious severity found, or None."""
        found = {f.detector.severity for f in self.findings}
        for s in reversed(SEVERITIES):
            if s in found:
                return s
        return None


# What the trace holds, asked once per trace.
_FACTS_SQL = f"""
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.windows;
INCLUDE PERFETTO MODULE guide.hardware;
SELECT
  (SELECT COUNT(*) FROM guide_kineto_gpu_activity) AS gpu_activities,
  (SELECT COUNT(*) FROM guide_kineto_launch_link) AS launch_links,
  (SELECT COUNT(*) FROM guide_kineto_runtime_call) AS runtime_calls,
  (SELECT COUNT(*) FROM slice WHERE category = 'cpu_op') AS cpu_ops,
  EXISTS (SELECT 1 FROM args WHERE key GLOB 'args.Input Dims*') AS cpu_ops_with_shapes,
  (SELECT COUNT(*) FROM guide_windows_loop WHERE step IS NOT NULL) AS steps,
  (SELECT COALESCE(SUM(value), 0) FROM stats WHERE name = '{DROP_STAT}') AS dropped,
  (SELECT name FROM guide_trace_device ORDER BY device LIMIT 1) AS gpu_name,
  (SELECT gpu FROM guide_hardware_device) AS known_gpu,
  (SELECT start_ts FROM trace_bounds) AS trace_start
"""

# Importer problems other than the drops counted above.
_STATS_SQL = f"""
SELECT name, SUM(value) AS value FROM stats
WHERE value > 0 AND severity IN ('error', 'data_loss') AND name != '{DROP_STAT}'
GROUP BY name ORDER BY name
"""


def _limitations(facts: dict[str, Any], stats: list[list[Any]], detectors: list[Detector]):
    def needing(need: str) -> tuple[str, ...]:
        return tuple(d.id for d in detectors if need in d.needs)

    out: list[Limitation] = []
    missing: set[str] = set()
    if not facts["gpu_activities"]:
        missing |= {"gpu", "flows"}
        out.append(
            Limitation(
                "no-gpu",
                "The trace holds no GPU activity (a CPU-only capture, or a profiler run without "
                "ProfilerActivity.CUDA): nothing about the GPU can be checked.",
                needing("gpu"),
                text_ja="トレースに GPU のアクティビティがありません（CPU だけのキャプチャ"
                "か、ProfilerActivity.CUDA なしで実行したプロファイラ）。GPU については何"
                "もチェックできません。",
            )
        )
    elif not facts["launch_links"]:
        missing.add("flows")
        out.append(
            Limitation(
                "no-flows",
                "The trace has GPU activity but no ac2g flow events tying launches to kernels, "
                "so no kernel can be traced back to the CPU call that launched it.",
                tuple(d for d in needing("flows") if d not in needing("gpu")) or needing("flows"),
                text_ja="トレースには GPU のアクティビティがありますが、起動とカーネルを結びつけ"
                "る ac2g のフローイベントがないため、どのカーネルもそれを起動した CPU の"
                "呼び出しまでたどれません。",
            )
        )
    if facts["cpu_ops"] and not facts["cpu_ops_with_shapes"]:
        missing.add("shapes")
        out.append(
            Limitation(
                "no-shapes",
                "No operator records its input shapes (captured with record_shapes=False): "
                "lessons that need a tensor's size cannot be checked (attention-materialised "
                "still finds SDPA's math backend by name, not hand-written attention).",
                needing("shapes"),
                text_ja="どの演算子も入力形状を記録していません（record_shapes=False でキャプチ"
                "ャ）。テンソルのサイズが必要なレッスンはチェックできません"
                "（attention-materialised は SDPA の math バックエンドを名前で見つけます"
                "が、手書きのアテンションは見つけません）。",
            )
        )
    if not facts["steps"]:
        missing.add("steps")
        out.append(
            Limitation(
                "no-steps",
                "The trace has no ProfilerStep#N annotations on a CPU thread (no profiler "
                "schedule, or prof.step() never called, or the importer dropped them): the whole "
                "trace is treated as one step, and per-step checks cannot run.",
                needing("steps"),
                text_ja="トレースの CPU スレッドに ProfilerStep#N の注釈がありません（プロファイ"
                "ラのスケジュールがない、prof.step() が呼ばれていない、またはインポータが"
                "落とした）。トレース全体を 1 つのステップとして扱い、ステップごとのチェ"
                "ックは実行できません。",
            )
        )
    if facts["dropped"]:
        out.append(
            Limitation(
                "dropped-events",
                f"Perfetto's JSON importer dropped {facts['dropped']} events that partly overlap "
                "another event on the same track (captured with with_stack=True, or cuBLAS "
                "split-K kernels): they are missing from every count. "
                "`python -m generators.tp info TRACE --dropped` lists them.",
                text_ja="Perfetto の JSON インポータが、同じトラック上の別のイベントと部分的に重"
                f"なるイベントを {facts['dropped']} 個落としました（with_stack=True でのキ"
                "ャプチャや、cuBLAS の split-K カーネル）。これらはどの集計にも含まれませ"
                "ん。`python -m generators.tp info TRACE --dropped` で一覧できます。",
            )
        )
    for name, value in stats:
        out.append(
            Limitation(
                f"importer-{name}",
                f"The trace processor reported {value} × {name} while importing: the trace may "
                "be incomplete.",
                text_ja=f"トレースプロセッサがインポート中に {name} を {value} 回報告しました。ト"
                "レースが不完全なおそれがあります。",
            )
        )
    if facts["gpu_activities"] and not facts["gpu_name"]:
        missing.add("device")
        out.append(
            Limitation(
                "no-device",
                "The trace does not list its GPUs (Kineto's deviceProperties block): checks that "
                "depend on the GPU model cannot run.",
                needing("device"),
                text_ja="トレースに GPU の一覧（Kineto の deviceProperties ブロック）がありませ"
                "ん。GPU のモデルに依存するチェックは実行できません。",
            )
        )
    if facts["gpu_name"] and not facts["known_gpu"]:
        out.append(
            Limitation(
                "unknown-gpu",
                f"The guide has no datasheet peaks for {facts['gpu_name']}: the rates its "
                "lessons set against a GPU's peak (TFLOP/s, bytes/s) have nothing to be set "
                "against here. The doctor's checks do not need them.",
                text_ja=f"このガイドには {facts['gpu_name']} のデータシート上のピーク性能がありま"
                "せん。レッスンが GPU のピークと比べるレート（TFLOP/s、bytes/s）は、ここでは比べる"
                "相手がありません。doctor のチェックはピークを使いません。",
            )
        )
    return out, missing


def examine(
    tp: Any,
    path: Path,
    detectors: list[Detector],
    *,
    overrides: dict[str, dict[str, float]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Run ``detectors`` on the opened trace ``tp`` (from :func:`generators.tp.open_trace`)."""
    began = time.perf_counter()
    cols, rows = rows_of(tp, _FACTS_SQL)
    facts = dict(zip(cols, rows[0], strict=True))
    _, stats = rows_of(tp, _STATS_SQL)
    limitations, missing = _limitations(facts, stats, detectors)
    report = Report(
        path,
        path.stat().st_size,
        facts["gpu_name"],
        limitations=limitations,
        trace_start_ns=int(facts["trace_start"] or 0),
    )
    for i, det in enumerate(detectors, 1):
        if missing.intersection(det.needs):
            report.skipped.append(det)
            continue
        if progress:
            progress(f"detector {i}/{len(detectors)}: {det.id}")
        sql = det.sql((overrides or {}).get(det.id))
        try:
            names, values = rows_of(tp, sql)
        except Exception as e:  # a detector's SQL failing on an odd trace must not hide the rest
            report.failed.append((det, str(e).strip().splitlines()[-1][:300]))
            continue
        missing_cols = [c for c in EVIDENCE_COLUMNS if c not in names]
        if missing_cols:
            report.failed.append((det, f"the query returns no {', '.join(missing_cols)} column"))
            continue
        if not values:
            report.silent.append(det)
            continue
        evidence = [dict(zip(names, v, strict=True)) for v in values]
        params = {p.name: p.value for p in det.params} | (overrides or {}).get(det.id, {})
        seen = render_template(det.seen, evidence, params, format_value)
        seen_ja = render_template(det.text("seen", "ja"), evidence, params, format_value)
        report.findings.append(Finding(det, evidence, seen, sql, seen_ja))
    # Most costly first; findings about how to read the trace (info) after the rest.
    report.findings.sort(key=lambda f: (f.detector.severity == "info", -f.cost_ns, f.detector.id))
    report.seconds = time.perf_counter() - began
    return report
