"""The SQL behind a number: a query file and every ``guide.*`` module object it relies on.

Pages show, under each table, the query that produced it and the definitions of the module
objects it uses (directly or through other objects), read from the files at build time, so the
SQL a reader sees is always the SQL that ran.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SQL_DIR = Path(__file__).resolve().parent / "sql"

_CREATE = re.compile(
    r"^CREATE\s+PERFETTO\s+(?P<kind>TABLE|VIEW|FUNCTION|MACRO|INDEX)\s+(?P<name>\w+)", re.I
)
_IDENT = re.compile(r"\b(_?guide_\w+)\b")


@dataclass(frozen=True)
class ModuleObject:
    module: str  # e.g. "guide.launch"
    name: str  # e.g. "guide_launch_chain"
    kind: str  # TABLE, VIEW, FUNCTION, MACRO or INDEX
    path: Path
    text: str  # its doc comment and definition, as written in the module


def _module_name(path: Path, root: Path) -> str:
    return "guide." + ".".join(path.relative_to(root).with_suffix("").parts)


def parse_module(path: Path, root: Path = SQL_DIR) -> list[ModuleObject]:
    """The objects a module file defines, each with the comment block right above it."""
    lines = path.read_text().splitlines()
    starts: list[tuple[int, int, re.Match[str]]] = []  # (first comment line, CREATE line, match)
    for i, line in enumerate(lines):
        match = _CREATE.match(line)
        if match:
            first = i
            while first > 0 and lines[first - 1].startswith("--"):
                first -= 1
            starts.append((first, i, match))
    objects = []
    for n, (first, _, match) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        text = "\n".join(lines[first:end]).strip()
        objects.append(
            ModuleObject(_module_name(path, root), match["name"], match["kind"].upper(), path, text)
        )
    return objects


@cache
def catalog(root: Path = SQL_DIR) -> dict[str, ModuleObject]:
    """Every object of every module in the package, by name."""
    objects: dict[str, ModuleObject] = {}
    for path in sorted(root.rglob("*.sql")):
        for obj in parse_module(path, root):
            objects[obj.name] = obj
    return objects


def _body_without_comments(text: str) -> str:
    return "\n".join(line.split("--", 1)[0] for line in text.splitlines())


def objects_used(sql: str, root: Path = SQL_DIR) -> list[ModuleObject]:
    """The module objects ``sql`` refers to, and those they refer to, dependencies first."""
    known = catalog(root)
    ordered: list[ModuleObject] = []
    seen: set[str] = set()

    def visit(text: str, own: str | None) -> None:
        for name in dict.fromkeys(_IDENT.findall(_body_without_comments(text))):
            if name == own or name in seen or name not in known:
                continue
            seen.add(name)
            visit(known[name].text, name)
            ordered.append(known[name])

    visit(sql, None)
    return ordered
