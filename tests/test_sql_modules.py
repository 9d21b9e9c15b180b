"""The rules every module of the `guide` PerfettoSQL package follows (generators/sql/README.md).

Like Perfetto's own stdlib checker: a module holds only `INCLUDE PERFETTO MODULE` and
`CREATE PERFETTO TABLE/VIEW/FUNCTION/MACRO` statements; every object is named after its module
(`guide_<module>_...`, or `_guide_<module>_...` for a helper nothing outside the module uses);
every object, every column of a table's or view's schema, every function or macro argument and
every return value has a comment; column and argument types are PerfettoSQL's, with ts, duration
and id columns typed as such; and a public object has a user outside its module while a private
one has none but tests. The pages print these definitions under every table, so the comments are
what a reader sees.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generators.sql_sources import SQL_DIR

#: Types a table or view column, a function argument or a function's result may have.
COLUMN_TYPES = {"LONG", "DOUBLE", "STRING", "BOOL", "TIMESTAMP", "DURATION", "ID", "ARGSETID"}
# `ID(slice.id)`: this object's own row id, which is also a row of that table (a view of slices);
# `JOINID(slice.id)`: a reference to a row of that table.
_JOINID = re.compile(r"^(?:JOIN)?ID\(\w+\.\w+\)$")
#: Types a macro argument or a macro's result may have.
MACRO_TYPES = {"TableOrSubquery", "Expr", "ColumnName", "ColumnNameList"}

_INCLUDE = re.compile(r"^INCLUDE\s+PERFETTO\s+MODULE\s+([\w.]+)$", re.S)
_CREATE = re.compile(r"^CREATE\s+PERFETTO\s+(TABLE|VIEW|FUNCTION|MACRO)\s+(\w+)\s*", re.S)
_INDEX = re.compile(r"^CREATE\s+PERFETTO\s+INDEX\s+(\w+)\s+ON\s+(\w+)\s*\(\s*[\w\s,]+\)$", re.S)
_RETURNS = re.compile(r"\s*RETURNS\s+(\w+(?:\([\w.]*\))?)\s+AS\b", re.S)


def _mask(text: str) -> str:
    """``text`` with comments and string contents blanked (same length, newlines kept), so
    that parentheses, commas and semicolons in prose or literals do not count as syntax."""
    out = list(text)
    i = 0
    while i < len(text):
        if text.startswith("--", i):
            while i < len(text) and text[i] != "\n":
                out[i] = " "
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = len(text) if end < 0 else end + 2
            for j in range(i, end):
                out[j] = "\n" if text[j] == "\n" else " "
            i = end
        elif text[i] == "'":
            j = i + 1
            while j < len(text) and not (text[j] == "'" and text[j + 1 : j + 2] != "'"):
                j += 2 if text.startswith("''", j) else 1
            for k in range(i + 1, min(j, len(text))):
                out[k] = "\n" if text[k] == "\n" else " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def _comment_lines(segment: str) -> list[str]:
    return [line.strip() for line in segment.splitlines() if line.strip().startswith("--")]


def _closing(masked: str, open_at: int) -> int:
    """Index of the parenthesis closing the one at ``open_at``."""
    depth = 0
    for i in range(open_at, len(masked)):
        if masked[i] == "(":
            depth += 1
        elif masked[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _items(text: str, masked: str, start: int, end: int) -> list[tuple[str, str]]:
    """The comma-separated items between ``start`` and ``end``: (original text, code)."""
    items, depth, begin = [], 0, start
    for i in range(start, end + 1):
        ch = masked[i] if i < end else ","
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append((text[begin:i], " ".join(masked[begin:i].split())))
            begin = i + 1
    return [(t, c) for t, c in items if c or _comment_lines(t)]


def _type_ok(kind: str, typ: str) -> bool:
    if kind == "MACRO":
        return typ in MACRO_TYPES
    return typ in COLUMN_TYPES or bool(_JOINID.match(typ))


def _time_type_error(column: str, typ: str) -> str | None:
    if (column == "ts" or column.endswith("_ts")) and typ != "TIMESTAMP":
        return f"column {column} is a timestamp: type it TIMESTAMP, not {typ}"
    duration = column == "dur" or column.endswith(("_dur", "_ns"))
    if duration and typ != "DURATION":
        return f"column {column} is a duration: type it DURATION, not {typ}"
    return None


def _id_type_error(name: str, typ: str, what: str) -> str | None:
    """An id must say what it points to, so that a reader (and Perfetto's UI) can follow it:
    ``ID`` or ``ID(table.column)`` for the object's own rows, ``JOINID(table.column)`` for a
    reference, ``ARGSETID`` for an argument set."""
    if name != "id" and not name.endswith("_id"):
        return None
    if name == "arg_set_id":
        return None if typ == "ARGSETID" else f"{what} {name} is an argument set: type it ARGSETID"
    if typ == "ID" or _JOINID.match(typ):
        return None
    allowed = "ID, ID(table.column) or JOINID(table.column)"
    return f"{what} {name} is an id: type it {allowed}, not {typ}"


#: Plain tables a module creates empty when its caller has not filled them first (``CREATE TABLE IF
#: NOT EXISTS``): the step markers the doctor recovers from a trace file, which the importer
#: dropped (generators/doctor/trust.py, read by guide.windows), and the rows the doctor gathers
#: from every rank's trace of a distributed job (generators/doctor/ranks.py, read by guide.ranks).
INPUT_TABLES = frozenset(
    {"guide_trace_recovered_step", "guide_ranks_member", "guide_ranks_gathered"}
)
_INPUT_TABLE = re.compile(r"CREATE\s+TABLE\s+IF\s+NOT\s+EXISTS\s+(\w+)\s*\(", re.IGNORECASE)


def check_module(text: str, stem: str, known_modules: set[str] | None = None) -> list[str]:
    """Every way ``text``, the module ``guide.<stem>``, breaks the package's rules."""
    errors: list[str] = []
    masked = _mask(text)
    public, private = f"guide_{stem}_", f"_guide_{stem}_"
    begin = 0
    for pos in [m.start() for m in re.finditer(";", masked)] + [len(masked)]:
        stmt_start = begin + len(masked[begin:pos]) - len(masked[begin:pos].lstrip())
        code = masked[begin:pos].strip()
        begin = pos + 1
        if not code:
            continue
        line = text.count("\n", 0, stmt_start) + 1
        include = _INCLUDE.match(code)
        if include:
            target = include.group(1)
            if known_modules is not None and target not in known_modules:
                errors.append(f"line {line}: includes {target}, which is no module")
            continue
        index = _INDEX.match(code)
        if index:
            name, table = index.group(1), index.group(2)
            where = f"line {line}: index {name}"
            if not (name.startswith((public, private)) and name.endswith("_idx")):
                errors.append(f"{where}: name it {public}..._idx")
            if not re.search(rf"CREATE\s+PERFETTO\s+TABLE\s+{table}\b", masked[:stmt_start]):
                errors.append(f"{where}: {table} is not a table this module made above it")
            above = text[:stmt_start].rstrip("\n").splitlines()
            if not above or not above[-1].lstrip().startswith("--"):
                errors.append(f"{where}: no comment right above it")
            continue
        input_table = _INPUT_TABLE.match(code)
        if input_table:
            # A plain table a caller may fill before including the module (a PerfettoSQL table
            # cannot be written to): only the names listed, each with a comment above it.
            name = input_table.group(1)
            above = text[:stmt_start].rstrip("\n").splitlines()
            if name not in INPUT_TABLES:
                errors.append(f"line {line}: {name} is no input table listed in INPUT_TABLES")
            elif not above or not above[-1].lstrip().startswith("--"):
                errors.append(f"line {line}: input table {name}: no comment right above it")
            continue
        create = _CREATE.match(code)
        if not create:
            errors.append(
                f"line {line}: only INCLUDE PERFETTO MODULE, CREATE PERFETTO "
                f"TABLE/VIEW/FUNCTION/MACRO and CREATE PERFETTO INDEX statements may appear: "
                f"{code[:60]!r}"
            )
            continue
        kind, name = create.group(1).upper(), create.group(2)
        where = f"line {line}: {kind.lower()} {name}"
        if not (name.startswith(public) or name.startswith(private)):
            errors.append(f"{where}: name it {public}... (or {private}... for a private helper)")
        above = text[:stmt_start].rstrip("\n").splitlines()
        if not above or not above[-1].lstrip().startswith("--"):
            errors.append(f"{where}: no doc comment right above it")
        after = stmt_start + create.end()
        if masked[after : after + 1] != "(":
            errors.append(f"{where}: no parenthesised schema or argument list")
            continue
        close = _closing(masked, after)
        if close < 0:
            errors.append(f"{where}: unbalanced parentheses")
            continue
        what = "column" if kind in ("TABLE", "VIEW") else "argument"
        for item_text, item_code in _items(text, masked, after + 1, close):
            parts = item_code.split(None, 1)
            if len(parts) != 2:
                errors.append(f"{where}: cannot read {what} {item_code!r} as 'name TYPE'")
                continue
            column, typ = parts[0], parts[1].replace(" ", "")
            if not _comment_lines(item_text):
                errors.append(f"{where}: {what} {column} has no comment above it")
            if not _type_ok(kind, typ):
                errors.append(f"{where}: {what} {column} has type {typ}, not one allowed")
                continue
            if kind in ("TABLE", "VIEW"):
                time_error = _time_type_error(column, typ)
                if time_error:
                    errors.append(f"{where}: {time_error}")
            if kind != "MACRO":
                id_error = _id_type_error(column, typ, what)
                if id_error:
                    errors.append(f"{where}: {id_error}")
        if kind in ("FUNCTION", "MACRO"):
            returns = _RETURNS.match(masked, close + 1)
            if not returns:
                errors.append(f"{where}: no 'RETURNS <type> AS' after the arguments")
                continue
            if not _comment_lines(text[close + 1 : returns.start(1)]):
                errors.append(f"{where}: no comment on its return value above RETURNS")
            if not _type_ok(kind, returns.group(1)):
                errors.append(f"{where}: returns type {returns.group(1)}, not one allowed")
    return errors


MODULES = sorted(SQL_DIR.rglob("*.sql"))
KNOWN = {"guide." + ".".join(p.relative_to(SQL_DIR).with_suffix("").parts) for p in MODULES}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_module_follows_the_rules(path: Path) -> None:
    stem = "_".join(path.relative_to(SQL_DIR).with_suffix("").parts)
    assert check_module(path.read_text(), stem, KNOWN) == []


ROOT = SQL_DIR.parents[1]
_DEFINED = re.compile(r"^CREATE\s+PERFETTO\s+(?:TABLE|VIEW|FUNCTION|MACRO)\s+(\w+)", re.M)


def _user_texts() -> dict[Path, str]:
    """Every file that may use a module object: queries, detectors, other modules and Python
    under generators/, the pages and notebooks under docs/, and the tests. Prose that only names
    an object (READMEs, ARCHITECTURE.md) is not a use, and neither is this checker."""
    files = [p for p in (ROOT / "generators").rglob("*") if p.suffix in (".sql", ".py")]
    files += [p for p in (ROOT / "docs").rglob("*") if p.suffix in (".md", ".ipynb")]
    files += [p for p in (ROOT / "tests").rglob("*") if p.suffix in (".sql", ".py")]
    return {p: p.read_text() for p in files if p.is_file() and p != Path(__file__).resolve()}


def usage_errors(module: Path, users: dict[Path, str]) -> list[str]:
    """A public object with no user outside its module (make it private: `_guide_...`), and a
    private one that a query, detector, page or other module uses (make it public). A test may
    probe a private helper, as Perfetto's own diff tests do."""
    errors = []
    for name in _DEFINED.findall(module.read_text()):
        word = re.compile(rf"(?<!\w){re.escape(name)}\b")
        used_by = [p for p, text in users.items() if p != module and word.search(text)]
        if not name.startswith("_") and not used_by:
            errors.append(f"{name}: nothing outside {module.name} uses it: name it _{name}")
        not_tests = [p.relative_to(ROOT) for p in used_by if not p.is_relative_to(ROOT / "tests")]
        if name.startswith("_") and not_tests:
            errors.append(f"{name} is private, but {', '.join(map(str, not_tests))} use it")
    return errors


@pytest.fixture(scope="module")
def users() -> dict[Path, str]:
    return _user_texts()


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_public_objects_have_users_outside_their_module(path: Path, users: dict[Path, str]) -> None:
    assert usage_errors(path, users) == []


GOOD = """-- A module.
INCLUDE PERFETTO MODULE guide.kineto;

-- Slices.
CREATE PERFETTO TABLE guide_m_slice(
  -- Slice id.
  id ID(slice.id),
  -- Enclosing slice.
  parent_id JOINID(slice.id),
  -- Argument set.
  arg_set_id ARGSETID,
  -- Start (ns).
  ts TIMESTAMP,
  -- Duration (ns), with a comma, a (parenthesis) and a ; in the comment.
  dur DURATION
) AS
SELECT id, parent_id, arg_set_id, ts, dur FROM slice WHERE name != 'a;b(';

-- Slices looked up by parent.
CREATE PERFETTO INDEX guide_m_slice_parent_idx ON guide_m_slice(parent_id);

-- Slices looked up by time.
CREATE PERFETTO INDEX guide_m_slice_ts_idx ON guide_m_slice(ts, dur);

-- Doubles a number.
CREATE PERFETTO FUNCTION _guide_m_twice(
  -- The number.
  x LONG,
  -- A slice, unused.
  slice_id JOINID(slice.id)
)
-- Twice x.
RETURNS LONG AS
SELECT 2 * $x;

-- The rows of a table.
CREATE PERFETTO MACRO guide_m_all(
  -- Any table.
  t TableOrSubquery
)
-- Its rows.
RETURNS TableOrSubquery AS
(SELECT * FROM $t);
"""


def test_a_good_module_passes() -> None:
    assert check_module(GOOD, "m", {"guide.kineto"}) == []


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (("-- Slices.\nCREATE", "SELECT 1;\n\n-- Slices.\nCREATE"), "only INCLUDE"),
        (("guide.kineto", "guide.nowhere"), "which is no module"),
        (("guide_m_slice", "guide_other_slice"), "name it guide_m_"),
        (("_guide_m_twice", "guide_twice"), "name it guide_m_"),
        (("-- Slices.\n", "\n"), "no doc comment"),
        (("  -- Slice id.\n", ""), "column id has no comment"),
        (("  ts TIMESTAMP", "  ts LONG"), "column ts is a timestamp"),
        (("  dur DURATION", "  dur LONG"), "column dur is a duration"),
        (("  id ID(slice.id),", "  id INTEGER,"), "column id has type INTEGER"),
        (("  id ID(slice.id),", "  id LONG,"), "column id is an id: type it ID"),
        (("parent_id JOINID(slice.id)", "parent_id LONG"), "column parent_id is an id"),
        (("arg_set_id ARGSETID", "arg_set_id LONG"), "arg_set_id is an argument set"),
        (("slice_id JOINID(slice.id)", "slice_id LONG"), "argument slice_id is an id"),
        (("  -- The number.\n", ""), "argument x has no comment"),
        (("-- Twice x.\n", ""), "no comment on its return value"),
        (("  -- Any table.\n", ""), "argument t has no comment"),
        (("-- Its rows.\n", ""), "no comment on its return value"),
        (("t TableOrSubquery", "t LONG"), "argument t has type LONG"),
        (("RETURNS LONG AS", "RETURNS INT AS"), "returns type INT"),
        (("INDEX guide_m_slice_parent_idx", "INDEX slice_parent_idx"), "index slice_parent_idx"),
        (("INDEX guide_m_slice_parent_idx", "INDEX guide_m_slice_parent"), "name it guide_m_"),
        (("ON guide_m_slice(parent_id)", "ON slice(parent_id)"), "not a table this module made"),
        (("-- Slices looked up by parent.\n", ""), "no comment right above it"),
    ],
)
def test_a_bad_module_fails(change: tuple[str, str], error: str) -> None:
    old, new = change
    assert old in GOOD
    errors = check_module(GOOD.replace(old, new, 1), "m", {"guide.kineto"})
    assert any(error in e for e in errors), errors


