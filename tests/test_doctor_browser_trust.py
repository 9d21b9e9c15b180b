"""The browser page's trust tab (generators/doctor/browser.py's trust_query) against the command
line's trust gate, on the traces the command line's own tests use for each line: the vendored
reference traces, the synthetic doctor traces, and the fuzz corpus's mutations of a real trace
(tests/test_doctor_fuzz.py). The page's scan of the file's bytes is checked against the command
line's in tests/browser/test_doctor_browser.py; here its table is made from the command line's
own reading of the file (file_check_table_sql), so the query is what is tested.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from generators.doctor.browser import browser_plan, file_check_table_sql
from generators.doctor.detectors import load_detectors
from generators.doctor.examine import Report, examine
from generators.doctor.trust import check_file, world_size
from generators.doctor.trust_lines import TEXTS
from generators.tp import open_trace, rows_of
from tests import reference_traces as ref
from tests import test_doctor_fuzz as fuzz

SYNTHETIC = Path(__file__).resolve().parent / "data" / "doctor-traces"
#: The mutations the command line reports with a trust line (the others it refuses, or reads
#: as the intact trace).
MUTATIONS = [case for case, c in fuzz.CASES.items() if c.trust is not None]
TRACES = [p.name for p in ref.all_traces()] + [p.name for p in sorted(SYNTHETIC.glob("*.json"))]
#: Lines the page words, or splits, its own way: it counts the dropped events without telling
#: them apart, and names a cold first step on a line of its own beside "steps", which it gives
#: for one or two steps only (the command line's "steps" line also says how many there are).
OWN_WORDING = {"dropped-events", "steps", "cold-step"}


@pytest.fixture(scope="module")
def mutated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    raw = gzip.decompress(fuzz.BASE.read_bytes())
    folder = tmp_path_factory.mktemp("mutated")
    out = {}
    for case in MUTATIONS:
        path = folder / f"{case}.json"
        path.write_bytes(fuzz.CASES[case].make(json.loads(raw), raw))
        out[case] = path
    return out


def _path(name: str, mutated: dict[str, Path]) -> Path:
    if name in mutated:
        return mutated[name]
    found = ref.REFERENCE_TRACES / name
    return found if found.exists() else SYNTHETIC / name


_seen: dict[Path, tuple[Report, dict[str, dict[str, list[Any]]]]] = {}


def _both(path: Path) -> tuple[Report, dict[str, dict[str, list[Any]]]]:
    """The command line's report as the page sees the trace (dropped events not read again),
    and the page's trust rows by check id, per language."""
    if path not in _seen:
        detectors = load_detectors()
        with open_trace(path) as tp:
            report = examine(tp, path, detectors, read_dropped=False)
        rows: dict[str, dict[str, list[Any]]] = {}
        with open_trace(path) as tp:
            table = file_check_table_sql(check_file(path), world_size(path))
            tp.query(table + "\n" + browser_plan("https://x.test/", detectors)["definitions"])
            for lang in ("en", "ja"):
                _, found = rows_of(
                    tp, browser_plan("https://x.test/", detectors, lang=lang)["trust"]
                )
                rows[lang] = {r[0]: list(r[1:]) for r in found}
        _seen[path] = (report, rows)
    return _seen[path]


@pytest.mark.parametrize("name", TRACES + MUTATIONS)
def test_the_page_and_the_command_line_give_the_same_trust_lines(
    name: str, mutated: dict[str, Path]
) -> None:
    report, rows = _both(_path(name, mutated))
    cli = {lim.id: lim for lim in report.limitations}
    assert set(cli) - OWN_WORDING == set(rows["en"]) - OWN_WORDING, (
        sorted(cli),
        sorted(rows["en"]),
    )
    assert set(rows["en"]) == set(rows["ja"])
    for line_id, lim in cli.items():
        if line_id in OWN_WORDING:
            continue
        # The same words in both languages, and the same detectors named.
        assert rows["en"][line_id][0] == lim.text, line_id
        assert rows["ja"][line_id][0] == lim.text_ja, line_id
        for lang, separator in (("en", ", "), ("ja", "、")):  # as the command line lists them
            named = {d for d in rows[lang][line_id][1].split(separator) if d}
            assert named == set(lim.skipped) | set(lim.weakens), (lang, line_id)


def test_every_line_the_page_adds_is_shown_on_a_real_trace(mutated: dict[str, Path]) -> None:
    """The corpus above holds every line the page shares with the command line (so none of
    them is compared on no trace at all)."""
    shown = set()
    for name in TRACES + MUTATIONS:
        shown |= set(_both(_path(name, mutated))[1]["en"])
    # Not here: a scan stopped short (below), MTIA events (no vendored trace holds any), GPU
    # work with no launch tie at all (the unlisted GPU's trace ties them by correlation id).
    absent = {"file-check-partial", "importer", "accelerator-not-read", "no-flows"}
    lines = {key.split("/")[0] for key in TEXTS} - absent
    assert lines <= shown, sorted(lines - shown)
    assert any(line.startswith("importer-") for line in shown)


def test_a_file_check_that_stopped_short_says_so() -> None:
    """No real trace stops the page's scan short (the page refuses a file it cannot inflate):
    the line from a scan that did, with the reason quoted as text."""
    checked = check_file(ref.A100_TRITON)
    checked.error = "it's cut short"
    plan = browser_plan("https://x.test/")
    with open_trace(ref.A100_TRITON) as tp:
        tp.query(file_check_table_sql(checked, None) + "\n" + plan["definitions"])
        _, found = rows_of(tp, plan["trust"])
    lines = {r[0]: r[1] for r in found}
    assert "(it's cut short)" in lines["file-check-partial"]
