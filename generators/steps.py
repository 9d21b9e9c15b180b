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
    #: Table/values queries for this variant only; None means the step's ``queries``. Every
    #: derived file must be shown by some page, so variants ask only the questions pages show.
    queries: tuple[str, ...] | None = None
    #: Extra queries derived only from this variant's CUDA trace (shown with ``cpu=False``).
    cuda_queries: tuple[str, ...] = ()

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
    #: The pages (under ``docs/``) that present this step, in reading order; a page may also
    #: quote another step's artifacts without being listed here.
    pages: tuple[str, ...]
    variants: tuple[Variant, ...]
    #: Query names (``generators/queries/<name>.sql``) run on every variant's trace.
    queries: tuple[str, ...]
    figures: tuple[Figure, ...] = field(default=())
    #: The title in the Japanese edition, whose figures name the step too (the English title
    #: when empty).
    title_ja: str = ""

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

    def queries_for(self, variant: str, device: str = "cuda") -> tuple[str, ...]:
        """The table/values queries derived for ``variant`` on ``device`` (plus figure data)."""
        v = self.variant(variant)
        own = self.queries if v.queries is None else v.queries
        own = (*own, *EVERY_TRACE_QUERIES)
        return own + v.cuda_queries if device == "cuda" else own

    def variants_for(self, device: str) -> tuple[Variant, ...]:
        return tuple(v for v in self.variants if v.args_for(device) is not None)


#: Queries derived from every captured trace, whatever its step: what the importer dropped, which
#: the page warns of beside each button that opens the trace in the Perfetto UI.
EVERY_TRACE_QUERIES: tuple[str, ...] = ("trace_import",)

_REGISTRY: list[Step] = []


def register(step: Step) -> Step:
    if any(s.slug == step.slug for s in _REGISTRY):
        raise ValueError(f"step {step.slug!r} is registered twice")
    _REGISTRY.append(step)
    return step


