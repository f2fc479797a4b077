"""torch.cuda.amp, torch.autocast("cuda"), GradScaler and custom_fwd on the target.

Autocast stays on only where the CPU computes bfloat16 natively: the tests of what it does when on
say that the CPU does (`cpu_bf16(True)`); one test checks both kinds of CPU."""

from __future__ import annotations

import pytest
import torch


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_cuda_amp_autocast_runs_bfloat16_on_the_cpu(runtime_on, cpu_bf16, target):
    cpu_bf16(True)
    runtime_on(target)
    layer = torch.nn.Linear(4, 4)
    with torch.cuda.amp.autocast():
        assert torch.is_autocast_enabled("cpu") and torch.is_autocast_enabled("cuda")
        assert torch.get_autocast_dtype("cuda") == torch.bfloat16
        assert layer(torch.randn(2, 4)).dtype == torch.bfloat16
    with torch.cuda.amp.autocast(enabled=False):
        assert layer(torch.randn(2, 4)).dtype == torch.float32


def test_autocast_cuda_spellings(runtime_on, cpu_bf16):
    cpu_bf16(True)
    runtime_on("cpu")
    layer = torch.nn.Linear(4, 4)
    for context in (torch.autocast("cuda", dtype=torch.float16), torch.autocast(device_type="cuda"),
                    torch.amp.autocast("cuda", torch.float16)):
        with context:
            assert layer(torch.randn(2, 4)).dtype == torch.bfloat16

    @torch.cuda.amp.autocast()
    def forward(x):
        return layer(x)

    assert forward(torch.randn(2, 4)).dtype == torch.bfloat16


def test_grad_scaler_defaults_and_a_training_step(runtime_on):
    runtime_on("cpu")
    assert torch.amp.GradScaler()._device == "cpu"
    scaler = torch.cuda.amp.GradScaler(init_scale=8.0)
    assert isinstance(scaler, torch.amp.GradScaler) and scaler.get_scale() == 8.0
    layer = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    before = layer.weight.detach().clone()
    with torch.autocast("cuda"):
        loss = layer(torch.randn(8, 4)).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    assert not torch.equal(before, layer.weight)


def test_custom_fwd_turns_autocast_off_inside_on_the_target(runtime_on, cpu_bf16):
    cpu_bf16(True)
    runtime_on("cpu")
    seen = {}

    class Square(torch.autograd.Function):
        @staticmethod
        @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
        def forward(ctx, x):
            seen["autocast"] = torch.is_autocast_enabled("cpu")
            seen["dtype"] = x.dtype
            return x * x

        @staticmethod
        @torch.amp.custom_bwd(device_type="cuda")
        def backward(ctx, grad):
            return grad

    with torch.autocast("cuda"):
        Square.apply(torch.randn(3, dtype=torch.bfloat16))
    assert seen == {"autocast": False, "dtype": torch.float32}


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
@pytest.mark.parametrize("flags, expected", [({"avx512_bf16": True}, True), ({"sve_bf16": True}, True),
                                             ({"avx2": True}, False), ({"avx512_bf16": False}, False)])
def test_cpu_autocast_stays_on_only_where_the_cpu_computes_bfloat16_natively(runtime_on, monkeypatch, flags,
                                                                            expected, target):
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: flags)
    runtime_on(target)
    with torch.cuda.amp.autocast():
        assert torch.is_autocast_enabled("cpu") is expected
    with torch.autocast("cuda", dtype=torch.float16):
        assert torch.is_autocast_enabled("cpu") is expected
    with torch.autocast("cuda", dtype=torch.float16):
        product = torch.ones(2, 2) @ torch.ones(2, 2)
    assert product.dtype == (torch.bfloat16 if expected else torch.float32)
