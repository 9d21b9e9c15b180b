"""Execute companion notebooks on the CPU, top to bottom, and record what each printed.

``python -m tests.notebook_run FOLDER STEM...`` runs ``docs/notebooks/<stem>.ipynb`` one after
another and writes ``FOLDER/<stem>.json`` for each as it finishes (written whole, then renamed
into place): its error outputs and all the text it printed. The test run starts it in the
background (tests/background.py); ``tests/test_notebooks.py`` checks the outcomes.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "docs" / "notebooks"
#: The longest a notebook cell may run (a training capture on two busy cores takes about a minute).
CELL_TIMEOUT_S = 300


def execute(path: Path) -> tuple[list[dict], str]:
    """Run the notebook on the CPU, top to bottom: its error outputs, and all the text it printed
    (runs of white space as one space)."""
    notebook = nbformat.read(path, as_version=4)
    # The notebooks capture on CUDA when there is one; the test pins the CPU, as on the site.
    notebook.cells.insert(
        0, nbformat.v4.new_code_cell("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = ''")
    )
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO)}},
    )
    client.execute()
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    text = "".join(
        output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", [])
    )
    return errors, " ".join(text.split())


def main(folder: Path, stems: list[str]) -> int:
    for stem in stems:
        try:
            errors, text = execute(NOTEBOOKS / f"{stem}.ipynb")
            outcome = {"errors": errors, "text": text}
        except Exception:  # the kernel died, a cell timed out: the test reports it
            outcome = {"errors": [{"traceback": traceback.format_exc()}], "text": ""}
        part = folder / f"{stem}.json.part"
        part.write_text(json.dumps(outcome))
        part.replace(folder / f"{stem}.json")
        print(f"{stem}: {len(outcome['errors'])} errors", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))
