"""Part 5's workload: one training step of a small Llama-style language model, under the profiler.

The model is Part 4's architecture from ``transformers``, built from a configuration with random
weights; the data are synthetic token sequences served by a real ``torch.utils.data.DataLoader``
over a ``Dataset`` (no download). Each profiler step is one optimizer step: fetch a batch, move
it to the device, forward, cross-entropy loss, backward, AdamW step, zero the gradients. Run it
yourself, then open the trace in https://ui.perfetto.dev:

    python -m generators.workloads.train --device cpu --size cpu --out traces/train
    python -m generators.workloads.train --device cuda --size gpu --tuned --out traces/train-tuned

``--tuned`` switches on everything the naive loop lacks (bf16 autocast, pinned memory with
``non_blocking`` copies and worker processes, a fused AdamW, ``set_to_none=True``, the loss read
back only every few steps); the single flags below change one thing at a time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import record_function
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, LlamaConfig

from generators.profiling import (
    add_common_arguments,
    profile_steps,
    resolve_device,
    schedule_from_args,
    synchronize,
)
from generators.store import CAPTURE_FILE, atomic_write_text, dump_json

#: What the memory variant writes beside its trace on a GPU (PyTorch's memory visualiser).
MEMORY_SNAPSHOT_FILE = "memory_snapshot.html"

# "gpu" has the shape of a small real model (a few hundred million parameters), "cpu" is a toy
# with the same architecture so that a CPU capture takes seconds.
SIZES: dict[str, dict[str, int]] = {
    "gpu": {
        "vocab_size": 32000,
        "hidden_size": 1024,
        "intermediate_size": 2816,
        "num_hidden_layers": 16,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
    },
    "cpu": {
        "vocab_size": 2048,
        "hidden_size": 128,
        "intermediate_size": 344,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
    },
}


# --8<-- [start:data]
class SyntheticTokens(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Random token sequences: item i is the same tensor on every run (seeded by i)."""

    def __init__(self, length: int, seq_len: int, vocab: int) -> None:
        self.length, self.seq_len, self.vocab = length, seq_len, vocab

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        generator = torch.Generator().manual_seed(index)
        tokens = torch.randint(0, self.vocab, (self.seq_len + 1,), generator=generator)
        return tokens[:-1], tokens[1:]  # inputs, and the next token to predict at each position


# --8<-- [end:data]


def build_model(size: str, device: torch.device) -> torch.nn.Module:
    """A Llama-architecture causal LM with random fp32 weights (fixed seed), in training mode."""
    config = LlamaConfig(**SIZES[size], max_position_embeddings=4096)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(
            config, dtype=torch.float32, attn_implementation="sdpa"
        )
    return model.train()


def build_optimizer(model: torch.nn.Module, kind: str) -> torch.optim.Optimizer:
    # --8<-- [start:optimizer]
    # single: one small operator per parameter and per update term (foreach=False);
    # foreach: each update term once over lists of tensors (torch._foreach_*);
    # fused: the whole AdamW update in one fused operator over the tensor lists.
    options = {"single": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True}}
    return torch.optim.AdamW(model.parameters(), lr=1e-4, **options[kind])
    # --8<-- [end:optimizer]


