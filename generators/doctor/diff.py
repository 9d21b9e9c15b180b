"""Two runs of the same code compared: ``python -m generators.doctor diff BEFORE AFTER``.

Each trace is opened on its own (in worker processes, :func:`generators.parallel.run_each`), the
doctor's detectors run on it as on any trace, and it is asked three things from the ``guide`` SQL
package (``guide.diff``): its loop in numbers (``guide_diff_run``: steps, step time, the GPU's
busy share, exposed communication, kernels, launches, operators, the allocator's peak), the
kernels a step runs (``guide_diff_kernel_slot``: name, family, shape, place among namesakes) and
the operators it calls (``guide_diff_op``). Only those rows meet, here, in Python: every number
is a mean over each run's own profiled steps, so runs of different lengths compare.

Kernels are matched in four passes, each pairing what the earlier ones left, in the order the
kernels run in a step: the same name and shape (a name that repeats in a step is matched by its
place among its namesakes); the same name, another shape; the same family and kind of work from
the kernel-name decoder (``guide_kernel_names_family``, ``guide_kernel_names_work``: a GEMM that
changed its tile, say), launched by the same operator; what is left could not be matched, and
the report says so: it vanished or it appeared. Operators are matched by name; findings by detector.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generators.tp import rows_of

RUN_SQL = "INCLUDE PERFETTO MODULE guide.diff; SELECT * FROM guide_diff_run"
SLOTS_SQL = (
    "INCLUDE PERFETTO MODULE guide.diff; "
    "SELECT name, family, work, shape, occurrence, op_name, runs, dur, position "
    "FROM guide_diff_kernel_slot ORDER BY position, name, shape, occurrence"
)
OPS_SQL = "INCLUDE PERFETTO MODULE guide.diff; SELECT name, calls, dur FROM guide_diff_op"

#: How two kernels were matched, in the order the passes run.
MATCHED_BY = ("name and shape", "name", "family")
#: Not matched: in the run before only, or the run after only.
VANISHED, APPEARED = "vanished", "appeared"


@dataclass(frozen=True)
class Slot:
    """One kernel a step runs: its name, shape and place among its namesakes in the step, how
    many steps ran it and for how long in all."""

    name: str
    family: str | None
    work: str | None
    shape: str | None
    occurrence: int
    op_name: str | None
    runs: int
    dur: int
    position: float


@dataclass
class RunRows:
    """What one trace gives the comparison."""

    summary: dict[str, Any]
    slots: list[Slot]
    #: Operator name -> (calls, wall time ns) inside the loop.
    ops: dict[str, tuple[int, int]]


def run_rows(tp: Any) -> RunRows:
    """Ask an opened trace (after the doctor's detectors ran on it) for its rows."""
    cols, rows = rows_of(tp, RUN_SQL)
    _, slots = rows_of(tp, SLOTS_SQL)
    _, ops = rows_of(tp, OPS_SQL)
    return RunRows(
        dict(zip(cols, rows[0], strict=True)),
        [
            Slot(
                str(s[0]),
                s[1],
                s[2],
                s[3],
                int(s[4]),
                s[5],
                int(s[6]),
                int(s[7] or 0),
                float(s[8]),
            )
            for s in slots
        ],
        {str(o[0]): (int(o[1]), int(o[2] or 0)) for o in ops},
    )


@dataclass
class Run:
    """One side of the comparison: its trace, the doctor's report on it, its rows."""

    path: Path
    report: Any
    rows: RunRows

    @property
    def steps(self) -> int:
        return int(self.rows.summary["steps"] or 0)

    @property
    def per(self) -> int:
        """What per-step numbers divide by: the real steps, or 1 for a trace without steps
        (its whole trace is then the loop)."""
        return self.steps or 1

    def value(self, key: str) -> float | None:
        """A per-step number of the loop (see :data:`METRICS`), or None where not recorded."""
        s = self.rows.summary
        if key == "busy_pct":
            if s["busy_ns"] is None or not s["loop_ns"]:
                return None
            return 100 * s["busy_ns"] / s["loop_ns"]
        if key == "memory_peak_bytes":
            return s["memory_peak_bytes"]
        if key == "step_ns":
            return s["step_ns"] if self.steps else s["loop_ns"]
        if s[key] is None:
            return None
        return s[key] / self.per

    def to_json(self) -> dict[str, Any]:
        return {
            "trace": str(self.path),
            "device": self.report.device,
            "steps": self.steps,
            **{m.key: _round(self.value(m.key)) for m in METRICS},
            "memory_peak_device": self.rows.summary["memory_peak_device"],
        }


@dataclass(frozen=True)
class Metric:
    """One number of the loop, compared per step."""

    key: str
    en: str
    ja: str
    #: The unit suffix generators.units formats by: _ns, _pct, _bytes or _n (a count).
    unit: str


METRICS = (
    Metric("step_ns", "step time", "ステップ時間", "_ns"),
    Metric("busy_pct", "GPU busy", "GPU 稼働率", "_pct"),
    Metric("kernels", "kernels", "カーネル", "_n"),
    Metric("kernel_ns", "kernel time", "カーネル時間", "_ns"),
    Metric("launches", "launches", "起動", "_n"),
    Metric("operators", "operator calls", "演算子の呼び出し", "_n"),
    Metric("comm_ns", "communication", "通信", "_ns"),
    Metric("exposed_ns", "exposed communication", "計算と重なっていない通信", "_ns"),
    Metric(
        "memory_peak_bytes", "memory peak (whole loop)", "メモリのピーク（ループ全体）", "_bytes"
    ),
)


@dataclass
class Change:
    """A metric before and after."""

    metric: Metric
    before: float | None
    after: float | None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before

    @property
    def pct(self) -> float | None:
        """The change as a share of the value before (None for a share, or from zero)."""
        if self.delta is None or not self.before or self.metric.unit == "_pct":
            return None
        return 100 * self.delta / self.before

    def to_json(self) -> dict[str, Any]:
        return {
            "before": _round(self.before),
            "after": _round(self.after),
            "change": _round(self.delta),
            "change_pct": _round(self.pct),
        }


@dataclass(frozen=True)
class KernelSide:
    """A kernel (by name and shape) in one run: how often and how long per step."""

    name: str
    shape: str | None
    op_name: str | None
    per_step: float
    ns_per_step: float

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "shape": self.shape,
            "operator": self.op_name,
            "per_step": _round(self.per_step),
            "ns_per_step": _round(self.ns_per_step),
        }