# Include hygiene, for every SQL file that includes modules (the modules themselves, the derive's
# queries, the doctor's detectors and the SQL cases), as Perfetto's own checker holds its stdlib
# to: each file includes, itself, every module whose objects it uses, and nothing it does not. A
# file that works only because another include brings a module along breaks when that include
# changes; an include nothing uses costs its tables' time on every trace.
QUERY_DIR = ROOT / "generators" / "queries"
DETECTOR_DIR = ROOT / "generators" / "detectors"
CASE_DIR = ROOT / "tests" / "sql_cases"
INCLUDING = (
    MODULES
    + sorted(QUERY_DIR.glob("*.sql"))
    + sorted(DETECTOR_DIR.glob("*.sql"))
    + sorted(CASE_DIR.rglob("*.sql"))
)
_INCLUDES = re.compile(r"^INCLUDE\s+PERFETTO\s+MODULE\s+guide\.([\w.]+)\s*;", re.M)
_OBJECT_NAME = re.compile(r"\b_?guide_\w+")
_CREATED = re.compile(r"^CREATE\s+PERFETTO\s+(?:TABLE|VIEW|FUNCTION|MACRO|INDEX)\s+(\w+)", re.M)


def module_objects(modules: list[Path] = MODULES) -> dict[str, str]:
    """Each object a module creates (tables, views, functions, macros, indexes) -> its module."""
    owner = {}
    for path in modules:
        module = ".".join(path.relative_to(SQL_DIR).with_suffix("").parts)
        for name in re.findall(
            r"^CREATE\s+PERFETTO\s+(?:TABLE|VIEW|FUNCTION|MACRO|INDEX)\s+(\w+)",
            path.read_text(),
            re.M,
        ):
            owner[name] = module
    return owner


