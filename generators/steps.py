"""The registry of tutorial steps: the one table that joins workloads, queries, figures and pages.

A step's slug is the join key everywhere: ``generators/workloads/<slug>.py``,
``artifacts/<device>/<slug>/``, and the ``step`` argument of every page placeholder.
Variant names are device-independent ("small", "large"): the arguments behind a name may differ
per device (CPU captures use smaller sizes so the CPU set stays quick to capture), and a variant
whose concept only exists on a GPU has no CPU arguments at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEVICES = ("cuda", "cpu")


class UnknownStepError(KeyError):
    """Raised for a step or variant name that the registry does not know."""

    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])


@dataclass(frozen=True)
class Variant:
    """One configuration of a workload, captured into one trace per device."""

    name: str
    description: str
    args: tuple[str, ...] = ()
    #: Extra arguments on CPU; ``None`` means the variant needs CUDA and has no CPU capture.
    cpu_args: tuple[str, ...] | None = ()
    cuda_args: tuple[str, ...] = ()

    def args_for(self, device: str) -> tuple[str, ...] | None:
        """The workload's command-line arguments on ``device``, or None if it cannot run there."""
        if device == "cpu":
            return None if self.cpu_args is None else (*self.args, *self.cpu_args)
        if device == "cuda":
            return (*self.args, *self.cuda_args)
        raise ValueError(f"unknown device {device!r}; expected one of {', '.join(DEVICES)}")

    @property
    def needs_cuda(self) -> bool:
        return self.cpu_args is None


@dataclass(frozen=True)
class Figure:
    """A figure: ``generators/figures/<name>.py`` drawn from the rows of query ``data``."""

    name: str
    data: str
    variants: tuple[str, ...]


@dataclass(frozen=True)
class Step:
    slug: str
    title: str
    page: str
    variants: tuple[Variant, ...]
    #: Query names (``generators/queries/<name>.sql``) run on every variant's trace.
    queries: tuple[str, ...]
    figures: tuple[Figure, ...] = field(default=())

    @property
    def workload_module(self) -> str:
        return f"generators.workloads.{self.slug}"

    @property
    def workload_path(self) -> Path:
        return REPO_ROOT / "generators" / "workloads" / f"{self.slug}.py"

    def variant(self, name: str) -> Variant:
        for variant in self.variants:
            if variant.name == name:
                return variant
        known = ", ".join(v.name for v in self.variants)
        raise UnknownStepError(
            f"step {self.slug!r} has no variant {name!r}; its variants are: {known}"
        )

    def variants_for(self, device: str) -> tuple[Variant, ...]:
        return tuple(v for v in self.variants if v.args_for(device) is not None)


_REGISTRY: list[Step] = []


def register(step: Step) -> Step:
    if any(s.slug == step.slug for s in _REGISTRY):
        raise ValueError(f"step {step.slug!r} is registered twice")
    _REGISTRY.append(step)
    return step


# ---- Part 1: a matmul and a bias add ------------------------------------------------------------
register(
    Step(
        slug="matmul_add",
        title="A matmul and a bias add",
        page="part-1/01-first-trace.md",
        variants=(
            Variant(
                name="small_cold",
                description="64 x 64 fp32, eager, no warm-up before the profiler starts",
                args=("--size", "64", "--dtype", "fp32"),
            ),
        ),
        queries=("ops", "step_summary", "steps", "timeline"),
        figures=(Figure(name="timeline", data="timeline", variants=("small_cold",)),),
    )
)

# ---- Part 2: nn.Linear and a fused MLP (steps linear, mlp) --------------------------------------
# (part 2 steps)

# ---- Part 3: attention (step attention) ---------------------------------------------------------
# (part 3 steps)

# ---- Part 4: a small LLM generating tokens (step llm) -------------------------------------------
# (part 4 steps)

STEPS: tuple[Step, ...] = tuple(_REGISTRY)


def get_step(slug: str) -> Step:
    for step in STEPS:
        if step.slug == slug:
            return step
    known = ", ".join(s.slug for s in STEPS)
    raise UnknownStepError(f"unknown step {slug!r}; known steps: {known}")


def select_steps(slug: str | None) -> tuple[Step, ...]:
    """All steps, or the one named (``STEP=slug`` on the make command line)."""
    return STEPS if not slug else (get_step(slug),)
