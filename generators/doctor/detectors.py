"""Detectors: one PerfettoSQL file per lesson of the guide, read from ``generators/detectors/``.

A detector file is a header of ``-- key: value`` comment lines (a value continues on lines that
start with ``--`` and two more spaces), then one ``SELECT`` (after any ``INCLUDE PERFETTO
MODULE`` lines) over the trace processor's tables and the ``guide.*`` modules. Each row the
``SELECT`` returns is one piece of evidence; no row means the detector stays silent. Keys:

``id``, ``title``, ``severity`` (``info``, ``warning`` or ``error``)
    What the finding is called and how serious it is.
``param`` (repeatable): ``name = value  what it means``
    A threshold. The body names it as ``{{name}}``; numbers only, substituted before the query
    runs, so the SQL a report shows is the SQL that ran.
``needs``: ``gpu``, ``flows``, ``shapes``, ``steps``, ``device`` (comma separated)
    What the trace must hold for the detector to run; when it does not, the report says so
    instead of staying silent.
``relies``: ``cpu-time``, ``steps``, ``kernels``, ``operators``, ``flows``, ``execution``
    (comma separated) What the detector's numbers rest on beyond ``needs``: CPU durations (which
    with_stack=True inflates), the step markers, every kernel, every operator, launch flows it
    can do without but reads better with, or the trace recording work that ran (not a CUDA graph
    capture: a detector that relies on execution does not run on a capture that is never
    replayed). The report's trust gate names, for each thing it doubts in a
    trace, the detectors that rely on it.
``scope``: ``loop``
    The finding speaks of the step loop ("inside the loop"). On a trace without step markers the
    loop is the whole trace, one-time work included: such a finding is shown as information
    there, with the reason.
``guide``: ``part-N/NN-page.md#anchor``
    The page and section that teach the lesson.
``seen``, ``why``, ``try``, ``after``, ``false-positives``
    The finding's prose. ``seen`` is a template over the evidence rows: ``{count}``, a
    parameter ``{name}``, or ``{sum(col)}``, ``{min(col)}``, ``{max(col)}``, ``{first(col)}``,
    formatted by the column's unit suffix (``generators/units.py``). A part in ``[[...]]`` is
    said only where every placeholder in it has a value: a trace without the data (GPU time on a
    CPU-only capture) drops the clause instead of printing "–" in a sentence.
``title_ja``, ``seen_ja``, ``why_ja``, ``try_ja``, ``after_ja``, ``false-positives_ja``
    The same prose in Japanese (the guide's Japanese edition), each beside its English field.
    Every English prose field has its twin, and ``seen_ja`` uses exactly the placeholders of
    ``seen``. A value's lines are joined with a space, except between two Japanese characters
    or beside full-width punctuation (「。」, 「、」, 「（」).
``param_ja`` (repeatable): ``name  what it means``, in Japanese
    One for each ``param``.
``breakdown``: a column
    The report totals ``cost_ns`` by that column's values.
``columns``, ``columns_ja``: ``name=Title, other=Other title``
    The titles a report gives the columns it may show beyond the evidence ones (the breakdown
    column, and those that tell rows apart), in English and in Japanese: every such column the
    query returns has both.

Every row has the columns ``ts``, ``dur`` (the moment to open in Perfetto), ``location`` (thread
or stream), ``what`` and ``cost_ns`` (the time the row accounts for, which ranks findings), and
``location_ja`` and ``what_ja``, the same two texts in Japanese. Any other text column may have
such a twin, ``<name>_ja``: a report in Japanese shows the twin where it would show the column
(its breakdown, its extra columns, a ``seen_ja`` placeholder naming it), a JSON report carries
both. Names from the trace stay as the trace spells them in both. A row whose ``evidence``
column is 0 counts in the totals but is not listed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from generators.i18n import LANGUAGES

DETECTORS_DIR = Path(__file__).resolve().parent.parent / "detectors"
SEVERITIES = ("info", "warning", "error")
NEEDS = ("gpu", "flows", "shapes", "steps", "device")
RELIES = ("cpu-time", "steps", "kernels", "operators", "flows", "execution")
EVIDENCE_COLUMNS = ("ts", "dur", "location", "what", "cost_ns", "location_ja", "what_ja")
#: The suffix of a column that holds another column's text in Japanese.
JA_SUFFIX = "_ja"

_HEADER = re.compile(r"^-- ([a-z_-]+): ?(.*)$")
_CONTINUATION = re.compile(r"^--   (.*)$")
_PARAM = re.compile(r"^(\w+)\s*=\s*(-?[0-9]+(?:\.[0-9]+)?)\s+(.+)$")
_PARAM_JA = re.compile(r"^(\w+)\s+(.+)$")
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_TEMPLATE = re.compile(r"\{(?:(sum|min|max|first)\((\w+)\)|(\w+))\}")
#: A part of a template said only when every placeholder in it has a value.
_OPTIONAL = re.compile(r"\[\[(.*?)\]\]", re.DOTALL)
_TEMPLATE_TEXT = re.compile(r"\{[^{}]*\}")
#: A seen_ja placeholder naming a column's Japanese twin: ``(advice_ja)``, read as ``(advice)``
#: when the two templates are compared.
_TWIN = re.compile(r"(\w+)_ja\)")
KEYS = {
    "id",
    "title",
    "severity",
    "param",
    "needs",
    "guide",
    "seen",
    "why",
    "try",
    "after",
    "false-positives",
    "breakdown",
    "relies",
    "scope",
    "columns",
}
#: The prose a reader sees; each field has a Japanese twin, ``<key>_ja``.
PROSE = ("title", "seen", "why", "try", "after", "false-positives")
KEYS |= {f"{k}_ja" for k in (*PROSE, "param", "columns")}
REQUIRED = ("id", "severity", "guide", *PROSE, *(f"{k}_ja" for k in PROSE))


def _is_japanese(char: str) -> bool:
    """Kana, kanji and full-width punctuation (CJK blocks from U+2E80 on)."""
    return ord(char) >= 0x2E80


def _is_full_width_punctuation(char: str) -> bool:
    """「。」「、」「（」「）」 and the like: Japanese sets no space beside them, even next to
    Latin letters or code."""
    return 0x3000 <= ord(char) <= 0x303F or 0xFF00 <= ord(char) <= 0xFFEF


def _join(text: str, more: str) -> str:
    """A header value and its continuation line: a space between them, except between two
    Japanese characters (Japanese has no spaces between words) or beside full-width
    punctuation ("…オプティマイザ。" then "fused …" joins without one)."""
    if text and more:
        if _is_japanese(text[-1]) and _is_japanese(more[0]):
            return text + more
        if _is_full_width_punctuation(text[-1]) or _is_full_width_punctuation(more[0]):
            return text + more
    return f"{text} {more}"


class DetectorError(ValueError):
    """A detector file that breaks the format; the message names the file."""


@dataclass(frozen=True)
class Param:
    name: str
    value: float | int
    doc: str
    doc_ja: str = ""

    def meaning(self, lang: str = "en") -> str:
        return self.doc_ja if lang == "ja" else self.doc

    @property
    def text(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Detector:
    id: str
    title: str
    severity: str
    guide: str
    seen: str
    why: str
    try_: str
    after: str
    false_positives: str
    path: Path
    body: str
    params: tuple[Param, ...] = ()
    needs: tuple[str, ...] = ()
    relies: tuple[str, ...] = ()
    #: "loop" when the finding speaks of the step loop, else None.
    scope: str | None = None
    breakdown: str | None = None
    header: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: The prose in Japanese, by English field name (``title``, ``seen``, ``why``, ``try_``,
    #: ``after``, ``false_positives``).
    ja: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: Column titles by language, then by column name (``columns``, ``columns_ja``).
    titles: dict[str, dict[str, str]] = field(default_factory=dict, compare=False, repr=False)

    def column_title(self, column: str, lang: str = "en") -> str:
        """A column's title in ``lang`` (its name when the header gives it none)."""
        return self.titles.get(lang, {}).get(column, column)

    def text(self, name: str, lang: str = "en") -> str:
        """A prose field (``title``, ``seen``, ``why``, ``try_``, ``after``,
        ``false_positives``) in ``lang``."""
        if lang not in LANGUAGES:
            raise ValueError(f"unknown language {lang!r} (known: {', '.join(LANGUAGES)})")
        return self.ja[name] if lang == "ja" else getattr(self, name)

    @property
    def anchor(self) -> str:
        """The anchor of this detector's section on the "Check your own trace" page."""
        return self.id

    @property
    def per_step(self) -> bool:
        """Whether the check reads the loop step by step: it leaves a cold first step out, so
        it needs warm steps to compare (the steps the trust gate counts)."""
        return "guide_windows_cold_step" in self.body

    @property
    def guide_page(self) -> str:
        return self.guide.partition("#")[0]

    @property
    def guide_anchor(self) -> str:
        return self.guide.partition("#")[2]

    def sql(self, overrides: dict[str, float] | None = None) -> str:
        """The query with its parameters filled in: the SQL that runs, as a report shows it."""
        values = {p.name: p.value for p in self.params}
        for name, value in (overrides or {}).items():
            if name not in values:
                raise DetectorError(f"{self.id} has no parameter {name!r}")
            values[name] = value

        def fill(m: re.Match[str]) -> str:
            return str(values[m.group(1)])

        return _PLACEHOLDER.sub(fill, self.body)


