"""No measurement is typed into a page: numbers with units come from placeholders only.

Scans every page's prose in both editions (outside code blocks, inline code, placeholders and
HTML comments) for a number followed by a time, percent or byte unit. Exceptions live in
``tests/number_allowlist.txt``, one per line as ``<page>: <exact text>  # <reason>``.
"""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
# The Japanese edition's pages, named ``ja/<page>`` in the allow-list.
EDITIONS = {"": DOCS, "ja/": REPO / "docs-ja"}
ALLOWLIST = Path(__file__).with_name("number_allowlist.txt")
UNITS = (
    r"(?:ns|µs|us|ms|s|sec|seconds?|minutes?|%|percent|B|KB|MB|GB|TB|KiB|MiB|GiB|TiB|bytes?"
    r"|TFLOP/s|TFLOPS|GB/s|TB/s)"
)
MEASUREMENT = re.compile(rf"(?<![\w.])\d[\d,.]*\s*(?:×\s*)?{UNITS}(?![\w/])")


def prose(markdown: str) -> str:
    # Fenced code, also indented inside admonitions and lists.
    text = re.sub(r"^[ \t]*(```|~~~).*?^[ \t]*\1", "", markdown, flags=re.S | re.M)
    text = re.sub(r"\{\{.*?\}\}", "", text, flags=re.S)  # placeholders
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)  # inline code
    return text


def allowlist() -> set[tuple[str, str]]:
    allowed = set()
    for line in ALLOWLIST.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        entry, _, reason = line.partition("  # ")
        assert reason.strip(), f"allow-list entry without a reason: {line!r}"
        page, _, text = entry.partition(": ")
        allowed.add((page.strip(), text.strip()))
    return allowed


def find_measurements(markdown: str) -> list[str]:
    return [m.group(0) for m in MEASUREMENT.finditer(prose(markdown))]


def test_detector_catches_typed_numbers() -> None:
    sample = (
        "The kernel took 12.5 µs, 3 ms or 40% of 2 GiB.\n```\n99 ms in code\n```\n{{ value(1) }}"
    )
    assert find_measurements(sample) == ["12.5 µs", "3 ms", "40%", "2 GiB"]


def test_pages_have_no_hand_typed_measurements() -> None:
    allowed = allowlist()
    found = []
    for prefix, docs in EDITIONS.items():
        for page in sorted(docs.rglob("*.md")):
            rel = prefix + page.relative_to(docs).as_posix()
            for hit in find_measurements(page.read_text()):
                # A translation may keep what its English page is allowed to say.
                english = rel.removeprefix("ja/")
                if (rel, hit) not in allowed and (english, hit) not in allowed:
                    found.append(f"{rel}: {hit}")
    assert not found, "numbers with units typed into pages (use a placeholder):\n" + "\n".join(
        found
    )
