"""`make screenshots` works: one screenshot of the Perfetto UI made for real, into a scratch folder.

It runs in the session's Chromium (a second Playwright in the same process is refused), and
checks the picture and that the UI drew the same slices where the committed shot has them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from generators import perfetto_shots

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser


def test_the_command_makes_a_screenshot(tmp_path: Path, chromium: Browser) -> None:
    manifest = perfetto_shots.make(["one-step"], out_dir=tmp_path, browser=chromium)
    entry = manifest["shots"]["one-step"]
    assert perfetto_shots.png_size(tmp_path / entry["file"]) == (entry["width"], entry["height"])
    assert [c["number"] for c in entry["callouts"]] == [1, 2, 3, 4]
    committed = json.loads(perfetto_shots.MANIFEST.read_text())["shots"]["one-step"]
    # The same trace and window: the UI draws the same slices in the same places.
    for new, old in zip(entry["callouts"], committed["callouts"], strict=True):
        assert abs(new["x"] - old["x"]) < 3 and abs(new["y"] - old["y"]) < 3