def _parse_header(path: Path, text: str) -> tuple[dict[str, list[str]], str]:
    fields: dict[str, list[str]] = {}
    lines = text.splitlines()
    key: str | None = None
    i = 0
    for i, line in enumerate(lines):  # noqa: B007 (i is the body's first line after the loop)
        if m := _HEADER.match(line):
            key = m.group(1)
            if key not in KEYS:
                raise DetectorError(f"{path.name}: unknown header key {key!r}")
            fields.setdefault(key, []).append(m.group(2).strip())
        elif (m := _CONTINUATION.match(line)) and key is not None:
            fields[key][-1] = _join(fields[key][-1], m.group(1).strip())
        else:
            break
    return fields, "\n".join(lines[i:]).strip() + "\n"


def parse_detector(path: Path) -> Detector:
    """Read one detector file; raises :class:`DetectorError` naming the file when it is wrong."""
    fields, body = _parse_header(path, path.read_text(encoding="utf-8"))
    for key in REQUIRED:
        if key not in fields:
            raise DetectorError(f"{path.name}: header has no {key!r}")
    for key, values in fields.items():
        if key not in ("param", "param_ja") and len(values) > 1:
            raise DetectorError(f"{path.name}: {key!r} given twice")
    one = {k: v[0] for k, v in fields.items() if k not in ("param", "param_ja")}
    if one["id"] != path.stem.replace("_", "-"):
        raise DetectorError(
            f"{path.name}: id {one['id']!r} should be {path.stem.replace('_', '-')!r}"
        )
    if one["severity"] not in SEVERITIES:
        raise DetectorError(f"{path.name}: severity must be one of {', '.join(SEVERITIES)}")
    params = []
    for raw in fields.get("param", []):
        m = _PARAM.match(raw)
        if not m:
            raise DetectorError(f"{path.name}: param {raw!r} is not 'name = number  meaning'")
        number = float(m.group(2)) if "." in m.group(2) else int(m.group(2))
        params.append(Param(m.group(1), number, m.group(3)))
    meanings_ja: dict[str, str] = {}
    for raw in fields.get("param_ja", []):
        m = _PARAM_JA.match(raw)
        if not m:
            raise DetectorError(f"{path.name}: param_ja {raw!r} is not 'name  meaning'")
        if m.group(1) in meanings_ja:
            raise DetectorError(f"{path.name}: param_ja {m.group(1)!r} given twice")
        meanings_ja[m.group(1)] = m.group(2)
    if set(meanings_ja) != {p.name for p in params}:
        raise DetectorError(
            f"{path.name}: param_ja must translate each param once: params "
            f"{sorted(p.name for p in params)}, param_ja {sorted(meanings_ja)}"
        )
    params = [Param(p.name, p.value, p.doc, meanings_ja[p.name]) for p in params]
    placeholders = {
        k: sorted({_TWIN.sub(r"\1)", p) for p in _TEMPLATE_TEXT.findall(one[k])})
        for k in ("seen", "seen_ja")
    }
    if placeholders["seen"] != placeholders["seen_ja"]:
        raise DetectorError(
            f"{path.name}: seen_ja must use the placeholders of seen: "
            f"{placeholders['seen']} in seen, {placeholders['seen_ja']} in seen_ja"
        )
    needs = tuple(n.strip() for n in one.get("needs", "").split(",") if n.strip())
    for n in needs:
        if n not in NEEDS:
            raise DetectorError(f"{path.name}: unknown need {n!r} (known: {', '.join(NEEDS)})")
    relies = tuple(n.strip() for n in one.get("relies", "").split(",") if n.strip())
    for n in relies:
        if n not in RELIES:
            raise DetectorError(f"{path.name}: unknown reliance {n!r} (known: {', '.join(RELIES)})")
    scope = one.get("scope")
    if scope not in (None, "loop"):
        raise DetectorError(f"{path.name}: scope must be 'loop' when given")
    names = {p.name for p in params}
    used = set(_PLACEHOLDER.findall(body))
    if used - names:
        raise DetectorError(f"{path.name}: the SQL uses undeclared {sorted(used - names)}")
    if names - used:
        raise DetectorError(f"{path.name}: parameters never used: {sorted(names - used)}")
    titles = {"en": _titles(one.get("columns", "")), "ja": _titles(one.get("columns_ja", ""))}
    if set(titles["en"]) != set(titles["ja"]):
        raise DetectorError(
            f"{path.name}: columns_ja must title exactly the columns that columns titles: "
            f"{sorted(titles['en'])} in columns, {sorted(titles['ja'])} in columns_ja"
        )
    breakdown = one.get("breakdown")
    if breakdown and breakdown not in titles["en"]:
        raise DetectorError(f"{path.name}: columns must title the breakdown column {breakdown!r}")
    if "#" not in one["guide"]:
        raise DetectorError(f"{path.name}: guide must name a page and a section: page.md#anchor")
    return Detector(
        id=one["id"],
        title=one["title"],
        severity=one["severity"],
        guide=one["guide"],
        seen=one["seen"],
        why=one["why"],
        try_=one["try"],
        after=one["after"],
        false_positives=one["false-positives"],
        path=path,
        body=body,
        params=tuple(params),
        needs=needs,
        relies=relies,
        scope=scope,
        breakdown=breakdown,
        header=one,
        titles=titles,
        ja={
            "title": one["title_ja"],
            "seen": one["seen_ja"],
            "why": one["why_ja"],
            "try_": one["try_ja"],
            "after": one["after_ja"],
            "false_positives": one["false-positives_ja"],
        },
    )