def include_errors(text: str, owner: dict[str, str]) -> list[str]:
    """The modules a file uses without including them, and those it includes without using."""
    code = _mask(text)
    own = set(_CREATED.findall(text))
    used = {owner[w] for w in _OBJECT_NAME.findall(code) if w in owner and w not in own}
    included = _INCLUDES.findall(text)
    errors = [f"uses guide.{m} without including it" for m in sorted(used - set(included))]
    errors += [f"includes guide.{m} but uses nothing of it" for m in included if m not in used]
    return errors


@pytest.fixture(scope="module")
def owner() -> dict[str, str]:
    return module_objects()


@pytest.mark.parametrize("path", INCLUDING, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_file_includes_what_it_uses_and_nothing_else(path: Path, owner: dict[str, str]) -> None:
    assert include_errors(path.read_text(), owner) == []


def test_the_include_check_fails_on_a_missing_or_unused_include(owner: dict[str, str]) -> None:
    query = "INCLUDE PERFETTO MODULE guide.windows;\nSELECT * FROM guide_kineto_gpu_activity;\n"
    assert include_errors(query, owner) == [
        "uses guide.kineto without including it",
        "includes guide.windows but uses nothing of it",
    ]
    # A name in a comment or a string is not a use.
    quiet = (
        "INCLUDE PERFETTO MODULE guide.kineto;\n-- guide_windows_loop\nSELECT 'guide_windows_loop'"
    )
    assert include_errors(quiet + " FROM guide_kineto_gpu_activity;\n", owner) == []
