"""Read the artifacts a page shows, the way the site's hook picks them, for claim tests.

A page shows the CUDA capture of a variant when there is one, else the CPU capture. A claim test
checks what the prose says against exactly that artifact, so when the CUDA set lands the same
tests run against it (and fail loudly if the prose no longer holds).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "artifacts"


def manifest(device: str) -> dict | None:
    path = ARTIFACTS / device / "MANIFEST.json"
    return json.loads(path.read_text()) if path.exists() else None


def shown_device(step: str, variant: str, *, cpu_ok: bool = True) -> str | None:
    """The device set whose artifact the page shows for this variant (None: needs CUDA)."""
    for device in ("cuda", "cpu") if cpu_ok else ("cuda",):
        m = manifest(device)
        if m and variant in m.get("variants", {}).get(step, {}):
            return device
    return None


def variant_dir(step: str, variant: str, *, cpu_ok: bool = True) -> Path:
    device = shown_device(step, variant, cpu_ok=cpu_ok)
    assert device, f"no artifact for {step}/{variant} (cpu_ok={cpu_ok})"
    return ARTIFACTS / device / step / variant


def values(step: str, variant: str, *, cpu_ok: bool = True) -> dict[str, dict[str, object]]:
    return json.loads((variant_dir(step, variant, cpu_ok=cpu_ok) / "values.json").read_text())


def table(step: str, variant: str, query: str, *, cpu_ok: bool = True) -> list[dict[str, str]]:
    path = variant_dir(step, variant, cpu_ok=cpu_ok) / f"{query}.csv"
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def capture_record(step: str, variant: str, *, cpu_ok: bool = True) -> dict:
    return json.loads((variant_dir(step, variant, cpu_ok=cpu_ok) / "capture.json").read_text())