def _titles(spec: str) -> dict[str, str]:
    """``name=Title, other=Other title`` as a dict (titles hold no ASCII comma)."""
    titles: dict[str, str] = {}
    for pair in filter(str.strip, spec.split(",")):
        column, _, title = pair.partition("=")
        titles[column.strip()] = title.strip()
    return titles


def ja_twin(row: dict[str, object], column: str, lang: str = "en") -> object:
    """A row's value of ``column`` as a report in ``lang`` shows it: in Japanese, its twin
    ``<column>_ja`` when the row has one."""
    if lang == "ja" and row.get(column + JA_SUFFIX) is not None:
        return row[column + JA_SUFFIX]
    return row.get(column)


def load_detectors(folder: Path = DETECTORS_DIR) -> list[Detector]:
    """Every detector in ``folder``, in file-name order."""
    return [parse_detector(p) for p in sorted(folder.glob("*.sql"))]


def template_fields(template: str) -> list[tuple[str | None, str]]:
    """The placeholders of a ``seen`` template as (aggregate or None, name) pairs."""
    return [(m.group(1), m.group(2) or m.group(3)) for m in _TEMPLATE.finditer(template)]


def render_template(
    template: str,
    rows: list[dict[str, object]],
    params: dict[str, object],
    fmt,  # (value, column) -> str
) -> str:
    """Fill a ``seen`` template from the evidence rows (all rows, listed or not); a ``[[...]]``
    part goes where one of its placeholders has no value."""

    def value_of(m: re.Match[str]) -> object:
        agg, col, plain = m.group(1), m.group(2), m.group(3)
        if plain is not None:
            if plain == "count":
                return len(rows)
            if plain in params:
                return params[plain]
            raise DetectorError(f"unknown placeholder {{{plain}}}")
        values = [r[col] for r in rows if r.get(col) is not None]
        if agg == "first":
            return rows[0].get(col) if rows else None
        if not values:
            return None
        if agg == "sum":
            return sum(values)  # type: ignore[arg-type]
        if agg == "min":
            return min(values)  # type: ignore[type-var]
        return max(values)  # type: ignore[type-var]

    def fill(m: re.Match[str]) -> str:
        value = value_of(m)
        if m.group(3) is not None:
            return fmt(value, "count") if m.group(3) == "count" else str(value)
        return fmt(value, m.group(2))

    def optional(m: re.Match[str]) -> str:
        inner = m.group(1)
        if any(value_of(p) is None for p in _TEMPLATE.finditer(inner)):
            return ""
        return inner

    return _TEMPLATE.sub(fill, _OPTIONAL.sub(optional, template))
