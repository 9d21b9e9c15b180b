"""Part 4's workload: a small Llama-style language model generating tokens with ``generate``.

The model is built from a configuration with random weights (no download, no tokenizer: the
prompt is random token ids), so the trace shows exactly the work a real model of that shape
does. Run it yourself, then open the trace in https://ui.perfetto.dev:

    python -m generators.workloads.llm --device cuda --size gpu --out traces/llm

One profiler step is one whole ``generate`` call: a prefill over the prompt, then one decode
forward per new token. Each forward runs inside ``record_function("prefill")`` or
``record_function("decode")``; with ``--layer-labels`` every attention block, MLP and RMSNorm
of every decoder layer gets a label too.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
from torch.profiler import record_function
from transformers import AutoModelForCausalLM, LlamaConfig

from generators.profiling import (
    add_common_arguments,
    profile_steps,
    resolve_device,
    schedule_from_args,
    synchronize,
)

# Two model sizes: "gpu" has the shape of a small real model (~0.85 B parameters in bf16),
# "cpu" is a toy with the same architecture so a CPU capture takes seconds.
SIZES: dict[str, dict[str, int]] = {
    "gpu": {
        "vocab_size": 32000,
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
    },
    "cpu": {
        "vocab_size": 4096,
        "hidden_size": 256,
        "intermediate_size": 688,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
    },
}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def build_model(size: str, dtype: torch.dtype, device: torch.device) -> torch.nn.Module:
    """A Llama-architecture causal LM with random weights (fixed seed)."""
    config = LlamaConfig(**SIZES[size], max_position_embeddings=4096)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation="sdpa")
    return model.eval()


def make_prompt(batch: int, prompt_len: int, vocab: int, device: torch.device) -> torch.Tensor:
    generator = torch.Generator(device="cpu").manual_seed(0)
    ids = torch.randint(0, vocab, (batch, prompt_len), generator=generator)
    return ids.to(device)


# --8<-- [start:labels]
def label_phases(model: torch.nn.Module, decode_forward: Callable[..., Any] | None) -> None:
    """Wrap the model's forward: a prompt-long input is the prefill, a one-token input a decode.

    ``generate`` calls ``model(...)`` once per forward; replacing ``model.forward`` puts a label
    around exactly that call, and leaves generate's own work between forwards (choosing the
    next token, updating the cache position, checking whether to stop) outside the labels.
    ``decode_forward`` (a compiled forward) replaces the eager one for one-token inputs.
    """
    eager_forward = model.forward

    def forward(*args: Any, **kwargs: Any) -> Any:
        input_ids = kwargs.get("input_ids", args[0] if args else None)
        if input_ids is not None and input_ids.shape[1] == 1:
            with record_function("decode"):
                return (decode_forward or eager_forward)(*args, **kwargs)
        with record_function("prefill"):
            return eager_forward(*args, **kwargs)

    model.forward = forward  # type: ignore[method-assign]


def label_layers(model: torch.nn.Module) -> None:
    """Label each decoder layer's attention, MLP and norms (eager only: no graph breaks)."""
    for layer in model.model.layers:  # type: ignore[union-attr]
        for child, label in (
            (layer.input_layernorm, "norm"),
            (layer.self_attn, "attention"),
            (layer.post_attention_layernorm, "norm"),
            (layer.mlp, "mlp"),
        ):
            inner = child.forward

            def forward(*args: Any, _inner: Any = inner, _label: str = label, **kwargs: Any) -> Any:
                with record_function(_label):
                    return _inner(*args, **kwargs)

            child.forward = forward  # type: ignore[method-assign]


# --8<-- [end:labels]


# --8<-- [start:generate]
def generate(
    model: torch.nn.Module, prompt: torch.Tensor, new_tokens: int, cache: str
) -> torch.Tensor:
    """Greedy decoding of exactly ``new_tokens`` tokens (no early stop)."""
    with torch.inference_mode():
        return model.generate(  # type: ignore[operator]
            prompt,
            attention_mask=torch.ones_like(prompt),
            do_sample=False,
            min_new_tokens=new_tokens,
            max_new_tokens=new_tokens,
            cache_implementation=cache,
            disable_compile=True,  # we compile the decode forward ourselves (label_phases)
            pad_token_id=0,
        )


# --8<-- [end:generate]


