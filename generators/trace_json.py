"""Reading Kineto (torch.profiler) JSON traces directly, without a trace processor.

Used to cross-check what the trace processor reports, and to explain what it
does not show. In particular Perfetto's JSON importer drops a complete (``"X"``)
event that starts inside another event on the same thread track but ends after
it (a *partial* overlap): the event is not in the ``slice`` table and is only
counted in ``stats`` as ``slice_drop_overlapping_complete_event``.
:func:`find_partial_overlaps` finds exactly those events from the JSON.

Timestamps are microseconds in the JSON. They are parsed exactly (as
:class:`decimal.Decimal`, never float: a float cannot hold an epoch timestamp in
microseconds to the nanosecond). :func:`to_ns` converts them exactly;
:func:`perfetto_ns` converts them the way Perfetto v52's JSON importer does,
through a double: an epoch timestamp in microseconds (about 1.7e15) keeps only
a quarter of a microsecond of precision, and once multiplied by 1000 a
multiple of 256 ns. Two back-to-back events can therefore collide in the
trace processor although they do not overlap in the file; the drop analysis
replays that arithmetic so that it finds exactly the events the importer drops.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

Event = dict[str, Any]

GZIP_MAGIC = b"\x1f\x8b"

# Kineto categories of host-side calls that launch GPU work.
LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")
# Kineto's flow category linking a launch to the GPU work it queued.
LAUNCH_FLOW_CATEGORY = "ac2g"


def read_trace_bytes(path: Path) -> bytes:
    """The trace file's bytes, inflated when it is gzip-compressed."""
    data = Path(path).read_bytes()
    if data[:2] == GZIP_MAGIC:
        return gzip.decompress(data)
    return data


def load_trace(path: Path) -> dict[str, Any]:
    """The whole JSON document of a trace (a bare event array becomes ``traceEvents``)."""
    doc = json.loads(read_trace_bytes(path), parse_float=Decimal)
    if isinstance(doc, list):
        return {"traceEvents": doc}
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a JSON trace (top level is {type(doc).__name__})")
    return doc


def load_trace_fast(path: Path) -> list[Event]:
    """The ``traceEvents`` of a trace with numbers as floats (the C parser, several times faster
    than :func:`load_events`): what the importer itself reads, enough to replay its drops."""
    doc = json.loads(read_trace_bytes(path))
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise ValueError(f"{path}: traceEvents is not a list")
    return [e for e in events if isinstance(e, dict)]


def load_events(path: Path) -> list[Event]:
    """The ``traceEvents`` list of a Kineto JSON(.gz) trace."""
    events = load_trace(path).get("traceEvents", [])
    if not isinstance(events, list):
        raise ValueError(f"{path}: traceEvents is not a list")
    return [e for e in events if isinstance(e, dict)]


#: The header of a Kineto trace (everything before ``traceEvents``) fits well inside this; a
#: trace that writes ``deviceProperties`` after its events is parsed whole, up to the cap below.
_HEADER_BYTES = 1 << 20
_WHOLE_PARSE_MAX_BYTES = 256 << 20


def device_properties(path: Path) -> list[dict[str, Any]]:
    """The GPUs a Kineto trace lists in its top-level ``deviceProperties`` (empty if none).

    Perfetto's JSON importer does not import this block, so this is how SQL learns which GPU a
    trace ran on (see ``generators.tp``). Kineto writes it before the events; the header is read
    first and the whole document only when the block is not there. Never raises: a trace that
    cannot be read this way has no devices here, and the trace processor reports what is wrong.
    """
    try:
        with open_inflated(Path(path)) as f:
            head = f.read(_HEADER_BYTES)
        found = _header_member(head.decode("utf-8", "replace"), "deviceProperties")
        if found is None:
            with open_inflated(Path(path)) as f:
                data = f.read(_WHOLE_PARSE_MAX_BYTES + 1)
            # A CPU-only trace has no such block: say so without parsing its events.
            if len(data) > _WHOLE_PARSE_MAX_BYTES or b'"deviceProperties"' not in data:
                return []
            doc = json.loads(data)
            found = doc.get("deviceProperties") if isinstance(doc, dict) else None
    except (OSError, EOFError, ValueError, zlib.error):
        return []
    if not isinstance(found, list):
        return []
    return [d for d in found if isinstance(d, dict)]


