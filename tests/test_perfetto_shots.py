"""The screenshots of the Perfetto UI (generators/perfetto_shots.py) are current and shown.

A browser's pixels are not reproducible, so the committed screenshots are never compared with
new ones: they are current when the recorded hashes still match (the UI build, each trace, the
file that defines the shots). tests/browser/test_perfetto_shots_made.py makes one for real, into a
scratch folder, so that the command that refreshes them is known to work.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generators import perfetto_shots
from tests.test_site import hook, page_markdown

REPO = Path(__file__).resolve().parents[1]
PAGES = [p for root in ("docs", "docs-ja") for p in (REPO / root).rglob("*.md")]
SHOWN = re.compile(r'\{\{\s*screenshot\("([^"]+)"')


def _manifest() -> dict:
    return json.loads(perfetto_shots.MANIFEST.read_text())


def test_screenshots_are_current() -> None:
    problems = perfetto_shots.stale()
    assert not problems, "run `make screenshots`:\n  " + "\n  ".join(problems)


def test_every_screenshot_is_shown_and_every_shown_one_exists() -> None:
    shown = {name for page in PAGES for name in SHOWN.findall(page.read_text(encoding="utf-8"))}
    defined = {shot.name for shot in perfetto_shots.SHOTS}
    assert shown == defined
    assert len(defined) >= 6


def test_callouts_are_numbered_in_order_and_inside_their_picture() -> None:
    for name, entry in _manifest()["shots"].items():
        numbers = [c["number"] for c in entry["callouts"]]
        assert numbers == list(range(1, len(numbers) + 1)), name
        for c in entry["callouts"]:
            for x, y in ((c["x"], c["y"]), (c["label_x"], c["label_y"])):
                assert 0 <= x <= entry["width"] and 0 <= y <= entry["height"], (name, c)


def test_each_page_explains_every_callout_of_its_screenshots() -> None:
    """The numbered list right after a screenshot has one item per callout."""
    counts = {n: len(e["callouts"]) for n, e in _manifest()["shots"].items()}
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in SHOWN.finditer(text):
            after = text[text.index("}}", match.end()) + 2 :].lstrip("\n")
            items = re.match(r"(?:\d+\. .*\n(?:   .*\n)*)+", after)
            assert items, f"{page}: no numbered list after screenshot {match[1]}"
            listed = re.findall(r"^(\d+)\. ", items[0], re.M)
            assert listed == [str(i) for i in range(1, counts[match[1]] + 1)], (page, match[1])


def test_a_screenshot_renders_with_escaped_text_and_a_missing_one_is_named() -> None:
    html = page_markdown(hook, "perfetto-ui.md")
    assert 'class="pg-shot__callout"' in html and "artifacts/perfetto-ui/one-step.png" in html
    renderer = hook.Renderer({}, "x/", {"theme": {"language": "en"}, "extra": {}})
    call = hook.Call("screenshot", ("query",), {"alt": "<b>&", "caption": "<i>"}, "")
    assert 'alt="&lt;b&gt;&amp;"' in renderer.render(call)
    assert "<figcaption>&lt;i&gt; " in renderer.render(call)
    with pytest.raises(hook.PlaceholderError, match="no screenshot named 'nope'"):
        renderer.render(hook.Call("screenshot", ("nope",), {"alt": "x", "caption": "y"}, ""))


def test_a_stale_screenshot_is_named(tmp_path: Path) -> None:
    manifest = _manifest()
    entry = manifest["shots"]["one-step"]
    entry["trace_sha256"] = "0" * 64
    (tmp_path / "one-step.png").write_bytes((perfetto_shots.SHOTS_DIR / entry["file"]).read_bytes())
    path = tmp_path / "shots.json"
    path.write_text(json.dumps(manifest))
    problems = perfetto_shots.stale(path)
    assert any(p.startswith("one-step:") and "changed since" in p for p in problems)
    assert any("is missing" in p for p in problems)  # the other PNGs are not in tmp_path


def test_an_unknown_screenshot_is_refused() -> None:
    with pytest.raises(perfetto_shots.ShotError, match="unknown screenshot nope"):
        perfetto_shots.make(["nope"])