# ---- Part 1: a matmul and a bias add ------------------------------------------------------------
# CPU captures cap the large size at 512 (4096 on a GPU) so that the whole CPU set of this step
# captures in about a minute on two cores; the page reads the sizes from each capture record.
_LARGE_CPU = ("--size", "512")
_LARGE_CUDA = ("--size", "4096")
register(
    Step(
        slug="matmul_add",
        title="A matmul and a bias add",
        title_ja="行列積とバイアス加算",
        pages=(
            "part-1/01-first-trace.md",
            "part-1/02-cpu-and-gpu-lanes.md",
            "part-1/03-dispatch-chain.md",
            "part-1/04-warmup-and-variance.md",
            "part-1/05-torch-compile.md",
        ),
        variants=(
            Variant(
                name="small_cold",
                description="64 x 64 fp32, eager, no warm-up before the profiler starts",
                args=("--size", "64", "--dtype", "fp32"),
                queries=(
                    "ops",
                    "step_summary",
                    "matmul_add_settings",
                    "matmul_add_overhead",
                    "matmul_add_chain",
                    "matmul_add_lanes",
                    "matmul_add_label_gaps",
                    "matmul_add_first_step",
                ),
            ),
            Variant(
                name="small_warm",
                description="64 x 64 fp32, eager, ten untraced calls before the profiler starts",
                args=("--size", "64", "--dtype", "fp32", "--warmup", "10"),
                queries=("step_summary", "matmul_add_settings", "matmul_add_label_gaps"),
            ),
            Variant(
                name="large_cold",
                description="large bf16 (4096 on a GPU, 512 on a CPU), eager, no warm-up",
                args=("--dtype", "bf16"),
                cpu_args=_LARGE_CPU,
                cuda_args=_LARGE_CUDA,
                queries=(
                    "step_summary",
                    "matmul_add_settings",
                    "matmul_add_overhead",
                    "matmul_add_compiled",
                    "matmul_add_lanes",
                    "matmul_add_occupancy",
                    "matmul_add_footprint",
                    "matmul_add_sync",
                ),
            ),
            Variant(
                name="large_fp32",
                description="4096 x 4096 fp32 on a GPU: the same GEMM without bf16 tensor cores",
                args=("--dtype", "fp32", "--size", "4096"),
                cpu_args=None,
                queries=(
                    "step_summary",
                    "matmul_add_settings",
                    "matmul_add_gemm_kernels",
                    "matmul_add_footprint",
                ),
            ),
            Variant(
                name="startup",
                description="large bf16, schedule wait=0 warmup=0 active=20: the profiler's start",
                args=("--dtype", "bf16", "--wait", "0", "--warmup-steps", "0", "--active", "20"),
                cpu_args=_LARGE_CPU,
                cuda_args=_LARGE_CUDA,
                queries=(
                    "matmul_add_settings",
                    "matmul_add_lanes",
                    "matmul_add_occupancy",
                    "matmul_add_occupancy_calls",
                ),
            ),
            Variant(
                name="variance",
                description="large bf16, warmed up, twenty active steps: run-to-run variance",
                args=("--dtype", "bf16", "--warmup", "3", "--active", "20"),
                cpu_args=_LARGE_CPU,
                cuda_args=_LARGE_CUDA,
                queries=(
                    "matmul_add_settings",
                    "matmul_add_gemm_spread",
                    "matmul_add_gemm_kernels",
                ),
                # The "Write your own query" page's lessons, asked of this trace's twenty steps.
                cuda_queries=(
                    "own_tables",
                    "own_facts",
                    "own_args",
                    "own_steps",
                    "own_launch",
                    "own_slowest",
                    "own_busy",
                    "own_gaps",
                ),
            ),
            Variant(
                name="batched",
                description="batched 3-D inputs (8 x 64 x 64 fp32): aten::bmm instead of aten::mm",
                args=("--size", "64", "--dtype", "fp32", "--batch", "8"),
                queries=(
                    "step_summary",
                    "matmul_add_settings",
                    "matmul_add_chain",
                    "matmul_add_occupancy",
                ),
            ),
            Variant(
                name="compiled",
                description="large bf16 under torch.compile, compiled before the traced steps",
                args=("--dtype", "bf16", "--compile", "--warmup", "2"),
                cpu_args=_LARGE_CPU,
                cuda_args=_LARGE_CUDA,
                queries=(
                    "ops",
                    "step_summary",
                    "matmul_add_settings",
                    "matmul_add_overhead",
                    "matmul_add_compiled",
                ),
            ),
            Variant(
                name="compiled_bias2d",
                description="the compiled variant with a 4096 x 4096 bias matrix, as the reference "
                "series used: does addmm copy the bias into the output first (a Memcpy DtoD on "
                "the GPU)?",
                args=("--dtype", "bf16", "--compile", "--warmup", "2", "--bias2d", *_LARGE_CUDA),
                cpu_args=None,
                queries=("step_summary", "matmul_add_settings", "matmul_add_compiled"),
            ),
        ),
        queries=(
            "ops",
            "step_summary",
            "steps",
            "timeline",
            "matmul_add_settings",
            "matmul_add_overhead",
            "matmul_add_chain",
            "matmul_add_label_gaps",
            "matmul_add_gemm_spread",
            "matmul_add_compiled",
            "matmul_add_lanes",
            "matmul_add_occupancy",
            "matmul_add_footprint",
            "matmul_add_sync",
            "matmul_add_gemm_kernels",
            "matmul_add_first_step",
            "matmul_add_occupancy_calls",
        ),
        figures=(
            Figure(
                name="timeline",
                data="timeline",
                variants=("small_cold", "large_cold", "compiled"),
            ),
            Figure(
                name="matmul_add_step_bars",
                data="steps",
                variants=("small_cold", "small_warm", "startup"),
            ),
            Figure(
                name="matmul_add_gemm_steps", data="matmul_add_gemm_steps", variants=("variance",)
            ),
            Figure(
                name="matmul_add_chain", data="matmul_add_chain", variants=("small_cold", "batched")
            ),
        ),
    )
)