def open_inflated(path: Path) -> Any:
    """The trace file opened for reading its JSON bytes: inflated when it is gzip-compressed."""
    with path.open("rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == GZIP_MAGIC else path.open("rb")


def _header_member(text: str, key: str) -> Any:
    """The value of top-level ``key`` if it comes before ``traceEvents`` in ``text``, else None.

    Reads the object's members one by one from the start and stops at the event list, so that
    the (large) events are never parsed here.
    """
    decoder = json.JSONDecoder()
    i = _skip_ws(text, 0)
    if not text.startswith("{", i):
        return None
    i += 1
    while True:
        i = _skip_ws(text, i)
        try:
            name, i = decoder.raw_decode(text, i)
        except ValueError:
            return None
        i = _skip_ws(text, i)
        if not isinstance(name, str) or not text.startswith(":", i) or name == "traceEvents":
            return None
        try:
            value, i = decoder.raw_decode(text, _skip_ws(text, i + 1))
        except ValueError:  # cut off by the header's end, or not JSON
            return None
        if name == key:
            return value
        i = _skip_ws(text, i)
        if not text.startswith(",", i):
            return None
        i += 1


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def to_ns(value: Any) -> int:
    """A JSON microsecond value (number or numeric string) as integer nanoseconds."""
    if isinstance(value, bool):
        raise TypeError("boolean is not a timestamp")
    if isinstance(value, int):
        return value * 1000
    if isinstance(value, Decimal):
        return int(value.scaleb(3))
    if isinstance(value, float):
        return int(Decimal(repr(value)).scaleb(3))
    if isinstance(value, str):
        return int(Decimal(value.strip()).scaleb(3))
    raise TypeError(f"not a timestamp: {value!r}")


def perfetto_ns(value: Any) -> int:
    """A JSON microsecond value as the trace processor's JSON importer stores it, in ns.

    The importer reads the number as a double; a whole number of microseconds
    is scaled exactly, anything else is multiplied by 1000 in double precision
    and rounded to the nearest integer. (Checked against every complete event
    of the reference traces.)
    """
    if isinstance(value, bool):
        raise TypeError("boolean is not a timestamp")
    d = float(value.strip()) if isinstance(value, str) else float(value)
    if d.is_integer():
        return int(d) * 1000
    x = d * 1000.0
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


TimestampMode = Literal["perfetto", "exact"]


def _converter(mode: TimestampMode):
    if mode == "perfetto":
        return perfetto_ns
    if mode == "exact":
        return to_ns
    raise ValueError(f"unknown timestamp mode {mode!r}")


def count_by_cat(events: Iterable[Event], ph: str | None = "X") -> Counter[str]:
    """Number of events per ``cat`` (only phase ``ph``; all phases when None)."""
    counts: Counter[str] = Counter()
    for e in events:
        if ph is None or e.get("ph") == ph:
            counts[str(e.get("cat", ""))] += 1
    return counts


def complete_events(events: Iterable[Event], cats: Iterable[str] | None = None) -> Iterator[Event]:
    """Complete (``"X"``) events, optionally only those of the given categories."""
    wanted = None if cats is None else set(cats)
    for e in events:
        if e.get("ph") == "X" and (wanted is None or e.get("cat") in wanted):
            yield e


def total_dur_ns(events: Iterable[Event]) -> int:
    """Sum of ``dur`` over the events, in nanoseconds."""
    return sum(to_ns(e.get("dur", 0)) for e in events)


def flow_links(events: Iterable[Event], cat: str = LAUNCH_FLOW_CATEGORY) -> dict[str, list[Event]]:
    """Flow events of category ``cat`` grouped by id (a start ``s`` and an end ``f`` each)."""
    by_id: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        if e.get("cat") == cat and e.get("ph") in ("s", "t", "f"):
            by_id[str(e.get("id"))].append(e)
    return dict(by_id)


def complete_flow_ids(events: Iterable[Event], cat: str = LAUNCH_FLOW_CATEGORY) -> set[str]:
    """Ids of flows of category ``cat`` that have both a start and an end event."""
    out = set()
    for fid, evs in flow_links(events, cat).items():
        phases = {e.get("ph") for e in evs}
        if "s" in phases and "f" in phases:
            out.add(fid)
    return out


@dataclass(frozen=True)
class Overlap:
    """A complete event the JSON importer drops, and the event it collides with."""

    event: Event
    other: Event
    pid: Any
    tid: Any
    start_ns: int
    end_ns: int
    other_start_ns: int
    other_end_ns: int
    exact_start_ns: int
    exact_end_ns: int
    other_exact_start_ns: int
    other_exact_end_ns: int

    @property
    def exact_overlap_ns(self) -> int:
        """How far the event runs past the other's end, at the file's own precision."""
        return self.exact_end_ns - self.other_exact_end_ns

    @property
    def rounding_artefact(self) -> bool:
        """True when, at the file's own precision, the two events do not partly overlap."""
        partial = (
            self.other_exact_start_ns <= self.exact_start_ns < self.other_exact_end_ns
            and self.exact_end_ns > self.other_exact_end_ns
        )
        return not partial

    @property
    def cat(self) -> str:
        return str(self.event.get("cat", ""))

    @property
    def name(self) -> str:
        return str(self.event.get("name", ""))

    def describe(self) -> str:
        return (
            f"[{self.cat}] {self.name!r} pid={self.pid} tid={self.tid} "
            f"ts={self.event.get('ts')} dur={self.event.get('dur')} "
            f"overlaps [{self.other.get('cat', '')}] {self.other.get('name', '')!r} "
            f"ts={self.other.get('ts')} dur={self.other.get('dur')} "
            f"by {self.end_ns - self.other_end_ns} ns as imported"
            + (
                " (no overlap at the file's precision: a timestamp rounding artefact)"
                if self.rounding_artefact
                else f", by {self.exact_overlap_ns} ns in the file"
            )
        )


def find_partial_overlaps(
    events: Iterable[Event], timestamps: TimestampMode = "perfetto"
) -> list[Overlap]:
    """Complete events that start inside another on the same (pid, tid) track but end after it.

    Replays the nesting the importer builds on each track: events in time order
    (longest first among equal start times), each one closing the open events
    that ended at or before its start; an event that ends after the innermost
    open event is reported (and, as in the importer, does not become open
    itself). The result is in trace order of the dropped events.

    ``timestamps="perfetto"`` (the default) does the arithmetic the importer
    does (see :func:`perfetto_ns`), so the result is exactly what it drops;
    ``"exact"`` uses the file's full precision instead.
    """
    conv = _converter(timestamps)
    tracks: dict[tuple[str, str], list[tuple[int, int, int, Event]]] = defaultdict(list)
    for order, e in enumerate(events):
        if e.get("ph") != "X" or "ts" not in e:
            continue
        try:
            start = conv(e["ts"])
            dur = conv(e.get("dur", 0))
        except (TypeError, ValueError, ArithmeticError):
            continue
        if dur < 0:
            continue
        key = (str(e.get("pid")), str(e.get("tid")))
        tracks[key].append((start, start + dur, order, e))

    found: list[tuple[int, Overlap]] = []
    for evs in tracks.values():
        evs.sort(key=lambda t: (t[0], -(t[1] - t[0]), t[2]))
        stack: list[tuple[int, int, Event]] = []
        for start, end, order, e in evs:
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                top_start, top_end, top = stack[-1]
                es, ee = _exact_span(e)
                os_, oe = _exact_span(top)
                ov = Overlap(
                    e,
                    top,
                    e.get("pid"),
                    e.get("tid"),
                    start,
                    end,
                    top_start,
                    top_end,
                    es,
                    ee,
                    os_,
                    oe,
                )
                found.append((order, ov))
                continue
            stack.append((start, end, e))
    found.sort(key=lambda t: t[0])
    return [o for _, o in found]


def _exact_span(e: Event) -> tuple[int, int]:
    start = to_ns(e["ts"])
    return start, start + to_ns(e.get("dur", 0))


def dropped_by_cat(overlaps: Iterable[Overlap]) -> Counter[str]:
    """Number of dropped events per category."""
    return Counter(o.cat for o in overlaps)


#: A step GPU timestamps come in: the largest power of two (in ns, up to this) that at least
#: ``_STEP_SHARE`` of the kernels' durations are a multiple of, give or take 1 ns of rounding.
_MAX_STEP_NS = 1024
_STEP_SHARE = 0.9


def kernel_overlaps(events: Iterable[Event]) -> dict[str, object]:
    """Kernels that start before the previous kernel on their stream has ended, from the JSON.

    Perfetto's importer drops such a kernel (it does not nest in the one before it), so the SQL
    never sees it: this reads the file at its own precision. Each stream (``pid``, ``tid``) is
    taken in start order; a kernel overlaps when it starts before the previous one's end, by
    that end less its start. Also: the kernel name most of the overlapping kernels bear, how
    many kernels of that name the file holds, and the step kernel durations come in (a GPU
    timestamp's resolution as the trace shows it), so an overlap can be read against it.
    """
    streams: dict[tuple[str, str], list[tuple[int, int, int, str]]] = defaultdict(list)
    names: Counter[str] = Counter()
    durations: list[int] = []
    for order, e in enumerate(events):
        if e.get("ph") != "X" or e.get("cat") != "kernel" or "ts" not in e:
            continue
        try:
            start, dur = to_ns(e["ts"]), to_ns(e.get("dur", 0))
        except (TypeError, ValueError, ArithmeticError):
            continue
        name = str(e.get("name", ""))
        names[name] += 1
        durations.append(dur)
        streams[(str(e.get("pid")), str(e.get("tid")))].append((start, order, start + dur, name))
    overlaps: list[int] = []
    overlapping: Counter[str] = Counter()
    for kernels in streams.values():
        kernels.sort()
        for (_, _, previous_end, _), (start, _, _, name) in itertools.pairwise(kernels):
            if start < previous_end:
                overlaps.append(previous_end - start)
                overlapping[name] += 1
    top = overlapping.most_common(1)[0][0] if overlapping else None
    step = None
    if durations:
        for candidate in (1 << k for k in range(_MAX_STEP_NS.bit_length() - 1, 0, -1)):
            near = sum(min(d % candidate, -d % candidate) <= 1 for d in durations)
            if near >= _STEP_SHARE * len(durations):
                step = candidate
                break
    return {
        "kernels": len(durations),
        "overlapping_kernels": len(overlaps),
        "overlap_min_ns": min(overlaps) if overlaps else None,
        "overlap_max_ns": max(overlaps) if overlaps else None,
        "overlapping_name": top,
        "overlapping_name_overlaps": overlapping[top] if top else None,
        "overlapping_name_kernels": names[top] if top else None,
        "overlapping_name_pct": 100.0 * overlapping[top] / names[top] if top else None,
        "kernel_dur_step_ns": step,
    }


@dataclass(frozen=True)
class FlowLink:
    """A flow as the importer links it: from the slice ``out`` to the slice ``into``."""

    flow_id: str
    out: Event
    into: Event


def predict_flow_links(
    events: Sequence[Event],
    cat: str = LAUNCH_FLOW_CATEGORY,
    overlaps: Iterable[Overlap] | None = None,
) -> list[FlowLink]:
    """The flows of category ``cat`` the JSON importer ends up linking, and between which slices.

    Replays the importer: every event in time order (at equal times a slice
    before a flow event, a longer slice before a shorter one) with importer
    timestamps; the events it drops (``overlaps``, found when not given) are
    not slices. A flow start (``s``) binds to the innermost slice open on its
    track; a flow end (``f``) with ``"bp": "e"`` to the innermost slice open on
    its track, otherwise to the next slice that begins on its track. A slice
    open at ``t`` is one with ``start <= t <= end``. An end with no earlier
    start, or an end point with no slice, makes no link. The link goes from
    the earlier-starting slice to the later one. (Checked against every
    reference trace, per pair of slice categories.)
    """
    if overlaps is None:
        overlaps = find_partial_overlaps(events)
    dropped = {id(o.event) for o in overlaps}
    items: list[tuple[int, int, int, int, str, Event, int]] = []
    for order, e in enumerate(events):
        ph = e.get("ph")
        if "ts" not in e:
            continue
        if ph == "X" and id(e) not in dropped:
            start = perfetto_ns(e["ts"])
            end = start + perfetto_ns(e.get("dur", 0))
            items.append((start, 0, start - end, order, "X", e, end))
        elif ph in ("s", "f") and e.get("cat") == cat:
            items.append((perfetto_ns(e["ts"]), 1, 0, order, str(ph), e, 0))
    items.sort(key=lambda t: t[:4])

    stacks: dict[tuple[str, str], list[tuple[Event, int]]] = defaultdict(list)
    waiting_next: dict[tuple[str, str], list[str]] = defaultdict(list)
    started: dict[str, Event] = {}
    links: list[FlowLink] = []

    def link(fid: str, a: Event, b: Event) -> None:
        first, second = (a, b) if perfetto_ns(b["ts"]) >= perfetto_ns(a["ts"]) else (b, a)
        links.append(FlowLink(fid, first, second))

    for ts, _, _, _, kind, e, end in items:
        track = (str(e.get("pid")), str(e.get("tid")))
        stack = stacks[track]
        while stack and stack[-1][1] < ts:
            stack.pop()
        if kind == "X":
            for fid in waiting_next.pop(track, []):
                if fid in started:
                    link(fid, started.pop(fid), e)
            stack.append((e, end))
            continue
        fid = str(e.get("id"))
        top = stack[-1][0] if stack else None
        if kind == "s":
            if top is not None:
                started[fid] = top
        elif fid in started:
            if e.get("bp") == "e":
                begun = started.pop(fid)
                if top is not None:
                    link(fid, begun, top)
            else:
                waiting_next[track].append(fid)
    return links