def autocast(device: torch.device, dtype: str) -> AbstractContextManager[object]:
    if dtype == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return nullcontext()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="cpu", help="model shape")
    parser.add_argument("--batch", type=int, default=4, help="sequences per batch")
    parser.add_argument("--seq", type=int, default=64, help="tokens per sequence")
    parser.add_argument(
        "--tuned",
        action="store_true",
        help="bf16 autocast, pinned non-blocking copies, 2 workers, fused AdamW, set_to_none, "
        "loss read every 10 steps (each can still be set on its own below)",
    )
    parser.add_argument("--dtype", choices=["fp32", "bf16"], help="bf16: autocast the forward")
    parser.add_argument("--workers", type=int, help="DataLoader worker processes")
    parser.add_argument("--optimizer", choices=["single", "foreach", "fused"])
    parser.add_argument(
        "--set-to-none", type=int, choices=[0, 1], help="zero_grad(set_to_none=...)"
    )
    parser.add_argument(
        "--item-every", type=int, help="read the loss back with loss.item() every N steps"
    )
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    parser.add_argument(
        "--profile-memory",
        action="store_true",
        help="record every allocation and free in the trace (and, on CUDA, a memory snapshot)",
    )
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    parser.add_argument(
        "--timed-steps",
        type=int,
        default=10,
        help="warm steps timed after the profiled ones, with the profiler off",
    )
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    tuned = args.tuned
    dtype = args.dtype or ("bf16" if tuned else "fp32")
    workers = args.workers if args.workers is not None else (2 if tuned else 0)
    opt_kind = args.optimizer or ("fused" if tuned else "single")
    set_to_none = bool(args.set_to_none if args.set_to_none is not None else tuned)
    item_every = args.item_every or (10 if tuned else 1)
    if args.threads:
        torch.set_num_threads(args.threads)

    device = resolve_device(args.device)
    cuda = device.type == "cuda"
    model = build_model(args.size, device)
    if args.compile and device.type == "cpu":
        # Inductor's C++ kernels record nothing in the trace unless asked to.
        torch._inductor.config.cpp.enable_kernel_profile = True
    forward = torch.compile(model) if args.compile else model
    optimizer = build_optimizer(model, opt_kind)
    vocab = model.config.vocab_size
    sched = schedule_from_args(args)
    steps = args.warmup + sched.total_steps + args.timed_steps
    dataset = SyntheticTokens(steps * args.batch, args.seq, vocab)
    # --8<-- [start:loader]
    # Pinned (page-locked) host memory is what lets a host-to-device copy run asynchronously;
    # it only exists with a GPU, so the CPU run leaves it off.
    loader = DataLoader(
        dataset,
        batch_size=args.batch,
        num_workers=workers,
        pin_memory=tuned and cuda,
        persistent_workers=workers > 0,
    )
    non_blocking = tuned and cuda
    # --8<-- [end:loader]
    batches: Iterator[tuple[torch.Tensor, torch.Tensor]] = iter(loader)
    step_index = 0

    # --8<-- [start:step]
    def train_step() -> None:
        nonlocal step_index
        inputs, targets = next(batches)  # enumerate(DataLoader)#...__next__ in the trace
        with record_function("to_device"):
            inputs = inputs.to(device, non_blocking=non_blocking)
            targets = targets.to(device, non_blocking=non_blocking)
        with record_function("forward"), autocast(device, dtype):
            # use_cache=False: a training forward has no use for a KV cache, and transformers
            # would otherwise build one (a DynamicCache) in every step.
            logits = forward(input_ids=inputs, use_cache=False).logits
            loss = F.cross_entropy(logits.view(-1, vocab), targets.view(-1))
        with record_function("backward"):
            loss.backward()
        optimizer.step()  # Optimizer.step#AdamW.step
        optimizer.zero_grad(set_to_none=set_to_none)  # Optimizer.zero_grad#AdamW.zero_grad
        if step_index % item_every == 0:
            with record_function("log_loss"):
                print(f"step {step_index}: loss {loss.item():.4f}")  # waits for the GPU
        step_index += 1

    # --8<-- [end:step]

    # Untraced steps first: they pay for compilation (and, on a GPU, cuBLAS/allocator warm-up).
    t0 = time.perf_counter()
    for _ in range(args.warmup):
        train_step()
    synchronize(device)
    warmup_s = time.perf_counter() - t0

    snapshot = args.profile_memory and cuda
    if snapshot:
        torch.cuda.memory._record_memory_history(max_entries=200_000)
    profile_steps(
        train_step,
        device=device,
        out_dir=args.out,
        sched=sched,
        label="train_step",
        profile_memory=args.profile_memory,
        settings={
            "size": args.size,
            "batch": args.batch,
            "seq": args.seq,
            "dtype": dtype,
            "workers": workers,
            "pin_memory": tuned and cuda,
            "non_blocking": non_blocking,
            "optimizer": opt_kind,
            "set_to_none": set_to_none,
            "item_every": item_every,
            "compile": args.compile,
            "profile_memory": args.profile_memory,
            "warmup_steps_untraced": args.warmup,
            "model": {
                **SIZES[args.size],
                "parameters": sum(p.numel() for p in model.parameters()),
                "parameter_tensors": len(list(model.parameters())),
            },
            "wall_clock": {"warmup_s": round(warmup_s, 6)},
        },
    )
    if snapshot:
        write_memory_snapshot(args.out)
    # After the profiled steps, not before: the memory variants profile from the very first step.
    if args.timed_steps:
        record_wall_clock(args.out, time_steps(train_step, device, args.timed_steps))


def time_steps(step: Callable[[], None], device: torch.device, count: int) -> dict[str, float]:
    """Wall clock of ``count`` warm steps with the profiler off: each step, and their mean.

    As in the profiled loop, nothing waits for the GPU between steps (the loop's own
    ``loss.item()`` aside), so a step's time is how long the loop took to get through it, and
    the CPU may run ahead into the next; the mean includes the final wait for the GPU, so it
    is the loop's pace over the timed steps.
    """
    synchronize(device)
    times = []
    start = last = time.perf_counter()
    for _ in range(count):
        step()
        now = time.perf_counter()
        times.append(now - last)
        last = now
    synchronize(device)
    total = time.perf_counter() - start
    return {
        "timed_steps": count,
        "step_min_s": round(min(times), 6),
        "step_median_s": round(statistics.median(times), 6),
        "step_max_s": round(max(times), 6),
        "step_mean_s": round(total / count, 6),
    }


def record_wall_clock(out: Path, timings: dict[str, float]) -> None:
    """Add timings measured after the profiler closed to the capture record it wrote."""
    path = out / CAPTURE_FILE
    record = json.loads(path.read_text())
    record["settings"].setdefault("wall_clock", {}).update(timings)
    atomic_write_text(path, dump_json(record))


def write_memory_snapshot(out: Path) -> None:
    """PyTorch's own memory snapshot of the profiled steps, and its visualiser's HTML page."""
    from torch.cuda._memory_viz import trace_plot

    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    (out / MEMORY_SNAPSHOT_FILE).write_text(trace_plot(snapshot))


if __name__ == "__main__":
    main()
