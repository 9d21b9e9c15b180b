"""Part 1's workload: a matrix multiply followed by a bias add, profiled step by step.

Run it yourself (CPU or CUDA), then open the trace in https://ui.perfetto.dev:

    python -m generators.workloads.matmul_add --device cuda --size 4096 --out traces/demo

The function the reader studies is :func:`matmul_add`; everything else sets up inputs and hands
one call per profiler step to ``generators.profiling.profile_steps``.
"""

from __future__ import annotations

import argparse

import torch

from generators.profiling import (
    add_common_arguments,
    profile_steps,
    resolve_device,
    schedule_from_args,
    synchronize,
)

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


# --8<-- [start:workload]
def matmul_add(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The code under the profiler: one GEMM, then an elementwise add."""
    return torch.add(torch.matmul(x, w), b)


# --8<-- [end:workload]


def make_inputs(
    size: int,
    dtype: torch.dtype,
    device: torch.device,
    batch: int | None,
    bias2d: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator(device="cpu").manual_seed(0)
    lead = (batch,) if batch else ()
    x = torch.randn(*lead, size, size, generator=generator, dtype=torch.float32)
    w = torch.randn(*lead, size, size, generator=generator, dtype=torch.float32)
    # A bias vector by default; a full N x N matrix with --bias2d, as the reference series used,
    # which changes what torch.compile's addmm must do with it.
    bias_shape = (size, size) if bias2d else (size,)
    b = torch.randn(*bias_shape, generator=generator, dtype=torch.float32)
    return tuple(t.to(device=device, dtype=dtype) for t in (x, w, b))  # type: ignore[return-value]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64, help="square matrix size N (N x N)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp32")
    parser.add_argument("--compile", action="store_true", help="wrap matmul_add in torch.compile")
    parser.add_argument(
        "--batch", type=int, default=0, help="batched 3-D inputs (B x N x N): aten::bmm"
    )
    parser.add_argument(
        "--bias2d", action="store_true", help="an N x N bias matrix instead of a bias vector"
    )
    add_common_arguments(parser)
    args = parser.parse_args(argv)

    device = resolve_device(args.device)
    x, w, b = make_inputs(
        args.size, DTYPES[args.dtype], device, args.batch or None, bias2d=args.bias2d
    )
    fn = torch.compile(matmul_add) if args.compile else matmul_add

    for _ in range(args.warmup):
        fn(x, w, b)
    synchronize(device)

    profile_steps(
        lambda: fn(x, w, b),
        device=device,
        out_dir=args.out,
        sched=schedule_from_args(args),
        label="matmul_add",
        settings={
            "size": args.size,
            "dtype": args.dtype,
            "compile": args.compile,
            "warmup": args.warmup,
            "batch": args.batch,
            "bias2d": args.bias2d,
        },
    )


if __name__ == "__main__":
    main()