# ---- Part 2: nn.Linear and a fused MLP (steps linear, mlp) --------------------------------------
register(
    Step(
        slug="linear",
        title="One nn.Linear",
        title_ja="nn.Linear ひとつ",
        pages=("part-2/01-linear.md",),
        variants=(
            Variant(
                name="eager",
                description="nn.Linear(32, 64, bias=True) on a 1024 x 32 input, eager",
                args=("--batch", "1024", "--in_dim", "32", "--out_dim", "64"),
                cpu_args=("--dtype", "fp32"),
                cuda_args=("--dtype", "bf16"),
                queries=("linear_view", "linear_ops", "linear_chain", "linear_rows", "linear_gemm"),
            ),
            Variant(
                name="compiled",
                description="the same layer wrapped in torch.compile",
                args=("--batch", "1024", "--in_dim", "32", "--out_dim", "64", "--compile"),
                cpu_args=("--dtype", "fp32"),
                cuda_args=("--dtype", "bf16"),
                queries=("linear_rows",),
                cuda_queries=("linear_gemm",),
            ),
        ),
        queries=(
            "ops",
            "step_summary",
            "steps",
            "timeline",
            "linear_view",
            "linear_ops",
            "linear_chain",
            "linear_rows",
            "linear_gemm",
        ),
        figures=(
            Figure(name="timeline", data="timeline", variants=("eager", "compiled")),
            Figure(name="linear_layout", data="linear_chain", variants=("eager",)),
        ),
    )
)
# Reference sizes on CUDA (bf16); a smaller fp32 block on CPU so the CPU set captures quickly.
_MLP_CPU_ARGS = ("--batch", "2", "--seq", "64", "--dim", "256", "--hidden", "1024")
_MLP_CUDA_ARGS = ("--batch", "64", "--seq", "128", "--dim", "768", "--hidden", "3072")
_MLP_CUDA_ARGS = (*_MLP_CUDA_ARGS, "--dtype", "bf16")
register(
    Step(
        slug="mlp",
        title="A GeGLU MLP block",
        title_ja="GeGLU の MLP ブロック",
        pages=("part-2/02-mlp.md",),
        variants=(
            Variant(
                name="eager",
                description="gate/up/down projections with a tanh-GELU gate, eager",
                args=(),
                cpu_args=_MLP_CPU_ARGS,
                cuda_args=_MLP_CUDA_ARGS,
                queries=("mlp_work", "mlp_summary"),
            ),
            Variant(
                name="compiled",
                description="the same block wrapped in torch.compile (Inductor)",
                args=("--compile",),
                cpu_args=_MLP_CPU_ARGS,
                cuda_args=_MLP_CUDA_ARGS,
                queries=("mlp_work", "mlp_summary"),
            ),
            Variant(
                name="liger",
                description="Liger's fused GELU-and-multiply Triton kernel (CUDA only)",
                args=("--impl", "liger"),
                cpu_args=None,
                cuda_args=_MLP_CUDA_ARGS,
                queries=("mlp_work", "mlp_summary"),
            ),
        ),
        queries=("ops", "step_summary", "steps", "timeline", "mlp_work", "mlp_summary"),
        figures=(Figure(name="timeline", data="timeline", variants=("eager", "compiled")),),
    )
)

