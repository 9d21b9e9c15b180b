"""Part 5's workload (generators/workloads/train.py): its data, its optimizers, its registry."""

from __future__ import annotations

import torch

from generators.steps import get_step
from generators.workloads.train import SIZES, SyntheticTokens, build_model, build_optimizer


def test_synthetic_tokens_are_seeded_and_shifted() -> None:
    """Item i is the same on every run, and its targets are its inputs moved by one token."""
    data = SyntheticTokens(length=4, seq_len=16, vocab=100)
    inputs, targets = data[2]
    again, _ = SyntheticTokens(length=4, seq_len=16, vocab=100)[2]
    assert torch.equal(inputs, again)
    assert inputs.shape == targets.shape == (16,)
    assert torch.equal(inputs[1:], targets[:-1])
    assert not torch.equal(inputs, data[3][0])


def test_optimizer_kinds() -> None:
    model = build_model("cpu", torch.device("cpu"))
    assert model.training
    for kind, key in (("single", "foreach"), ("foreach", "foreach"), ("fused", "fused")):
        optimizer = build_optimizer(model, kind)
        assert isinstance(optimizer, torch.optim.AdamW)
        assert optimizer.defaults[key] is (kind != "single")


def test_every_variant_runs_on_both_devices_with_the_model_sizes() -> None:
    """Each variant has CPU and CUDA arguments: the CPU toy, and the GPU model on a GPU."""
    step = get_step("train")
    for variant in step.variants:
        cpu, cuda = variant.args_for("cpu"), variant.args_for("cuda")
        assert cpu is not None and cuda is not None, variant.name
        assert cpu[cpu.index("--size") + 1] == "cpu"
        assert cuda[cuda.index("--size") + 1] == "gpu"
    assert set(SIZES) == {"cpu", "gpu"}
