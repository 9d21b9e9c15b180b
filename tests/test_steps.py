"""The registry is the join key of the whole pipeline: everything it names must exist."""

import importlib

import pytest

from generators.figures import short_kernel_name
from generators.queries import QUERIES_DIR, load_query
from generators.steps import (
    EVERY_TRACE_QUERIES,
    STEPS,
    UnknownStepError,
    get_step,
    select_steps,
)

REPO = QUERIES_DIR.parents[1]


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.slug)
def test_step_sources_exist(step) -> None:
    assert step.workload_path.exists(), step.workload_path
    assert step.pages, f"step {step.slug} names no page"
    for page in step.pages:
        text = (REPO / "docs" / page).read_text(encoding="utf-8")
        # A page that presents a step shows at least one of its artifacts.
        assert f'("{step.slug}"' in text, f"{page} shows nothing of step {step.slug}"
    names = [v.name for v in step.variants]
    assert len(names) == len(set(names)), f"duplicate variant names in {step.slug}"
    for query in step.queries:
        assert load_query(query).question
    for figure in step.figures:
        module = importlib.import_module(f"generators.figures.{figure.name}")
        assert callable(module.draw)
        assert set(figure.variants) <= set(names)


def test_every_query_file_is_valid_and_used() -> None:
    used = {q for s in STEPS for q in (*s.queries, *(f.data for f in s.figures))}
    used |= {q for s in STEPS for v in s.variants for q in s.queries_for(v.name, "cuda")}
    for path in QUERIES_DIR.glob("*.sql"):
        load_query(path.stem)
        assert path.stem in used, f"{path.name} is not used by any step"


def test_unknown_step_is_named() -> None:
    with pytest.raises(UnknownStepError, match="unknown step 'nope'; known steps: matmul_add"):
        get_step("nope")
    with pytest.raises(UnknownStepError, match="has no variant 'huge'"):
        get_step("matmul_add").variant("huge")
    assert select_steps(None) == STEPS


def test_cuda_only_variants_are_marked_for_the_reader() -> None:
    """A variant without CPU arguments says so in its description (pages list descriptions)."""
    for step in STEPS:
        for variant in step.variants:
            if variant.needs_cuda:
                text = variant.description.lower()
                assert "gpu" in text or "cuda" in text, f"{step.slug}/{variant.name}"


def test_short_kernel_name_drops_templates() -> None:
    name = (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3>)"
    )
    assert short_kernel_name(name, limit=80) == "at::native::vectorized_elementwise_kernel<…>"


def test_every_variant_runs_the_every_trace_queries() -> None:
    """What the importer dropped is derived from every trace, whatever its step: the page warns
    beside each button that opens a trace with drops."""
    assert "trace_import" in EVERY_TRACE_QUERIES
    for step in STEPS:
        for variant in step.variants:
            for device in ("cuda", "cpu"):
                assert set(EVERY_TRACE_QUERIES) <= set(step.queries_for(variant.name, device))
