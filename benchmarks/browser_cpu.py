"""CPU the browser tests' Chromium spends per page: the full browser against its headless build.

    .venv/bin/python benchmarks/browser_cpu.py            # builds both editions, 3 rounds
    .venv/bin/python benchmarks/browser_cpu.py --site site --rounds 5

Loads every page of both editions once in a 1280 × 900 window (the desktop tour of
tests/browser/tour.py, with its measurements), in each browser, the two interleaved round after
round. Counts the machine's busy CPU time over each tour from /proc/stat (every process of the
browser, whichever forked it: Playwright's own accounting misses the browser's children), and
its wall time. Run it on a quiet machine. Writes benchmarks/browser_cpu.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generators.perfetto_ui import static_servers  # noqa: E402
from tests.browser.conftest import CHROMIUM_ARGS, FULL_CHROMIUM_PATH, HEADLESS_SHELL_PATH  # noqa: E402
from tests.browser.tour import take_tour, tour_pages  # noqa: E402
from tests.serving import build_editions  # noqa: E402

OUT_JSON = REPO / "benchmarks" / "browser_cpu.json"
OUT_MD = REPO / "benchmarks" / "browser_cpu.md"
BROWSERS = {
    "chromium (full, headless)": FULL_CHROMIUM_PATH,
    "chromium-headless-shell": HEADLESS_SHELL_PATH,
}


def busy_seconds() -> float:
    """CPU time the whole machine has spent busy since boot (every core), in seconds."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--site", type=Path, help="a built site (both editions); default: build")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as scratch:
        site_dir = args.site or Path(scratch) / "site"
        if args.site is None:
            build_editions(site_dir, PROFILING_GUIDE_SITE_URL="")
        pages = tour_pages(site_dir)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in BROWSERS}
        with static_servers() as servers, sync_playwright() as playwright:
            site = servers.serve(site_dir) + "/"
            for round_ in range(args.rounds):
                for name, executable in BROWSERS.items():
                    browser = playwright.chromium.launch(
                        executable_path=str(executable), args=CHROMIUM_ARGS, headless=True
                    )
                    cpu, wall = busy_seconds(), time.perf_counter()
                    take_tour(browser, site, site_dir, pages)
                    run = {
                        "cpu_s": round(busy_seconds() - cpu, 1),
                        "wall_s": round(time.perf_counter() - wall, 1),
                    }
                    browser.close()
                    runs[name].append(run)
                    print(f"round {round_ + 1} {name}: {run}", flush=True)
    results = {
        "command": "python benchmarks/browser_cpu.py " + " ".join(sys.argv[1:]),
        "pages": len(pages),
        "cores": os.cpu_count(),
        "browsers": {
            name: {
                "runs": r,
                "median_cpu_s": statistics.median(x["cpu_s"] for x in r),
                "median_wall_s": statistics.median(x["wall_s"] for x in r),
            }
            for name, r in runs.items()
        },
    }
    OUT_JSON.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    lines = [
        "# CPU per tour of the site, by browser",
        "",
        f"Made by `{results['command'].strip()}` on {results['cores']} cores: every page of both "
        f"editions ({results['pages']} pages) loaded and measured once in a desktop window, as "
        "the browser tests' tour does; the browsers interleaved round after round. CPU: the "
        "machine's busy time over the tour, all cores, every process (read from /proc/stat).",
        "",
        "| browser | median CPU | median wall | runs (CPU s / wall s) |",
        "| --- | ---: | ---: | --- |",
    ]
    for name, b in results["browsers"].items():
        each = ", ".join(f"{x['cpu_s']} / {x['wall_s']}" for x in b["runs"])
        lines.append(f"| {name} | {b['median_cpu_s']} s | {b['median_wall_s']} s | {each} |")
    OUT_MD.write_text("\n".join(lines) + "\n")
    print(OUT_MD.read_text())


if __name__ == "__main__":
    main()
