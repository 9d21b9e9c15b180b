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
from generators.doctor.trust import (
    DroppedEvents,
    FileCheck,
    check_file,
    dropped_events,
    recovered_steps_sql,
    world_size,
)
from generators.tp import DROP_STAT, rows_of
from generators.units import format_duration_ns, format_value

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
  -- CUPTI numbers the launches of one process: an id on two launches means the file holds
  -- several processes' launches (ranks merged into one file), which nothing tells apart.
  (SELECT COUNT(*) FROM (
     SELECT c FROM (
       SELECT EXTRACT_ARG(arg_set_id, 'args.correlation') AS c FROM slice
       WHERE category IN ('cuda_runtime', 'cuda_driver'))
     WHERE c IS NOT NULL GROUP BY c HAVING COUNT(*) > 1)) AS shared_correlations,
  (SELECT COUNT(DISTINCT t.upid) FROM slice AS s
   JOIN thread_track AS tt ON tt.id = s.track_id JOIN thread AS t USING (utid)
   WHERE s.category IN ('cuda_runtime', 'cuda_driver')) AS launch_processes,
  (SELECT COUNT(*) FROM slice WHERE category = 'cpu_op') AS cpu_ops,
  (SELECT COUNT(*) FROM slice WHERE category = 'python_function') AS python_functions,
  EXISTS (SELECT 1 FROM args WHERE key GLOB 'args.Input Dims*') AS cpu_ops_with_shapes,
  (SELECT COUNT(*) FROM guide_windows_real_loop WHERE step IS NOT NULL) AS steps,
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
        return "GPU model unknown", "GPU のモデルは不明"
    if facts["mtia_events"]:
        return "MTIA accelerator (model unknown)", "MTIA アクセラレータ（モデルは不明）"
    return None, None


def _file_lines(checked: FileCheck, detectors: list[Detector]) -> list[Limitation]:
    """The trust lines about what the importer read silently from the file's bytes."""
    every = tuple(d.id for d in detectors)
    out: list[Limitation] = []
    if checked.overflowing:
        n = sum(checked.overflowing.values())
        keys = ", ".join(f"{k}: {v}" for k, v in checked.overflowing.most_common())
        out.append(
            Limitation(
                "ids-overflow",
                f"{n} ids in the file do not fit in a signed 64-bit integer (by key: {keys}): "
                "the trace processor reads such an id wrapped or cut short, so events may land "
                "on another process's or thread's track, and launches be tied to the wrong "
                "kernels or to none: any count may be wrong.",
                text_ja=f"ファイル中の ID のうち {n} 個が符号付き 64 ビット整数に収まりません"
                f"（キー別: {keys}）。トレースプロセッサはそうした ID を桁あふれさせたり切り詰め"
                "たりして読むため、イベントがほかのプロセスやスレッドのトラックに載ったり、起動が"
                "違うカーネルに結びついたり、どれにも結びつかなかったりします。どの集計も"
                "誤っているおそれがあります。",
                weakens=every,
            )
        )
    if checked.without_pid_or_tid:
        n = checked.without_pid_or_tid
        out.append(
            Limitation(
                "no-pid-tid",
                f"At least {n} events state no pid or no tid: the trace processor puts them on a "
                "track of its own choosing (process 0, say), beside another thread's or "
                "device's events, so where they are counted and what they nest in may be wrong.",
                text_ja=f"少なくとも {n} 個のイベントに pid か tid がありません。トレースプロセッサ"
                "はそれらを自分で選んだトラック（たとえばプロセス 0）に、ほかのスレッドやデバイス"
                "のイベントと並べて置くため、どこで数えられるか、何の中に入れ子になるかが誤って"
                "いるおそれがあります。",
                weakens=every,
            )
        )
    if checked.pid_or_tid_twice:
        n = checked.pid_or_tid_twice
        out.append(
            Limitation(
                "pid-tid-twice",
                f"At least {n} events state their pid or tid twice: the trace processor keeps "
                "the last value, which may not be the event's own process or thread, so where "
                "they are counted and what they nest in may be wrong.",
                text_ja=f"少なくとも {n} 個のイベントが pid か tid を 2 度書いています。トレース"
                "プロセッサは後の値を使いますが、それがイベント自身のプロセスやスレッドとは限ら"
                "ないため、どこで数えられるか、何の中に入れ子になるかが誤っているおそれがあります。",
                weakens=every,
            )
        )
    if checked.invalid_utf8_bytes:
        n = checked.invalid_utf8_bytes
        out.append(
            Limitation(
                "not-utf8",
                f"{n} bytes of the file are not UTF-8 text (in names, say): every name the "
                "trace processor returns is read without them, so names that differ only in "
                "those bytes read the same here.",
                text_ja=f"ファイル中の {n} バイトが UTF-8 のテキストではありません"
                "（名前の中など）。トレースプロセッサが返す名前はそのバイトを除いて読まれるため、そのバイトだけが"
                "違う名前はここでは同じに見えます。",
            )
        )
    if checked.error:
        out.append(
            Limitation(
                "file-check-partial",
                f"The file could not be read to the end a second time ({checked.error}), to "
                "check what the trace processor reads without a word (ids, names, pid and tid): "
                "those checks are partial.",
                text_ja="トレースプロセッサが黙って読み替えるもの（ID、名前、pid と tid）を"
                f"確かめるためにファイルをもう一度最後まで読むことができませんでした（{checked.error}）。"
                "その確認は部分的です。",
            )
        )
    return out


