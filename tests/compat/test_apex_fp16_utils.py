"""apex.fp16_utils: FP16_Optimizer steps as a GradScaler loop does; the rest names the native recipe."""

from __future__ import annotations

import re

import pytest
import torch

from torchport.apis.apex import FP16_UTILS_RECIPE
from torchport.compat.apex import fp16_utils


def run(wrapped: bool):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**32, growth_interval=1000)
    if wrapped:
        optimizer = fp16_utils.FP16_Optimizer(optimizer, dynamic_loss_scale=True)
    x = torch.randn(8, 4)
    for _ in range(3):
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        if wrapped:
            optimizer.backward(loss)
            optimizer.clip_master_grads(0.5)
            optimizer.step()
        else:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            scaler.step(optimizer), scaler.update()
    return model.weight.detach()


def test_fp16_optimizer_steps_as_the_grad_scaler_loop():
    assert torch.equal(run(True), run(False))


def test_the_other_helpers_raise_an_import_error_with_the_recipe():
    with pytest.raises(ImportError, match=re.escape(FP16_UTILS_RECIPE)):
        from torchport.compat.apex.fp16_utils import prep_param_lists  # noqa: F401
