"""Questions asked of a trace: one PerfettoSQL file each, with a small header.

Each ``<name>.sql`` file starts with comment lines, then ``INCLUDE`` statements for our SQL
modules (``generators/sql``), then exactly one ``SELECT``::

    -- What does each operator cost on the CPU over the profiled steps?
    -- output: table            (table: CSV + Markdown; values: one row -> values.json)
    -- columns: name=Operator, calls=Calls, self_ns=Self time   (optional Markdown headers)
    -- shown: name, self_ns       (optional: the columns the page's table shows; the CSV has all)
    -- needs: cuda              (optional: only asked of CUDA traces, e.g. kernel resources)
    -- question_ja: 各演算子は CPU でどれだけかかるか     (the question, for the Japanese edition)
    -- columns_ja: name=演算子, calls=呼び出し回数, self_ns=自己時間   (the titles, in Japanese)
    INCLUDE PERFETTO MODULE guide.kineto;
    SELECT ...

The first comment line is the question; it is the table's caption on the page. The Japanese
edition shows ``question_ja`` and ``columns_ja`` instead: the translation sits beside what it
translates, and a query with ``columns`` must give every one of them a Japanese title.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

QUERIES_DIR = Path(__file__).resolve().parent
OUTPUTS = ("table", "values")
_HEADER = re.compile(r"^--\s*(?P<key>[a-z_]+):\s*(?P<value>.*)$")


class QueryFileError(ValueError):
    """A query file that does not follow the format above."""


@dataclass(frozen=True)
class Query:
    name: str
    path: Path
    question: str
    output: str
    column_titles: dict[str, str]
    sql: str
    #: Only meaningful on a GPU trace: derive skips it on the CPU set (pages use cpu=False).
    needs_cuda: bool = False
    #: The columns the Markdown table shows, in order (all when empty); the CSV keeps every one,
    #: so a wide result keeps its key numbers in view on a page.
    shown: tuple[str, ...] = ()
    #: The question and the column titles in Japanese (the Japanese edition's captions).
    question_ja: str = ""
    column_titles_ja: dict[str, str] | None = None

    def caption(self, lang: str) -> str:
        """The table's caption in the edition's language."""
        return self.question_ja if lang == "ja" and self.question_ja else self.question

    def sql_shown(self, lang: str) -> str:
        """The query's text as an edition shows it: its header without the other language's
        question and column titles (the SQL itself is the same in every edition)."""
        other = {"question", "columns"} if lang == "ja" and self.question_ja else set()
        other |= set() if lang == "ja" else {"question_ja", "columns_ja"}
        lines, in_header = [], True
        for i, line in enumerate(self.sql.splitlines()):
            in_header = in_header and line.startswith("--")
            match = _HEADER.match(line) if in_header else None
            key = "question" if in_header and i == 0 else (match["key"] if match else None)
            if key not in other:
                lines.append(line)
        return "\n".join(lines)

    def title(self, column: str, lang: str) -> str:
        """A column's title in the edition's language (its name when it has no title)."""
        if lang == "ja" and self.column_titles_ja and column in self.column_titles_ja:
            return self.column_titles_ja[column]
        return self.column_titles.get(column, column)


def load_query(name: str) -> Query:
    path = QUERIES_DIR / f"{name}.sql"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in QUERIES_DIR.glob("*.sql")))
        raise QueryFileError(f"no query file {path.name} in generators/queries (known: {known})")
    text = path.read_text()
    lines = text.splitlines()
    if not lines or not lines[0].startswith("-- "):
        raise QueryFileError(f"{path.name}: the first line must be a '-- question' comment")
    question = lines[0][3:].strip()
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if not line.startswith("--"):
            break
        match = _HEADER.match(line)
        if match:
            fields[match["key"]] = match["value"].strip()
    output = fields.get("output", "")
    if output not in OUTPUTS:
        raise QueryFileError(f"{path.name}: '-- output:' must be one of {', '.join(OUTPUTS)}")
    titles = _titles(fields.get("columns", ""))
    titles_ja = _titles(fields.get("columns_ja", ""))
    if titles_ja and set(titles_ja) != set(titles):
        raise QueryFileError(
            f"{path.name}: columns_ja must title exactly the columns that columns titles "
            f"(missing: {sorted(set(titles) - set(titles_ja))}, "
            f"unknown: {sorted(set(titles_ja) - set(titles))})"
        )
    body = "\n".join(line for line in lines if not line.startswith("--"))
    if not re.search(r"\bSELECT\b", body, re.I):
        raise QueryFileError(f"{path.name}: no SELECT statement")
    needs = fields.get("needs", "")
    if needs not in ("", "cuda"):
        raise QueryFileError(f"{path.name}: '-- needs:' can only be 'cuda'")
    shown = tuple(c.strip() for c in fields.get("shown", "").split(",") if c.strip())
    return Query(
        name,
        path,
        question,
        output,
        titles,
        text,
        needs_cuda=needs == "cuda",
        shown=shown,
        question_ja=fields.get("question_ja", ""),
        column_titles_ja=titles_ja or None,
    )


def _titles(spec: str) -> dict[str, str]:
    """``name=Title, other=Other title`` as a dict (titles hold no ASCII comma)."""
    titles: dict[str, str] = {}
    for pair in filter(str.strip, spec.split(",")):
        column, _, title = pair.partition("=")
        titles[column.strip()] = title.strip()
    return titles
