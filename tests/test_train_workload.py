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


def test_timed_steps_are_measured_and_recorded(tmp_path) -> None:
    """The profiler-off timings: one per step, min <= median <= max, added to the record."""
    import json

    from generators.store import CAPTURE_FILE, dump_json
    from generators.workloads.train import record_wall_clock, time_steps

    calls = []
    timings = time_steps(lambda: calls.append(1), torch.device("cpu"), 4)
    assert len(calls) == 4 and timings["timed_steps"] == 4
    assert 0 <= timings["step_min_s"] <= timings["step_median_s"] <= timings["step_max_s"]
    (tmp_path / CAPTURE_FILE).write_text(dump_json({"settings": {"wall_clock": {"warmup_s": 1}}}))
    record_wall_clock(tmp_path, timings)
    wall_clock = json.loads((tmp_path / CAPTURE_FILE).read_text())["settings"]["wall_clock"]
    assert wall_clock == {"warmup_s": 1, **timings}


def test_the_training_forward_builds_no_kv_cache() -> None:
    """The step passes use_cache=False: without it transformers returns a DynamicCache."""
    import inspect

    from generators.workloads import train

    model = build_model("cpu", torch.device("cpu"))
    tokens = torch.zeros((1, 8), dtype=torch.long)
    assert model(input_ids=tokens).past_key_values is not None  # the default builds one
    assert model(input_ids=tokens, use_cache=False).past_key_values is None
    assert "forward(input_ids=inputs, use_cache=False)" in inspect.getsource(train.main)
