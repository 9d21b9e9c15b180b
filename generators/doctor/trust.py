"""What the trace processor lost of a trace, read back from the file itself.

Perfetto's JSON importer drops a complete event that partly overlaps another on its thread
(:func:`generators.trace_json.find_partial_overlaps` finds exactly those). The trace processor
only counts them; the doctor's trust gate needs to know *what* was lost (kernels? the step
markers every per-step check is built on?), and the step loop needs its lost `ProfilerStep#N`
markers back. The kinds come from counting each category's events in the file's bytes against
the slices kept (which also finds drops the replay cannot, when the importer's nesting differs);
the file is parsed, and the nesting replayed, only when step markers are missing. A trace
without drops costs nothing here.

What the importer reads silently otherwise is checked in the file's bytes too
(:func:`check_file`, one streaming pass, on every trace): ids beyond a signed 64-bit integer
(the importer wraps or collapses them), bytes that are not UTF-8 (left out of every name the
trace processor returns), and events that state no ``pid`` or ``tid``, or state one twice.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generators import trace_json

#: The session table windows.sql reads recovered step markers from (created there, empty, when
#: the doctor did not fill it first).
RECOVERED_STEP_TABLE = "guide_trace_recovered_step"
_STEP = re.compile(r"^ProfilerStep#(\d+)$")
#: Kineto's flow events' categories: never slices.
FLOW_CATEGORIES = frozenset({"ac2g", "fwdbwd"})


@dataclass(frozen=True)
class RecoveredStep:
    step: int
    ts: int
    dur: int
    location: str
    #: ``location`` in Japanese (the same when it is the thread's name).
    location_ja: str = ""


@dataclass
class DroppedEvents:
    """The events the importer dropped, read from the file."""

    #: Dropped complete events per Kineto category (``cat``).
    by_category: Counter[str] = field(default_factory=Counter)
    #: CPU-side ``ProfilerStep#N`` markers among them, as step windows.
    steps: list[RecoveredStep] = field(default_factory=list)
    #: Why the file could not be read (then nothing above is known).
    error: str | None = None

    @property
    def total(self) -> int:
        return sum(self.by_category.values())


#: How much of the inflated file one step of :func:`check_file` reads.
_CHECK_CHUNK = 8 << 20
#: Ids the importer reads as integers (``pid``, ``tid``, a flow's ``id``, ``External id``, ``Fwd
#: thread id``, ``correlation``) written with 19 digits or more: the only ones that may not fit
#: in a signed 64-bit integer. Each pattern starts with a literal, which the regular expression
#: engine finds fast; the key is read back from the bytes before a match.
_LONG_IDS = (
    re.compile(rb'id": ?"?(-?[0-9]{19,})'),
    re.compile(rb'correlation": ?"?(-?[0-9]{19,})'),
)
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


#: A JSON object with at most one level of objects inside it (an event and its args), and the
#: objects inside one.
_OBJECT = re.compile(rb"\{(?:[^{}]|\{[^{}]*\})*\}")
_INNER_OBJECT = re.compile(rb"\{[^{}]*\}")


@dataclass
class FileCheck:
    """What the file holds that the importer reads silently, counted in its bytes."""

    #: ``"ph":`` keys (one per event), and ``pid`` and ``tid`` keys, anywhere in the file.
    events: int = 0
    pids: int = 0
    tids: int = 0
    #: Events that state no pid or no tid, and events that state one twice (counted event by
    #: event, and only when the counts above differ).
    without_pid_or_tid: int = 0
    pid_or_tid_twice: int = 0
    #: Ids beyond a signed 64-bit integer, per key (``pid``, ``correlation``...).
    overflowing: Counter[str] = field(default_factory=Counter)
    #: Bytes that are not UTF-8.
    invalid_utf8_bytes: int = 0
    #: Why the file could not be read to the end (then the counts are partial).
    error: str | None = None


def _check_block(data: bytes, out: FileCheck) -> None:
    out.events += data.count(b'"ph":')
    out.pids += data.count(b'"pid":')
    out.tids += data.count(b'"tid":')
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        out.invalid_utf8_bytes += len(data) - len(data.decode("utf-8", "ignore").encode())
    for pattern in _LONG_IDS:
        for m in pattern.finditer(data):
            value = int(m.group(1))
            if _INT64_MIN <= value <= _INT64_MAX:
                continue
            start = data.rfind(b'"', max(0, m.start() - 40), m.start())
            key = data[start + 1 : m.start()] if start >= 0 else b""
            key += b"correlation" if pattern is _LONG_IDS[1] else b"id"
            out.overflowing[key.decode("utf-8", "replace")] += 1


def _check_events(path: Path, out: FileCheck) -> None:
    """Count, event by event, the events without a pid or tid key of their own and those with
    two (the keys of an event's args and of the file's other objects left out)."""
    for m in _OBJECT.finditer(trace_json.read_trace_bytes(path)):
        own = _INNER_OBJECT.sub(b"", m.group(0)[1:-1])
        if b'"ph":' not in own:
            continue
        pids, tids = own.count(b'"pid":'), own.count(b'"tid":')
        out.without_pid_or_tid += not (pids and tids)
        out.pid_or_tid_twice += pids > 1 or tids > 1


def check_file(path: Path) -> FileCheck:
    """Count in the trace's bytes (inflated, a chunk at a time) what the importer reads without
    a word: ids that overflow, bytes that are not UTF-8, events without (or with two) ``pid`` or
    ``tid`` keys. Chunks are cut after a ``}``, which no counted pattern and no multi-byte UTF-8
    character contains. Only where the file holds other numbers of ``pid`` or ``tid`` keys than
    events (a header may hold one too) is it read event by event. Never raises: a file that
    cannot be read to the end says so in ``error``."""
    out = FileCheck()
    carry = b""
    try:
        with trace_json.open_inflated(Path(path)) as f:
            while block := f.read(_CHECK_CHUNK):
                data = carry + block
                cut = data.rfind(b"}") + 1
                if cut == 0 and len(data) < 4 * _CHECK_CHUNK:
                    carry = data
                    continue
                cut = cut or len(data)
                data, carry = data[:cut], data[cut:]
                _check_block(data, out)
        if carry:
            _check_block(carry, out)
        if out.pids != out.events or out.tids != out.events:
            _check_events(Path(path), out)
    except (OSError, EOFError, ValueError, zlib.error) as e:
        out.error = str(e)[:200] or type(e).__name__
    return out


def _thread_names(events: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            name = (e.get("args") or {}).get("name")
            if isinstance(name, str):
                names[(str(e.get("pid")), str(e.get("tid")))] = name
    return names


#: A complete event's category and a step marker's name as Kineto writes them (with or without
#: the space after the colon).
_CATEGORY = re.compile(rb'"cat": ?"([^"\\]{1,80})"')
_STEP_NAME = re.compile(rb'"name": ?"ProfilerStep#[0-9]+"')


def dropped_events(
    path: Path, slices_by_category: dict[str, int], step_slices: int, dropped: int
) -> DroppedEvents:
    """What the importer dropped from the trace at ``path``, given what it kept (the slices per
    category and the ``ProfilerStep#N`` slices, any category) and how many it says it dropped.

    The kinds come from counting, not parsing: each category's events in the file (one pass of
    a regular expression over its bytes) less the slices the trace processor holds of it.
    Only when step markers are missing is the file parsed, and the importer's nesting replayed
    (:func:`generators.trace_json.find_partial_overlaps`), to recover them.
    """
    try:
        data = trace_json.read_trace_bytes(path)
    except (OSError, EOFError, ValueError, zlib.error, gzip.BadGzipFile) as e:
        return DroppedEvents(error=str(e)[:200])
    in_file = Counter(m.decode("utf-8", "replace") for m in _CATEGORY.findall(data))
    by_category = Counter(
        {c: in_file[c] - n for c, n in slices_by_category.items() if in_file[c] > n}
    )
    # A category the trace processor holds no slice of was dropped whole, or is not a slice's
    # (a flow's): counted only while the importer's own count leaves room for it.
    for c, n in sorted(in_file.items(), key=lambda kv: kv[1]):
        room = dropped - sum(by_category.values())
        if c not in slices_by_category and c not in FLOW_CATEGORIES and n <= room:
            by_category[c] = n
    out = DroppedEvents(by_category=by_category)
    if len(_STEP_NAME.findall(data)) <= step_slices:
        return out
    try:
        events = trace_json.load_trace_fast(path)
    except (OSError, EOFError, ValueError, zlib.error, gzip.BadGzipFile) as e:
        out.error = str(e)[:200]
        return out
    del data
    names: dict[tuple[str, str], str] | None = None
    for o in trace_json.find_partial_overlaps(events):
        m = _STEP.match(o.name)
        if not m or o.cat == "gpu_user_annotation":
            continue
        if names is None:
            names = _thread_names(events)
        name = names.get((str(o.pid), str(o.tid)))
        out.steps.append(
            RecoveredStep(
                int(m.group(1)),
                o.start_ns,
                o.end_ns - o.start_ns,
                name or f"thread {o.tid}",
                name or f"スレッド {o.tid}",
            )
        )
    out.steps.sort(key=lambda s: s.ts)
    return out


#: Kineto writes ``distributedInfo`` in the document's opening, before ``traceEvents``: reading
#: that much is enough, whatever the file's size.
_HEAD_BYTES = 1 << 16
_DISTRIBUTED_INFO = re.compile(rb'"distributedInfo": ?(\{)')
_WORLD_SIZE = re.compile(rb'"distributedInfo": ?\{[^{}]{0,1000}?"world_size": ?([0-9]{1,9})')
_RANK = re.compile(rb'"distributedInfo": ?\{[^{}]{0,1000}?"rank": ?([0-9]{1,9})')
_BACKEND = re.compile(rb'"distributedInfo": ?\{[^{}]{0,1000}?"backend": ?"([A-Za-z0-9_:]{1,40})"')


def distributed_info(path: Path) -> dict[str, Any] | None:
    """The ``distributedInfo`` block the trace's opening holds (Kineto's: ``backend``, ``rank``,
    ``world_size``, and in recent versions ``pg_count``, ``pg_config``, ``nccl_version``), or
    None: none stated, or the file cannot be read. A block too long for the opening read (the
    process groups of a large job) keeps only its ``backend``, ``rank`` and ``world_size``."""
    try:
        with Path(path).open("rb") as f:
            magic = f.read(2)
        opener = gzip.open if magic == trace_json.GZIP_MAGIC else open
        with opener(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile):
        return None
    m = _DISTRIBUTED_INFO.search(head)
    if not m:
        return None
    try:
        text = head[m.start(1) :].decode("utf-8", errors="replace")
        info, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        info = None
    if not isinstance(info, dict):
        info = {}
        for key, pattern in (("world_size", _WORLD_SIZE), ("rank", _RANK), ("backend", _BACKEND)):
            found = pattern.search(head)
            if found:
                value = found.group(1)
                info[key] = value.decode() if key == "backend" else int(value)
    return info


def world_size(path: Path) -> int | None:
    """The ``distributedInfo`` world size the trace's opening states (None: none stated, or the
    file cannot be read)."""
    value = (distributed_info(path) or {}).get("world_size")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def recovered_steps_sql(steps: list[RecoveredStep]) -> str:
    """The SQL that creates the recovered-step table with ``steps`` in it (run before any
    module is included). Every value is a number or a quoted literal."""

    def text(value: str) -> str:
        return "'" + value.replace("\x00", "").replace("'", "''")[:256] + "'"

    create = (
        f"CREATE TABLE {RECOVERED_STEP_TABLE}"
        "(step INT, ts INT, dur INT, location TEXT, location_ja TEXT);"
    )
    if not steps:
        return create
    values = ", ".join(
        f"({int(s.step)}, {int(s.ts)}, {int(s.dur)}, {text(s.location)}, "
        f"{text(s.location_ja or s.location)})"
        for s in steps
    )
    return f"{create}\nINSERT INTO {RECOVERED_STEP_TABLE} VALUES {values};"
