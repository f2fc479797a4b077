"""bitsandbytes' optimizers under the stand-in take the same steps as torch's 32-bit optimizers with
bitsandbytes' hyper-parameters (its defaults included), step by step; Lion follows its paper."""

from __future__ import annotations

import pytest
import torch

from torchport.compat.bitsandbytes import optim as bnb_optim


def train(optimizer_class, steps=5, **kwargs):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    optimizer = optimizer_class(model.parameters(), **kwargs)
    data = torch.randn(16, 4)
    trace = []
    for _ in range(steps):
        optimizer.zero_grad()
        model(data).pow(2).mean().backward()
        optimizer.step()
        trace.append([p.detach().clone() for p in model.parameters()])
    return trace


@pytest.mark.parametrize("name,native,kwargs", [
    ("AdamW8bit", torch.optim.AdamW, {"lr": 1e-2, "weight_decay": 1e-2}),  # (bitsandbytes' default decay)
    ("PagedAdamW8bit", torch.optim.AdamW, {"lr": 1e-2, "weight_decay": 1e-2}),
    ("PagedAdamW32bit", torch.optim.AdamW, {"lr": 1e-2, "weight_decay": 1e-2}),
    ("AdamW32bit", torch.optim.AdamW, {"lr": 1e-2, "weight_decay": 1e-2}),
    ("PagedAdamW", torch.optim.AdamW, {"lr": 1e-2, "weight_decay": 1e-2}),
    ("Adam8bit", torch.optim.Adam, {"lr": 1e-2}),
    ("SGD8bit", torch.optim.SGD, {"lr": 1e-2, "momentum": 0.9}),
    ("RMSprop8bit", torch.optim.RMSprop, {"lr": 1e-2}),
])
def test_an_8bit_or_paged_optimizer_steps_as_the_32bit_torch_optimizer(name, native, kwargs):
    given = {key: value for key, value in kwargs.items() if key != "weight_decay"}
    stand_in = train(getattr(bnb_optim, name), **given)
    expected = train(native, **kwargs)
    for step_got, step_expected in zip(stand_in, expected):
        for got, want in zip(step_got, step_expected):
            torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_bitsandbytes_knobs_are_accepted_by_position_and_name():
    params = [torch.nn.Parameter(torch.zeros(2))]
    optimizer = bnb_optim.AdamW8bit(params, 1e-3, (0.8, 0.9), 1e-6, 0.0, False, 8, None, 4096, 100, True,
                                    is_paged=True)
    assert optimizer.defaults["betas"] == (0.8, 0.9) and optimizer.defaults["weight_decay"] == 0.0
    assert isinstance(optimizer, torch.optim.AdamW)
    with pytest.raises(NotImplementedError, match="percentile_clipping"):
        bnb_optim.Adam8bit(params, percentile_clipping=5)


def test_lion8bit_follows_the_lion_update():
    weight = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.5]))
    optimizer = bnb_optim.Lion8bit([weight], lr=0.1, betas=(0.9, 0.99), weight_decay=0.5)
    momentum = torch.zeros(3)
    expected = weight.detach().clone()
    for gradient in (torch.tensor([0.3, -0.1, 0.0]), torch.tensor([-0.2, 0.4, 1.0])):
        weight.grad = gradient.clone()
        optimizer.step()
        expected = expected * (1 - 0.1 * 0.5) - 0.1 * torch.sign(0.9 * momentum + 0.1 * gradient)
        momentum = 0.99 * momentum + 0.01 * gradient
        torch.testing.assert_close(weight.detach(), expected)


def test_a_quantised_layer_has_no_stand_in_and_says_what_to_do():
    import torchport.compat.bitsandbytes as bnb

    with pytest.raises(AttributeError, match="keep the model in float32/bfloat16"):
        bnb.nn  # noqa: B018