@dataclass
class KernelChange:
    """A kernel matched across the runs (``how``: one of :data:`MATCHED_BY`), or one that could
    not be matched (``how``: :data:`VANISHED` or :data:`APPEARED`)."""

    how: str
    family: str | None
    work: str | None
    before: KernelSide | None
    after: KernelSide | None
    #: Its mean place in the step (of the run before, where it ran there): the listing's order.
    position: float = 0.0

    @property
    def matched(self) -> bool:
        return self.how in MATCHED_BY

    @property
    def count_delta(self) -> float:
        return (self.after.per_step if self.after else 0.0) - (
            self.before.per_step if self.before else 0.0
        )

    @property
    def ns_delta(self) -> float:
        return (self.after.ns_per_step if self.after else 0.0) - (
            self.before.ns_per_step if self.before else 0.0
        )

    @property
    def changed(self) -> bool:
        """Anything to report: not matched, matched by less than name and shape, or a count that
        moved."""
        return self.how != MATCHED_BY[0] or abs(self.count_delta) > 1e-9

    def to_json(self) -> dict[str, Any]:
        return {
            "matched_by": self.how if self.matched else None,
            "status": self.how if not self.matched else ("changed" if self.changed else "same"),
            "family": self.family,
            "work": self.work,
            "before": self.before.to_json() if self.before else None,
            "after": self.after.to_json() if self.after else None,
            "per_step_change": _round(self.count_delta),
            "ns_per_step_change": _round(self.ns_delta),
        }