# ---- Part 3: attention (step attention) ---------------------------------------------------------
_ATTN_DTYPE = ("--dtype", "bf16", "--head-dim", "64")
_ATTN_REFERENCE = ("--batch", "8", "--heads", "16", "--seq", "1024")  # reference sizes (CUDA)
# CPU: quick to capture; one thread, so that each operator's time is one core's work.
_ATTN_SMALL = ("--batch", "2", "--heads", "8", "--seq", "256", "--threads", "1")
register(
    Step(
        slug="attention",
        title="Causal self-attention",
        title_ja="因果的セルフアテンション",
        pages=(
            "part-3/01-attention.md",
            "part-3/02-sdpa-backends.md",
            "part-3/03-fused-kernels.md",
            "part-3/04-sequence-length.md",
        ),
        variants=(
            Variant(
                name="naive",
                description="attention from primitives, out-of-place masked_fill",
                args=("--impl", "naive", *_ATTN_DTYPE),
                cpu_args=_ATTN_SMALL,
                cuda_args=_ATTN_REFERENCE,
                queries=(
                    "attention_forward",
                    "attention_ops",
                    "attention_copies",
                    "attention_kernels",
                    "attention_traffic",
                ),
            ),
            Variant(
                name="naive_inplace",
                description="the same with masked_fill_ (in place)",
                args=("--impl", "naive_inplace", *_ATTN_DTYPE),
                cpu_args=_ATTN_SMALL,
                cuda_args=_ATTN_REFERENCE,
                queries=("attention_forward", "attention_copies", "attention_kernels"),
            ),
            Variant(
                name="sdpa_math",
                description="F.scaled_dot_product_attention pinned to the MATH backend",
                args=("--impl", "sdpa", "--backend", "math", *_ATTN_DTYPE),
                cpu_args=_ATTN_SMALL,
                cuda_args=_ATTN_REFERENCE,
                queries=("attention_forward", "attention_ops", "attention_kernels"),
            ),
            Variant(
                name="sdpa_efficient",
                description="SDPA pinned to EFFICIENT_ATTENTION (CUDA only)",
                args=("--impl", "sdpa", "--backend", "efficient", *_ATTN_DTYPE),
                cpu_args=None,
                cuda_args=_ATTN_REFERENCE,
                queries=("attention_forward", "attention_kernels"),
            ),
            Variant(
                name="sdpa_flash",
                description="SDPA pinned to FLASH_ATTENTION (a CPU kernel exists too)",
                args=("--impl", "sdpa", "--backend", "flash", *_ATTN_DTYPE),
                cpu_args=_ATTN_SMALL,
                cuda_args=_ATTN_REFERENCE,
                queries=("attention_forward", "attention_ops", "attention_kernels"),
            ),
            Variant(
                name="sdpa_cudnn",
                description="SDPA pinned to CUDNN_ATTENTION (CUDA only)",
                args=("--impl", "sdpa", "--backend", "cudnn", *_ATTN_DTYPE),
                cpu_args=None,
                cuda_args=_ATTN_REFERENCE,
                queries=("attention_forward", "attention_kernels"),
            ),
            Variant(
                name="sweep",
                description="every implementation at several sequence lengths, one capture",
                args=(*_ATTN_DTYPE, "--batch", "1"),
                cpu_args=(
                    *("--heads", "8", "--threads", "1", "--sweep-seqs", "128,256,512,1024"),
                    *("--sweep-impls", "naive_inplace,sdpa_math,sdpa_flash"),
                ),
                cuda_args=(
                    *("--heads", "16", "--sweep-seqs", "256,512,1024,2048,4096,8192"),
                    "--sweep-impls",
                    "naive_inplace,sdpa_math,sdpa_efficient,sdpa_flash,sdpa_cudnn",
                ),
                queries=(
                    "step_summary",
                    "attention_sweep",
                    "attention_sweep_launches",
                    "attention_sweep_notes",
                ),
            ),
        ),
        queries=(
            "ops",
            "step_summary",
            "attention_forward",
            "attention_ops",
            "attention_copies",
            "attention_kernels",
            "attention_traffic",
            "attention_sweep",
            "attention_sweep_launches",
            "attention_sweep_notes",
        ),
        figures=(
            Figure(name="timeline", data="timeline", variants=("naive",)),
            Figure(name="attention_sweep", data="attention_sweep", variants=("sweep",)),
        ),
    )
)

