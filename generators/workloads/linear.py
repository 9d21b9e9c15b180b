"""Part 2's first workload: one ``nn.Linear`` (with a bias) forward pass, profiled step by step.

Run it yourself (CPU or CUDA), then open the trace in https://ui.perfetto.dev:

    python -m generators.workloads.linear --device cuda --dtype bf16 --out traces/linear
    python -m generators.workloads.linear --device cuda --dtype bf16 --compile --out traces/lc

The code the reader studies is :func:`linear_forward`; everything else builds the layer and its
input and hands one call per profiler step to ``generators.profiling.profile_steps``.
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

from generators.profiling import (
    add_common_arguments,
    profile_steps,
    resolve_device,
    schedule_from_args,
    synchronize,
)

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


# --8<-- [start:workload]
def make_layer(in_dim: int, out_dim: int) -> nn.Linear:
    """y = x @ W.T + b, with W stored as (out_dim, in_dim)."""
    return nn.Linear(in_dim, out_dim, bias=True)


def linear_forward(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The code under the profiler: one forward pass, no autograd graph."""
    with torch.no_grad():
        return layer(x)


# --8<-- [end:workload]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024, help="rows of the input x")
    parser.add_argument("--in_dim", type=int, default=32, help="input features")
    parser.add_argument("--out_dim", type=int, default=64, help="output features")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp32")
    parser.add_argument("--compile", action="store_true", help="wrap the layer in torch.compile")
    add_common_arguments(parser, warmup=3)
    args = parser.parse_args(argv)

    device = resolve_device(args.device)
    dtype = DTYPES[args.dtype]
    torch.manual_seed(0)
    layer = make_layer(args.in_dim, args.out_dim).to(device=device, dtype=dtype).eval()
    x = torch.randn(args.batch, args.in_dim, device=device, dtype=dtype)
    # --8<-- [start:compile]
    model = torch.compile(layer) if args.compile else layer
    # --8<-- [end:compile]

    for _ in range(args.warmup):
        linear_forward(model, x)
    synchronize(device)

    profile_steps(
        lambda: linear_forward(model, x),
        device=device,
        out_dir=args.out,
        sched=schedule_from_args(args),
        label="linear_fwd",
        settings={
            "batch": args.batch,
            "in_dim": args.in_dim,
            "out_dim": args.out_dim,
            "dtype": args.dtype,
            "compile": args.compile,
            "warmup": args.warmup,
        },
    )


if __name__ == "__main__":
    main()