def _shared_correlations_line(
    facts: dict[str, Any], detectors: list[Detector], skipped: tuple[str, ...]
) -> Limitation:
    """CUPTI correlation ids on more than one launch: the launch link cannot be trusted. On
    several processes, the file merges their traces (the ranks of a job, say)."""
    n, procs = facts["shared_correlations"], facts["launch_processes"]
    ids = f"{n} CUPTI correlation id{' is' if n == 1 else 's are each'} on more than one launch"
    ids_ja = f"CUPTI の相関 ID のうち {n} 個が、それぞれ 2 つ以上の起動に付いています"
    if procs > 1:
        en = (
            f"{ids} (launches on {procs} processes): the file holds several processes' "
            "launches, as when the traces of several ranks are merged into one, so counts and "
            "times mix the processes, and a launch cannot be told from another with the same "
            "id: no kernel is traced back to its launch. Give the doctor each rank's own trace: "
            "it compares them across the ranks."
        )
        ja = (
            f"{ids_ja}（起動は {procs} 個のプロセス上）。ファイルには複数のプロセスの起動があり"
            "（複数のランクのトレースを 1 つにまとめたときのように）、集計も時間もプロセスが混ざ"
            "っています。同じ ID の起動を見分けられないため、どのカーネルもその起動までたどれ"
            "ません。ランクごとのトレースを doctor に渡してください。ランクをまたいで比べます。"
        )
    else:
        en = (
            f"{ids}: a launch cannot be told from another with the same id, so no kernel is "
            "traced back to its launch."
        )
        ja = (
            f"{ids_ja}。同じ ID の起動を見分けられないため、どのカーネルもその起動まで"
            "たどれません。"
        )
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
                f"The trace holds {facts['mtia_events']} MTIA accelerator events, which the "
                "doctor's checks do not read (they read CUDA and ROCm kernels, copies and "
                "launches): nothing about the accelerator's side is checked, and a quiet report "
                "says nothing about it.",
                needing("gpu"),
                weakens=tuple(d for d in relying("kernels", "flows") if d not in needing("gpu")),
                text_ja=f"トレースには MTIA アクセラレータのイベントが {facts['mtia_events']} 個"
                "ありますが、doctor のチェックはこれを読みません"
                "（読むのは CUDA と ROCm のカーネル、"
                "コピー、起動です）。アクセラレータ側は何もチェックされず、所見がなくても何の保証"
                "にもなりません。",
            )
        )
    elif not facts["gpu_activities"]:
        missing |= {"gpu", "flows"}
        out.append(
            Limitation(
                "no-gpu",
                "The trace holds no GPU activity (a CPU-only capture, or a profiler run without "
                "ProfilerActivity.CUDA): nothing about the GPU can be checked.",
                needing("gpu"),
                weakens=tuple(d for d in relying("flows") if d not in needing("gpu")),
                text_ja="トレースに GPU のアクティビティがありません（CPU だけのキャプチャ"
                "か、ProfilerActivity.CUDA なしで実行したプロファイラ）。GPU については何"
                "もチェックできません。",
            )
        )
    elif not facts["launch_links"] and not facts["shared_correlations"]:
        missing.add("flows")
        out.append(
            Limitation(
                "no-flows",
                "The trace has GPU activity but no ac2g flow events tying launches to kernels, "
                "so no kernel can be traced back to the CPU call that launched it; the GPU's idle "
                "time is still measured, without its causes.",
                tuple(d for d in needing("flows") if d not in needing("gpu")) or needing("flows"),
                weakens=tuple(d for d in relying("flows") if d not in needing("flows")),
                text_ja="トレースには GPU のアクティビティがありますが、起動とカーネルを結びつけ"
                "る ac2g のフローイベントがないため、どのカーネルもそれを起動した CPU の"
                "呼び出しまでたどれません。GPU のアイドル時間は測れますが、"
                "その原因はわかりません。",
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
    if dropped is not None and (facts["dropped"] or dropped.total):
        out.append(_dropped_line(facts, dropped, detectors, relying))
    if not facts["steps"]:
        missing.add("steps")
        out.append(
            Limitation(
                "no-steps",
                "The trace has no ProfilerStep#N annotations on a CPU thread (no profiler "
                "schedule, or prof.step() never called): the whole trace is treated as one "
                "step, one-time work (start-up, weight uploads, warm-up) included, so findings "
                "about the step loop are shown as information, and per-step checks cannot run.",
                needing("steps"),
                text_ja="トレースの CPU スレッドに ProfilerStep#N の注釈がありません（プロファイ"
                "ラのスケジュールがない、または prof.step() が呼ばれていない）。トレース全体を 1 つ"
                "のステップとして扱うため、一度きりの仕事（立ち上げ、重みのアップロード、ウォームアップ）"
                "も含まれます。そこでステップのループについての所見は情報として示し、ステップごとの"
                "チェックは実行できません。",
                weakens=tuple(d.id for d in detectors if d.scope == "loop"),
            )
        )
    else:
        out.append(_steps_line(facts, detectors, relying))
    if facts["python_functions"]:
        out.append(
            Limitation(
                "with-stack",
                f"Captured with with_stack=True ({facts['python_functions']} python_function "
                "events): recording the Python stack slows every operator and launch on the CPU, "
                "so CPU-side durations read longer than the code runs without it (the GPU's own "
                "durations are not affected).",
                text_ja=f"with_stack=True でキャプチャされています（python_function イベント "
                f"{facts['python_functions']} 個）。Python のスタックの記録が"
                " CPU 側のすべての演算子"
                "と起動を遅くするため、CPU 側の時間は、それなしで動かしたときより長く見えます"
                "（GPU 側の時間は影響を受けません）。",
                weakens=relying("cpu-time"),
            )
        )
    if facts["capture_calls"]:
        replays = facts["graph_launches"]
        out.append(
            Limitation(
                "graph-capture",
                f"The trace records CUDA/HIP graph capture ({facts['capture_calls']} "
                "BeginCapture/EndCapture/GraphInstantiate calls): kernels launched while a "
                "stream captures are recorded, not run, so launches inside a capture are not "
                "execution"
                + (
                    f"; the trace also replays graphs ({replays} graph launches)."
                    if replays
                    else ", and no graph launch replays them here: checks of how work ran "
                    "do not run."
                ),
                () if replays else relying("execution"),
                text_ja=f"トレースには CUDA/HIP グラフのキャプチャが記録されています"
                "（BeginCapture/EndCapture/GraphInstantiate の呼び出し"
                f" {facts['capture_calls']} 回）。"
                "キャプチャ中のストリームに起動したカーネルは記録されるだけで実行されないため、"
                "キャプチャ内の起動は実行ではありません"
                + (
                    f"。トレースはグラフの再生も含みます（グラフの起動 {replays} 回）。"
                    if replays
                    else "。ここではグラフの起動による再生もないため、実行のされ方を見る"
                    "チェックは実行しません。"
                ),
                weakens=relying("execution") if replays else (),
            )
        )
        if not replays:
            missing.add("execution")
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
                f"GPU model unknown: the trace has {facts['kernels']} kernels but does not list "
                "its GPUs (Kineto's deviceProperties block): checks that depend on the GPU model "
                "cannot run.",
                needing("device"),
                text_ja=f"GPU のモデルは不明です。トレースにはカーネルが {facts['kernels']} 個あり"
                "ますが、GPU の一覧（Kineto の deviceProperties ブロック）がありません。"
                "GPU のモデル"
                "に依存するチェックは実行できません。",
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
            "ステップのループはトレースどおりです。"
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
        f"The trace is one rank of {ranks} (distributedInfo): a communication kernel's time "
        "includes waiting for the other ranks to arrive, so exposed communication time may be "
        "other ranks' lateness, which this trace cannot show.",
        text_ja=f"このトレースは {ranks} ランクのうちの 1 つです（distributedInfo）。通信カーネルの"
        "時間にはほかのランクの到着を待つ時間も含まれるため、計算と重なっていない通信の時間は"
        "ほかのランクの遅れかもしれません。それはこのトレースからはわかりません。",
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
    # Before any module is included: what the importer dropped, and the step markers among
    # them, which the step loop (guide.windows) takes back from the recovered-step table.
    _, drop_rows = rows_of(tp, _DROPS_SQL)
    dropped = None
    if drop_rows[0][0] and not read_dropped:
        dropped = DroppedEvents(error="not read")
    elif drop_rows[0][0]:
        _, kept = rows_of(tp, _KEPT_SQL)
        _, steps = rows_of(tp, _STEPS_KEPT_SQL)
        dropped = dropped_events(path, dict(kept), steps[0][0], drop_rows[0][0])
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
    for i, det in enumerate(detectors, 1):
        if missing.intersection(det.needs) or missing.intersection(set(det.relies) & {"execution"}):
            report.skipped.append(det)
            continue
        if progress:
            progress(i, len(detectors), det.id)
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
        report.findings.append(Finding(det, evidence, seen, sql, seen_ja, demoted))
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