@dataclass
class OpChange:
    """An operator's calls per step before and after (None: not called in that run)."""

    name: str
    before: float | None
    after: float | None

    @property
    def delta(self) -> float:
        return (self.after or 0.0) - (self.before or 0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "before_per_step": _round(self.before),
            "after_per_step": _round(self.after),
            "change": _round(self.delta),
        }


@dataclass
class FindingChange:
    """A detector's finding before and after: ``fixed`` (found before, silent after), ``new``
    (silent or absent before, found after), ``still`` (found in both), or ``not compared``
    (the detector did not run, or failed, on one of the traces)."""

    id: str
    title: str
    title_ja: str
    status: str
    severity_before: str | None
    severity_after: str | None
    cost_before_ns: int | None
    cost_after_ns: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "severity_before": self.severity_before,
            "severity_after": self.severity_after,
            "cost_before_ns": self.cost_before_ns,
            "cost_after_ns": self.cost_after_ns,
        }


#: The order findings are listed in.
FINDING_ORDER = ("fixed", "new", "still", "not compared")


@dataclass
class Diff:
    """The comparison of two runs."""

    before: Run
    after: Run
    changes: list[Change]
    kernels: list[KernelChange]
    operators: list[OpChange]
    findings: list[FindingChange]
    #: Reasons to read the comparison with care, (English, Japanese).
    caveats: list[tuple[str, str]] = field(default_factory=list)

    def change(self, key: str) -> Change:
        return next(c for c in self.changes if c.metric.key == key)

    @property
    def vanished(self) -> list[KernelChange]:
        return [k for k in self.kernels if k.how == VANISHED]

    @property
    def appeared(self) -> list[KernelChange]:
        return [k for k in self.kernels if k.how == APPEARED]

    @property
    def ops_only_before(self) -> list[OpChange]:
        return [o for o in self.operators if o.after is None]

    @property
    def ops_only_after(self) -> list[OpChange]:
        return [o for o in self.operators if o.before is None]

    def to_json(self) -> dict[str, Any]:
        return {
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "per_step": {c.metric.key: c.to_json() for c in self.changes},
            "caveats": [en for en, _ in self.caveats],
            "kernel_families": [f.to_json() for f in by_family(self.kernels)],
            "kernels": [k.to_json() for k in self.kernels],
            "operators": [o.to_json() for o in self.operators],
            "findings": [f.to_json() for f in self.findings],
            "not_matched": {
                "kernels_vanished": [k.before.name for k in self.vanished if k.before],
                "kernels_appeared": [k.after.name for k in self.appeared if k.after],
                "operators_only_before": [o.name for o in self.ops_only_before],
                "operators_only_after": [o.name for o in self.ops_only_after],
            },
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _pair(
    before: list[Slot], after: list[Slot], key: Callable[[Slot], Any]
) -> list[tuple[Slot, Slot]]:
    """Pair slots with equal ``key``, in the order they run in a step (the first before with the
    first after, ...); the paired slots are taken out of ``before`` and ``after``."""
    pairs = []
    waiting: dict[Any, list[Slot]] = {}
    for s in sorted(after, key=lambda s: s.position):
        k = key(s)
        if k is not None:
            waiting.setdefault(k, []).append(s)
    for s in sorted(before, key=lambda s: s.position):
        k = key(s)
        if k is not None and waiting.get(k):
            pairs.append((s, waiting[k].pop(0)))
    taken_b = {id(b) for b, _ in pairs}
    taken_a = {id(a) for _, a in pairs}
    before[:] = [s for s in before if id(s) not in taken_b]
    after[:] = [s for s in after if id(s) not in taken_a]
    return pairs


def match_kernels(before: Run, after: Run) -> list[KernelChange]:
    """Match the kernels of two runs (see the module's docstring), then gather them by name and
    shape: one entry per kernel before and its match after, or per kernel not matched."""
    left_b, left_a = list(before.rows.slots), list(after.rows.slots)
    passes: list[tuple[str, list[tuple[Slot, Slot]]]] = [
        (MATCHED_BY[0], _pair(left_b, left_a, lambda s: (s.name, s.shape, s.occurrence))),
        (MATCHED_BY[1], _pair(left_b, left_a, lambda s: s.name)),
        (
            MATCHED_BY[2],
            _pair(
                left_b,
                left_a,
                lambda s: (s.family, s.work, s.op_name) if s.family and s.op_name else None,
            ),
        ),
    ]
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}

    def add(how: str, b: Slot | None, a: Slot | None) -> None:
        key = (
            how,
            (b.name, b.shape) if b else None,
            (a.name, a.shape) if a else None,
        )
        g = groups.setdefault(
            key,
            {
                "family": (b or a).family,  # type: ignore[union-attr]
                "work": (b or a).work,  # type: ignore[union-attr]
                "position": (b or a).position,  # type: ignore[union-attr]
                "b": [0, 0, None],
                "a": [0, 0, None],
            },
        )
        for side, slot in (("b", b), ("a", a)):
            if slot is not None:
                g[side][0] += slot.runs
                g[side][1] += slot.dur
                g[side][2] = g[side][2] or slot.op_name

    for how, pairs in passes:
        for b, a in pairs:
            add(how, b, a)
    for b in left_b:
        add(VANISHED, b, None)
    for a in left_a:
        add(APPEARED, None, a)

    out = []
    for (how, kb, ka), g in groups.items():
        sides = []
        for run, k, (runs, dur, op) in ((before, kb, g["b"]), (after, ka, g["a"])):
            sides.append(KernelSide(k[0], k[1], op, runs / run.per, dur / run.per) if k else None)
        out.append(KernelChange(how, g["family"], g["work"], sides[0], sides[1], g["position"]))
    # Grouped by family, the family that changed most first; in a family, the largest change.
    moved: dict[str | None, float] = {}
    for k in out:
        moved[k.family] = moved.get(k.family, 0.0) + abs(k.ns_delta)
    out.sort(key=lambda k: (-moved[k.family], k.family or "", -abs(k.ns_delta), k.position))
    return out