def time_generate(
    model: torch.nn.Module,
    prompt: torch.Tensor,
    new_tokens: int,
    cache: str,
    device: torch.device,
    repeats: int,
) -> dict[str, float]:
    """Wall clock of unprofiled generate calls: time to first token and per output token.

    The first token exists once the prefill's logits have been turned into a token id, i.e. when
    ``generate`` starts the first decode forward: a wrapper around the forward waits for the GPU
    there (once per call) and reads the clock. The time per output token is the rest of the
    call spread over the remaining tokens. Every call has the same length, so a static cache
    and its CUDA graphs are reused rather than rebuilt.
    """
    labelled_forward = model.forward
    first_token_at: list[float] = []

    def forward(*args: Any, **kwargs: Any) -> Any:
        input_ids = kwargs.get("input_ids", args[0] if args else None)
        if input_ids is not None and input_ids.shape[1] == 1 and not first_token_at:
            synchronize(device)
            first_token_at.append(time.perf_counter())
        return labelled_forward(*args, **kwargs)

    model.forward = forward  # type: ignore[method-assign]
    firsts, totals = [], []
    try:
        for _ in range(repeats):
            first_token_at.clear()
            synchronize(device)
            t0 = time.perf_counter()
            generate(model, prompt, new_tokens, cache)
            synchronize(device)
            totals.append(time.perf_counter() - t0)
            firsts.append(first_token_at[0] - t0)
    finally:
        model.forward = labelled_forward  # type: ignore[method-assign]
    ttft, total = statistics.median(firsts), statistics.median(totals)
    return {
        "ttft_s": round(ttft, 6),
        "generate_s": round(total, 6),
        "tpot_s": round((total - ttft) / (new_tokens - 1), 6),
        "tokens_per_s": round(prompt.shape[0] * new_tokens / total, 3),
    }


def count_parameters(model: torch.nn.Module) -> tuple[int, int]:
    params = list(model.parameters())
    return sum(p.numel() for p in params), sum(p.numel() * p.element_size() for p in params)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="cpu", help="model shape")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp32")
    parser.add_argument("--batch", type=int, default=1, help="sequences generated together")
    parser.add_argument("--prompt-len", type=int, default=32, help="prompt tokens per sequence")
    parser.add_argument("--new-tokens", type=int, default=8, help="tokens generated per call")
    parser.add_argument("--cache", choices=["dynamic", "static"], default="dynamic")
    parser.add_argument(
        "--compile",
        action="store_true",
        help='torch.compile(mode="reduce-overhead") the decode forward (needs --cache static)',
    )
    parser.add_argument(
        "--layer-labels", action="store_true", help="label attention, MLP and norms (eager)"
    )
    parser.add_argument("--timing-repeats", type=int, default=5, help="unprofiled timing runs")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    if args.compile and args.cache != "static":
        parser.error("--compile needs --cache static (CUDA graphs need fixed shapes)")
    if args.compile and args.layer_labels:
        parser.error("--layer-labels is for eager runs (labels inside a compiled graph break it)")
    if args.new_tokens < 2:
        parser.error("--new-tokens must be at least 2 (one prefill token, then decodes)")

    device = resolve_device(args.device)
    model = build_model(args.size, DTYPES[args.dtype], device)
    # --8<-- [start:compile]
    decode_forward = None
    if args.compile:
        decode_forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    label_phases(model, decode_forward)
    # --8<-- [end:compile]
    if args.layer_labels:
        label_layers(model)
    prompt = make_prompt(args.batch, args.prompt_len, model.config.vocab_size, device)

    # The first call pays for compilation (and CUDA graph capture) when --compile is on.
    synchronize(device)
    t0 = time.perf_counter()
    generate(model, prompt, args.new_tokens, args.cache)
    synchronize(device)
    first_call_s = time.perf_counter() - t0
    wall_clock = time_generate(
        model, prompt, args.new_tokens, args.cache, device, args.timing_repeats
    )
    wall_clock["first_call_s"] = round(first_call_s, 6)
    parameters, parameter_bytes = count_parameters(model)

    # An empty annotation that names the device in the trace itself, so SQL can look up its
    # memory bandwidth (the trace has no other record of which GPU it came from).
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"

    def step() -> None:
        with record_function(f"device={device_name}"):
            pass
        generate(model, prompt, args.new_tokens, args.cache)

    profile_steps(
        step,
        device=device,
        out_dir=args.out,
        sched=schedule_from_args(args),
        label="generate",
        settings={
            "size": args.size,
            "dtype": args.dtype,
            "batch": args.batch,
            "prompt_len": args.prompt_len,
            "new_tokens": args.new_tokens,
            "cache": args.cache,
            "compile": args.compile,
            "layer_labels": args.layer_labels,
            "model": {
                **SIZES[args.size],
                "parameters": parameters,
                "parameter_bytes": parameter_bytes,
            },
            "wall_clock": wall_clock,
        },
    )


if __name__ == "__main__":
    main()
