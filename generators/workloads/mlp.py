"""Part 2's second workload: a GeGLU MLP block (three Linears and a gated GELU), step by step.

Run it yourself (CPU or CUDA), then open the trace in https://ui.perfetto.dev:

    python -m generators.workloads.mlp --device cuda --dtype bf16 --out traces/mlp
    python -m generators.workloads.mlp --device cuda --dtype bf16 --compile --out traces/mlp_c
    python -m generators.workloads.mlp --device cuda --dtype bf16 --impl liger --out traces/mlp_l

``--impl liger`` replaces the gate's GELU and the multiply with the hand-written fused Triton
kernel of the ``liger-kernel`` package (CUDA only; ``pip install -r requirements/gpu.txt``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import torch
import torch.nn.functional as F
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
class GeGLUMLP(nn.Module):
    """down(gelu(gate(x)) * up(x)): the feed-forward block of Gemma-style transformers."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate = F.gelu(self.gate_proj(x), approximate="tanh")
        return self.down_proj(gate * self.up_proj(x))


# --8<-- [end:workload]


# --8<-- [start:liger]
def liger_forward(mlp: GeGLUMLP) -> Callable[[torch.Tensor], torch.Tensor]:
    """The same block with Liger's fused GELU-and-multiply Triton kernel in the middle."""
    from liger_kernel.ops.geglu import LigerGELUMulFunction  # CUDA + Triton only

    def forward(x: torch.Tensor) -> torch.Tensor:
        hidden = LigerGELUMulFunction.apply(mlp.gate_proj(x), mlp.up_proj(x))
        return mlp.down_proj(hidden)

    return forward


# --8<-- [end:liger]


def build(args: argparse.Namespace, device: torch.device) -> Callable[[torch.Tensor], object]:
    dtype = DTYPES[args.dtype]
    torch.manual_seed(0)
    mlp = GeGLUMLP(args.dim, args.hidden).to(device=device, dtype=dtype).eval()
    if args.impl == "liger":
        if device.type != "cuda":
            raise SystemExit("error: --impl liger needs --device cuda (its kernel is Triton)")
        return liger_forward(mlp)
    if args.compile:
        if device.type == "cpu":
            # --8<-- [start:cpu_kernel_profile]
            # Inductor's C++ kernels record nothing in the trace unless asked to.
            torch._inductor.config.cpp.enable_kernel_profile = True
            # --8<-- [end:cpu_kernel_profile]
        return torch.compile(mlp)
    return mlp


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seq", type=int, default=128, help="tokens per sequence")
    parser.add_argument("--dim", type=int, default=768, help="model width")
    parser.add_argument("--hidden", type=int, default=3072, help="width of gate and up")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp32")
    parser.add_argument("--impl", choices=["eager", "liger"], default="eager")
    parser.add_argument("--compile", action="store_true", help="wrap the block in torch.compile")
    add_common_arguments(parser, warmup=3)
    args = parser.parse_args(argv)
    if args.compile and args.impl != "eager":
        parser.error("--compile applies to --impl eager only")

    device = resolve_device(args.device)
    forward = build(args, device)
    x = torch.randn(args.batch, args.seq, args.dim, device=device, dtype=DTYPES[args.dtype])

    def step() -> object:
        with torch.no_grad():
            return forward(x)

    for _ in range(args.warmup):
        step()
    synchronize(device)

    profile_steps(
        step,
        device=device,
        out_dir=args.out,
        sched=schedule_from_args(args),
        label="mlp_fwd",
        settings={
            "batch": args.batch,
            "seq": args.seq,
            "dim": args.dim,
            "hidden": args.hidden,
            "dtype": args.dtype,
            "impl": args.impl,
            "compile": args.compile,
            "warmup": args.warmup,
        },
    )


if __name__ == "__main__":
    main()
