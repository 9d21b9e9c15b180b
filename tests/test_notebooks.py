"""Companion notebooks are runnable: each one is executed on the CPU, top to bottom.

Each notebook also has its own check: text that its key query prints only when it found what the
notebook's Markdown tells the reader to look at. The notebooks are stored without outputs, so the
committed files do not change from one run to the next, and each is in the site's navigation.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tests import background

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
NOTEBOOKS = sorted((DOCS / "notebooks").glob("*.ipynb"))
#: What a notebook prints for a query whose header says ``-- needs: cuda``, on a CPU trace.
SKIPPED = "Skipped: its header says `needs: cuda`"

#: Notebook stem -> text its output must hold on a CPU run (runs of white space compared as one
#: space, so that a table's column widths do not matter), and the query that prints it.
FOUND: dict[str, tuple[str, ...]] = {
    # Part 1's trace query: the GEMM of the matmul.
    "part-1-first-trace": ("aten::mm",),
    # linear_chain: aten::linear calls addmm, which expands the bias with stride 0 on a CPU;
    # mlp_work: the eager block's GELU is an operator of its own.
    "part-2-linear-and-mlp": ("aten::addmm", "[1024, 64] / [0, 1]", "aten::gelu"),
    # attention_copies: the clone under the out-of-place masked_fill; attention_kernels skipped.
    "part-3-attention": ("aten::masked_fill aten::clone", SKIPPED),
    # llm_attention: the CPU's SDPA backend; llm_decode_kernels skipped.
    "part-4-small-llm": ("aten::_scaled_dot_product_flash_attention_for_cpu", SKIPPED),
    # train_optimizer_ops: the tuned loop's fused AdamW; train_copies skipped.
    "part-5-training": ("aten::_fused_adamw_", SKIPPED),
}


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS


def test_every_notebook_has_its_own_check() -> None:
    assert sorted(FOUND) == [path.stem for path in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.id
    # Byte for byte as nbformat writes it, so that saving from Jupyter changes nothing else.
    assert path.read_text() == nbformat.writes(notebook) + "\n"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_in_the_nav_and_links_to_pages(path: Path) -> None:
    assert f": notebooks/{path.name}\n" in (REPO / "mkdocs.yml").read_text()
    notebook = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    # A notebook is served at notebooks/<stem>/, so ../../<page>/ is the page docs/<page>.md.
    links = re.findall(r"\]\(\.\./\.\./([^)#]+)/\)", text)
    assert links, "the notebook does not link to its page"
    for link in links:
        assert (DOCS / f"{link}.md").is_file(), link


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_on_cpu(path: Path) -> None:
    """Each notebook executed in a kernel of its own, in the background from the start of the run
    (tests/background.py, tests/notebook_run.py); the test checks what it printed."""
    outcome = background.notebook_outcome(path.stem)
    errors, text = outcome["errors"], str(outcome["text"])
    assert not errors, errors
    for found in FOUND[path.stem]:
        assert found in text, f"{path.stem}: its key query did not print {found!r}"
