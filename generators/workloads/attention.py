"""Part 3's workload: causal self-attention, by hand and through each SDPA backend.

Run it yourself (CPU or CUDA), then open the trace in https://ui.perfetto.dev:

    python -m generators.workloads.attention --device cuda --impl naive --out traces/naive
    python -m generators.workloads.attention --device cuda --impl sdpa --backend flash \\
        --out traces/flash

Every forward runs under ``torch.no_grad()`` inside ``record_function("attn_fwd")``. With
``--sweep-seqs`` the same process instead runs every implementation in ``--sweep-impls`` at every
sequence length, one forward each per profiler step, each inside its own label
``attn_fwd/<impl>/b<batch>h<heads>s<seq>d<head_dim>`` so that SQL can group the trace by both.

Cost of the CUDA set (estimate for one A100/H100-class GPU, not measured): each of the six
single variants is one process of roughly 5-10 s (interpreter, torch import, CUDA and cuBLAS /
cuDNN initialisation) around 7 forwards of at most a few ms each; the sweep variant runs 5
implementations x 6 lengths (batch 1, 16 heads, up to seq 8192) for 7 steps, dominated by the
math backend's fp32 [seq, seq] tensors at seq 8192 (4 GiB each, some tens of ms per step), so
about 15 s. With deriving, the whole Part 3 CUDA set should take one to two minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import math
from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import record_function

from generators.profiling import (
    add_common_arguments,
    profile_steps,
    resolve_device,
    schedule_from_args,
    synchronize,
)

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
BACKENDS = {
    "math": SDPBackend.MATH,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "flash": SDPBackend.FLASH_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
}
#: Implementations by name: the two hand-written ones, and SDPA pinned to each backend.
IMPLS = ("naive", "naive_inplace", *(f"sdpa_{b}" for b in BACKENDS))


# --8<-- [start:naive]
def naive_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """Attention from primitives; ``mask`` is True above the diagonal (the future)."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = torch.matmul(q, k.transpose(-2, -1))  # [batch, heads, seq, seq]
    scores = scores * scale
    scores = scores.masked_fill(mask, float("-inf"))  # out of place: returns a new tensor
    attn = torch.softmax(scores, dim=-1)
    return torch.matmul(attn, v)  # [batch, heads, seq, head_dim]


# --8<-- [end:naive]


# --8<-- [start:naive_inplace]
def naive_attention_inplace(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """The same, with the mask written into ``scores`` itself (safe only without autograd)."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = torch.matmul(q, k.transpose(-2, -1))
    scores = scores * scale
    scores.masked_fill_(mask, float("-inf"))  # in place: no new [seq, seq] tensor
    attn = torch.softmax(scores, dim=-1)
    return torch.matmul(attn, v)


# --8<-- [end:naive_inplace]


# --8<-- [start:sdpa]
def sdpa_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, backend: SDPBackend
) -> torch.Tensor:
    """One call; ``sdpa_kernel`` pins the backend (an error if it cannot run these inputs)."""
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


# --8<-- [end:sdpa]


def make_inputs(
    batch: int, heads: int, seq: int, head_dim: int, dtype: torch.dtype, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator(device="cpu").manual_seed(0)
    shape = (batch, heads, seq, head_dim)
    q, k, v = (torch.randn(*shape, generator=generator) for _ in range(3))
    q, k, v = (t.to(device=device, dtype=dtype) for t in (q, k, v))
    # Built once, outside the forward: True where a query would see a later key.
    mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=device), diagonal=1)
    return q, k, v, mask


def forward_fn(
    impl: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor
) -> Callable[[], torch.Tensor]:
    if impl == "naive":
        return lambda: naive_attention(q, k, v, mask)
    if impl == "naive_inplace":
        return lambda: naive_attention_inplace(q, k, v, mask)
    backend = BACKENDS[impl.removeprefix("sdpa_")]
    return lambda: sdpa_attention(q, k, v, backend)


@contextlib.contextmanager
def _no_grad() -> Iterator[None]:
    with torch.no_grad():
        yield


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=["naive", "naive_inplace", "sdpa"], default="naive")
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="math")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    parser.add_argument(
        "--sweep-seqs",
        type=_ints,
        default=[],
        help="comma-separated sequence lengths: profile every --sweep-impls at each",
    )
    parser.add_argument(
        "--sweep-impls",
        type=lambda s: [x for x in s.split(",") if x],
        default=["naive_inplace", "sdpa_math", "sdpa_flash"],
        help=f"comma-separated implementations for the sweep (from: {', '.join(IMPLS)})",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="CPU threads for torch (0: torch's default); one keeps CPU timings steadier",
    )
    add_common_arguments(parser, warmup=2)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    unknown = sorted(set(args.sweep_impls) - set(IMPLS))
    if unknown:
        parser.error(f"unknown --sweep-impls {', '.join(unknown)}; known: {', '.join(IMPLS)}")

    device = resolve_device(args.device)
    dtype = DTYPES[args.dtype]
    settings: dict[str, object] = {
        "batch": args.batch,
        "heads": args.heads,
        "head_dim": args.head_dim,
        "dtype": args.dtype,
        "warmup": args.warmup,
        "threads": torch.get_num_threads(),
    }

    if args.sweep_seqs:
        calls: list[tuple[str, Callable[[], torch.Tensor]]] = []
        for seq in args.sweep_seqs:
            q, k, v, mask = make_inputs(args.batch, args.heads, seq, args.head_dim, dtype, device)
            for impl in args.sweep_impls:
                shape = f"b{args.batch}h{args.heads}s{seq}d{args.head_dim}"
                calls.append((f"attn_fwd/{impl}/{shape}", forward_fn(impl, q, k, v, mask)))

        def step() -> None:
            with _no_grad():
                for label, fn in calls:
                    with record_function(label):
                        fn()

        label = "attn_sweep"
        settings.update(sweep_seqs=args.sweep_seqs, sweep_impls=args.sweep_impls)
    else:
        q, k, v, mask = make_inputs(args.batch, args.heads, args.seq, args.head_dim, dtype, device)
        impl = args.impl if args.impl != "sdpa" else f"sdpa_{args.backend}"
        fn = forward_fn(impl, q, k, v, mask)

        # --8<-- [start:step]
        def step() -> None:
            with torch.no_grad():
                fn()  # profile_steps wraps each call in record_function("attn_fwd")

        # --8<-- [end:step]

        label = "attn_fwd"
        settings.update(impl=impl, seq=args.seq)

    for _ in range(args.warmup):
        step()
    synchronize(device)

    profile_steps(
        step,
        device=device,
        out_dir=args.out,
        sched=schedule_from_args(args),
        label=label,
        settings=settings,
    )


if __name__ == "__main__":
    main()