# ---- Part 4: a small LLM generating tokens (step llm) -------------------------------------------
# Model shapes: CPU is a toy (2 layers, fp32, 32-token prompt, 8 new tokens) so the CPU set
# captures in seconds; CUDA is a ~0.85 B-parameter model in bf16 (16 layers, 512-token prompt,
# 32 new tokens), two active steps to keep its traces small.
# CUDA set estimate on one A100/H100-class GPU (not yet measured): each eager variant ~30 s
# (imports and model build ~15 s, 11 generate calls of ~1 s, trace export ~5 s); the compiled
# variant ~60-120 s (Inductor compile and CUDA graph capture of the decode forward on the
# first call). About 3-3.5 minutes for the whole step.
_LLM_CPU = ("--size", "cpu", "--dtype", "fp32", "--prompt-len", "32", "--new-tokens", "8")
_LLM_CUDA = (
    *("--size", "gpu", "--dtype", "bf16", "--prompt-len", "512", "--new-tokens", "32"),
    *("--active", "2"),
)
register(
    Step(
        slug="llm",
        title="A small LLM generating tokens",
        title_ja="小さな LLM のトークン生成",
        pages=(
            "part-4/01-llm-generate.md",
            "part-4/02-decode-step.md",
            "part-4/03-batch-and-cuda-graphs.md",
        ),
        variants=(
            Variant(
                name="eager_b1",
                description="eager, dynamic KV cache, batch 1",
                args=("--batch", "1", "--cache", "dynamic"),
                cpu_args=_LLM_CPU,
                cuda_args=_LLM_CUDA,
                queries=("llm_phases", "llm_decode", "llm_attention", "llm_peaks"),
                cuda_queries=("llm_decode_kernels", "kernel_gaps"),
            ),
            Variant(
                name="eager_b8",
                description="eager, dynamic KV cache, batch 8",
                args=("--batch", "8", "--cache", "dynamic"),
                cpu_args=_LLM_CPU,
                cuda_args=_LLM_CUDA,
                queries=("llm_phases", "llm_decode", "llm_attention"),
            ),
            Variant(
                name="eager_b1_layers",
                description="eager_b1 with a label around every attention block, MLP and norm",
                args=("--batch", "1", "--cache", "dynamic", "--layer-labels"),
                cpu_args=_LLM_CPU,
                cuda_args=_LLM_CUDA,
                queries=("llm_phases", "llm_decode", "llm_layers"),
            ),
            Variant(
                name="static_compiled_b1",
                description=(
                    'static KV cache, decode forward torch.compile(mode="reduce-overhead"): '
                    "CUDA graphs, GPU only"
                ),
                args=("--batch", "1", "--cache", "static", "--compile"),
                # CUDA graphs are what reduce-overhead is for; on a CPU the compile costs far
                # more than the toy model's whole capture and shows no launches to remove.
                cpu_args=None,
                cuda_args=_LLM_CUDA,
                queries=("llm_phases", "llm_decode"),
                cuda_queries=("kernel_gaps",),
            ),
        ),
        queries=(
            "step_summary",
            "llm_phases",
            "llm_decode",
            "llm_layers",
            "llm_attention",
            "llm_peaks",
            "llm_decode_kernels",
            "kernel_gaps",
        ),
        figures=(
            Figure(
                name="llm_decode_step",
                data="llm_decode_timeline",
                variants=("eager_b1", "static_compiled_b1"),
            ),
        ),
    )
)