@dataclass
class FamilyChange:
    """A family's kernels per step and their time per step, before and after."""

    family: str | None
    before: float
    after: float
    before_ns: float
    after_ns: float

    def to_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "before_per_step": _round(self.before),
            "after_per_step": _round(self.after),
            "before_ns_per_step": _round(self.before_ns),
            "after_ns_per_step": _round(self.after_ns),
        }


def by_family(kernels: Sequence[KernelChange]) -> list[FamilyChange]:
    """Each family's totals, in the order of :func:`match_kernels` (the family that changed most
    first); kernels whose family the decoder does not know are one group, ``None``."""
    totals: dict[str | None, FamilyChange] = {}
    for k in kernels:
        f = totals.setdefault(k.family, FamilyChange(k.family, 0.0, 0.0, 0.0, 0.0))
        if k.before:
            f.before += k.before.per_step
            f.before_ns += k.before.ns_per_step
        if k.after:
            f.after += k.after.per_step
            f.after_ns += k.after.ns_per_step
    return list(totals.values())


def compare_ops(before: Run, after: Run) -> list[OpChange]:
    """Every operator called in either run, matched by name: calls per step; the largest change
    first."""
    names = set(before.rows.ops) | set(after.rows.ops)
    out = [
        OpChange(
            n,
            before.rows.ops[n][0] / before.per if n in before.rows.ops else None,
            after.rows.ops[n][0] / after.per if n in after.rows.ops else None,
        )
        for n in names
    ]
    out.sort(key=lambda o: (-abs(o.delta), o.name))
    return out


