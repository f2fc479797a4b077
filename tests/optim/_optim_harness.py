"""Shared pieces of the fused-optimizer tests: a small model with mixed shapes and a lock-step
training loop that runs a fused optimizer beside its reference."""

from __future__ import annotations

import torch
from torch import nn


class MixedShapes(nn.Module):
    """Conv (4-D), linear (2-D), biases (1-D), a 0-dim scale and a layer norm: every kind of
    parameter shape an optimizer meets."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3)
        self.conv2 = nn.Conv2d(6, 4, 1, bias=False)
        self.norm = nn.LayerNorm(4 * 6 * 6)
        self.fc = nn.Linear(4 * 6 * 6, 12)
        self.head = nn.Linear(12, 3)
        self.scale = nn.Parameter(torch.tensor(0.7))

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = self.conv2(x).flatten(1)
        x = torch.tanh(self.fc(self.norm(x)))
        return self.head(x) * self.scale


def make_model(seed: int = 0, dtype=torch.float32, channels_last: bool = False) -> nn.Module:
    torch.manual_seed(seed)
    model = MixedShapes().to(dtype)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    return model


def batches(n: int, dtype=torch.float32, seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(8, 3, 8, 8, generator=g).to(dtype), torch.randn(8, 3, generator=g).to(dtype))
            for _ in range(n)]


def loss_of(model, batch):
    x, y = batch
    return (model(x) - y).pow(2).mean()


def train(model, opt, data, set_to_none=False, before_step=None):
    for i, batch in enumerate(data):
        opt.zero_grad(set_to_none=set_to_none)
        loss_of(model, batch).backward()
        if before_step is not None:
            before_step(i, model)
        opt.step()


def max_rel_err(model_a, model_b) -> float:
    worst = 0.0
    for (name, a), b in zip(model_a.named_parameters(), model_b.parameters()):
        a, b = a.detach().double(), b.detach().double()
        assert a.isfinite().all() and b.isfinite().all(), f"{name} is not finite"
        scale = b.abs().max().clamp_min(1e-12)
        worst = max(worst, ((a - b).abs().max() / scale).item())
    return worst


def assert_models_match(model_a, model_b, rtol=1e-6):
    err = max_rel_err(model_a, model_b)
    assert err <= rtol, f"parameters differ: max relative error {err:.3e} > {rtol:.0e}"


def assert_moved(model, reference_model):
    """Guards the comparisons: the run must have changed the parameters."""
    moved = max_rel_err(model, reference_model)
    assert moved > 1e-4, "training did not move the parameters; the comparison proves nothing"