# ---- Part 5: one training step (step train) -----------------------------------------------------
# CPU: the toy model on one thread (steadier timings on a shared machine), five steps for
# averages; GPU: a model of a few hundred million parameters.
_TRAIN_CPU = ("--size", "cpu", "--threads", "1", "--active", "5")
_TRAIN_CUDA = ("--size", "gpu", "--batch", "8", "--seq", "512", "--active", "5")
# The first optimizer step creates AdamW's state: the memory captures profile from the very first.
_TRAIN_MEMORY = ("--tuned", "--profile-memory", "--wait", "0", "--warmup-steps", "0")
_TRAIN_MEMORY_CPU = ("--size", "cpu", "--threads", "1", "--active", "3")
_TRAIN_MEMORY_CUDA = ("--size", "gpu", "--batch", "8", "--seq", "512", "--active", "3")
_TRAIN_STEP_QUERIES = (
    "train_phases",
    "train_backward",
    "train_optimizer",
    "train_optimizer_ops",
    "train_readback",
    "train_gemm",
    "train_casts",
    "train_data",
)
register(
    Step(
        slug="train",
        title="One training step",
        title_ja="学習の 1 ステップ",
        pages=(
            "part-5/01-training-step.md",
            "part-5/02-optimizer-and-data.md",
            "part-5/03-memory-and-precision.md",
            "part-5/04-torch-compile.md",
        ),
        variants=(
            Variant(
                name="naive",
                description="fp32, no workers, blocking pageable copies, single-tensor AdamW, "
                "zero_grad(set_to_none=False), loss.item() every step",
                cpu_args=_TRAIN_CPU,
                cuda_args=_TRAIN_CUDA,
                queries=(*_TRAIN_STEP_QUERIES, "train_fwdbwd"),
                cuda_queries=(
                    "train_copies",
                    "kernel_gaps",
                    "train_mfu",
                    "train_optimizer_traffic",
                ),
            ),
            Variant(
                name="foreach",
                description="the naive loop with a foreach AdamW (one operator per update term)",
                args=("--optimizer", "foreach"),
                cpu_args=_TRAIN_CPU,
                cuda_args=_TRAIN_CUDA,
                queries=("train_optimizer", "train_optimizer_ops"),
                cuda_queries=("train_optimizer_traffic",),
            ),
            Variant(
                name="tuned",
                description="bf16 autocast, 2 workers, pinned non-blocking copies (GPU), fused "
                "AdamW, set_to_none=True, loss read every 10 steps",
                args=("--tuned",),
                cpu_args=_TRAIN_CPU,
                cuda_args=_TRAIN_CUDA,
                queries=_TRAIN_STEP_QUERIES,
                cuda_queries=(
                    "train_copies",
                    "kernel_gaps",
                    "train_mfu",
                    "train_optimizer_traffic",
                    "train_roofline",
                ),
            ),
            Variant(
                name="compiled",
                description="the tuned loop with torch.compile on the model",
                args=("--tuned", "--compile", "--warmup", "2"),
                cpu_args=_TRAIN_CPU,
                cuda_args=_TRAIN_CUDA,
                queries=("train_phases", "train_backward", "train_compiled"),
                cuda_queries=("kernel_gaps", "train_mfu"),
            ),
            Variant(
                name="memory",
                description="the tuned loop with profile_memory=True, from the first step",
                args=_TRAIN_MEMORY,
                cpu_args=_TRAIN_MEMORY_CPU,
                cuda_args=_TRAIN_MEMORY_CUDA,
                queries=("train_memory",),
            ),
            Variant(
                name="memory_fp32",
                description="the memory variant without autocast (fp32 throughout)",
                args=(*_TRAIN_MEMORY, "--dtype", "fp32"),
                cpu_args=_TRAIN_MEMORY_CPU,
                cuda_args=_TRAIN_MEMORY_CUDA,
                queries=("train_memory",),
            ),
        ),
        queries=(
            *_TRAIN_STEP_QUERIES,
            "train_fwdbwd",
            "train_copies",
            "train_compiled",
            "train_memory",
            "train_memory_timeline",
            "kernel_gaps",
            "train_mfu",
            "train_optimizer_traffic",
            "train_roofline",
        ),
        figures=(
            Figure(
                name="train_memory",
                data="train_memory_timeline",
                variants=("memory", "memory_fp32"),
            ),
            Figure(
                name="train_phase_bars",
                data="train_phases",
                variants=("naive", "tuned", "compiled"),
            ),
            Figure(name="train_roofline", data="train_roofline", variants=("tuned",)),
        ),
    )
)

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