def compare_findings(before: Any, after: Any) -> list[FindingChange]:
    """The doctor's findings on each trace, by detector."""
    found_b = {f.detector.id: f for f in before.findings}
    found_a = {f.detector.id: f for f in after.findings}
    ran_b = set(found_b) | {d.id for d in before.silent}
    ran_a = set(found_a) | {d.id for d in after.silent}
    detectors = {f.detector.id: f.detector for f in [*before.findings, *after.findings]}
    out = []
    for det_id in sorted(set(found_b) | set(found_a)):
        fb, fa = found_b.get(det_id), found_a.get(det_id)
        if fb and fa:
            status = "still"
        elif det_id not in ran_b or det_id not in ran_a:
            status = "not compared"
        else:
            status = "fixed" if fb else "new"
        det = detectors[det_id]
        out.append(
            FindingChange(
                det_id,
                det.title,
                det.text("title", "ja"),
                status,
                fb.severity if fb else None,
                fa.severity if fa else None,
                fb.cost_ns if fb else None,
                fa.cost_ns if fa else None,
            )
        )
    out.sort(key=lambda f: (FINDING_ORDER.index(f.status), f.id))
    return out


def _caveats(before: Run, after: Run) -> list[tuple[str, str]]:
    out = []
    for name, name_ja, run in (("before", "変更前", before), ("after", "変更後", after)):
        if not run.steps:
            out.append(
                (
                    f"The trace {name} has no profiled steps: its whole trace stands for one "
                    "step, one-time work included.",
                    f"{name_ja}のトレースにはプロファイルされたステップがありません。トレース"
                    "全体を 1 ステップとみなしており、一度きりの仕事も含まれます。",
                )
            )
        cautions = [lim.id for lim in run.report.limitations if lim.level == "caution"]
        if cautions:
            ids = ", ".join(cautions)
            out.append(
                (
                    f"The doctor's trust gate on the trace {name} has cautions ({ids}): see its "
                    "report (the same command without diff).",
                    f"{name_ja}のトレースの信頼性チェックに注意点があります（{ids}）。"
                    "そのレポート（diff なしの同じコマンド）を見てください。",
                )
            )
    if before.report.device != after.report.device:
        b = before.report.device or "no GPU"
        a = after.report.device or "no GPU"
        out.append(
            (
                f"The runs ran on different devices ({b}; {a}): times compare the machines as "
                "well as the code.",
                f"2 つの実行は別々のデバイスで動いています（{b}、{a}）。時間の差にはコードの差"
                "だけでなくマシンの差も含まれます。",
            )
        )
    return out


def compare(before: Run, after: Run) -> Diff:
    """The comparison of two examined runs."""
    changes = [Change(m, before.value(m.key), after.value(m.key)) for m in METRICS]
    return Diff(
        before,
        after,
        changes,
        match_kernels(before, after),
        compare_ops(before, after),
        compare_findings(before.report, after.report),
        _caveats(before, after),
    )


def diff_traces(
    before: Path,
    after: Path,
    *,
    only: tuple[str, ...] | None = None,
    overrides: dict[str, dict[str, float]] | None = None,
    tp_bin: str | None = None,
    engine: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Diff | None, list[str]]:
    """Examine both traces (in worker processes) and compare them: the comparison, or None
    where a trace could not be read, and the errors, each naming its file."""
    from generators.doctor.examine import TraceTask, examine_in_worker
    from generators.parallel import run_each

    say = progress or (lambda message: None)
    tasks = [
        TraceTask(Path(p), key, run_rows, only, overrides, tp_bin, engine)
        for p, key in ((before, "before"), (after, "after"))
    ]
    say(f"examining {before} and {after}")
    weight = lambda task: task.path.stat().st_size if task.path.is_file() else 0  # noqa: E731
    results = list(
        run_each(examine_in_worker, tasks, weight=weight, done=lambda t: say(f"examined {t.path}"))
    )
    errors = [r.error for r in results if r.error is not None]
    if errors:
        return None, errors
    runs: Sequence[Run] = [
        Run(t.path, r.report, r.rows)  # type: ignore[arg-type]
        for t, r in zip(tasks, results, strict=True)
    ]
    return compare(runs[0], runs[1]), []
