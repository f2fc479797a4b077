"""load_state_dict refuses a checkpoint that does not fit, names what does not fit, and leaves the
optimizer as it was: state, param groups, step counts and the parameters' place in the flat
buffers."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from _optim_cases import DEFAULTS, cases

# Two groups, so that a mismatch in group 1 comes after state that fits (group 0).
IN, OUT = 4, 3


def _model(out: int = OUT, seed: int = 0) -> nn.Sequential:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, IN), nn.Tanh(), nn.Linear(IN, out))


def _optimizer(case, model):
    cls, _, _, options = case
    return cls([{"params": model[0].parameters()}, {"params": model[2].parameters()}], **options)


def _train(model, opt, steps: int, seed: int = 1) -> None:
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        opt.zero_grad()
        model(torch.randn(8, 3, generator=g)).pow(2).mean().backward()
        opt.step()


def _trained(case, out: int = OUT, steps: int = 2):
    model = _model(out)
    opt = _optimizer(case, model)
    _train(model, opt, steps)
    return model, opt


def _frozen(value):
    """A state_dict with every tensor cloned (its state tensors are views of the flat buffers)
    and other objects (BertAdam's schedule) as their type and attributes, to compare by value."""
    if torch.is_tensor(value):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_frozen(v) for v in value)
    if hasattr(value, "__dict__"):
        return type(value), _frozen(vars(value))
    return value


def _assert_same(a, b, where="state_dict"):
    if torch.is_tensor(a):
        assert torch.is_tensor(b), where
        assert a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for k in a:
            _assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


def _assert_untouched(case, model, opt, before, ptrs):
    """Nothing changed, and training goes on as for a twin that never saw the failed load."""
    _assert_same(before, _frozen(opt.state_dict()))
    assert [p.data_ptr() for p in model.parameters()] == ptrs, "parameters left the flat buffers"
    twin_model, twin = _trained(case)
    _train(model, opt, 1, seed=2)
    _train(twin_model, twin, 1, seed=2)
    for p, q in zip(model.parameters(), twin_model.parameters()):
        assert torch.equal(p, q)
    _assert_same(_frozen(twin.state_dict()), _frozen(opt.state_dict()))


def _refused(case, checkpoint, match):
    model, opt = _trained(case)
    before = _frozen(opt.state_dict())
    ptrs = [p.data_ptr() for p in model.parameters()]
    with pytest.raises(ValueError, match=match):
        opt.load_state_dict(checkpoint)
    _assert_untouched(case, model, opt, before, ptrs)


@cases(DEFAULTS)
def test_state_that_would_broadcast_is_refused_naming_the_parameter(case):
    """Linear(4, 1)'s moments would broadcast into Linear(4, 3)'s flat-buffer views."""
    _, source = _trained(case, out=1)
    _refused(case, source.state_dict(),
             r"parameter 0 of param group 1 \(state index 2\): state '\w+' has shape \(1, 4\) "
             r"but the parameter has shape \(3, 4\); nothing was loaded")


@cases(DEFAULTS)
def test_state_of_another_shape_is_refused_naming_the_parameter(case):
    _, source = _trained(case, out=2)
    _refused(case, source.state_dict(),
             r"parameter 0 of param group 1 \(state index 2\): state '\w+' has shape \(2, 4\) "
             r"but the parameter has shape \(3, 4\); nothing was loaded")


@cases(DEFAULTS)
def test_a_wrong_bias_alone_is_refused(case):
    """The mismatch need not be the first tensor: here only the last parameter's state is off."""
    _, source = _trained(case)
    checkpoint = source.state_dict()
    entry = checkpoint["state"][3]
    key = next(k for k, v in entry.items() if k != "step" and torch.is_tensor(v))
    entry[key] = torch.zeros(OUT + 1)
    _refused(case, checkpoint,
             rf"parameter 1 of param group 1 \(state index 3\): state '{key}' has shape \(4,\) "
             r"but the parameter has shape \(3,\)")


@cases(DEFAULTS)
def test_a_different_number_of_groups_is_refused_as_torch_does(case):
    _, source = _trained(case)
    checkpoint = source.state_dict()
    checkpoint["param_groups"] = checkpoint["param_groups"][:1]
    _refused(case, checkpoint, "different number of parameter groups")


@cases(DEFAULTS)
def test_a_group_of_another_size_is_refused_as_torch_does(case):
    _, source = _trained(case)
    checkpoint = source.state_dict()
    groups = checkpoint["param_groups"]
    groups[0]["params"], groups[1]["params"] = groups[0]["params"] + groups[1]["params"][:1], \
        groups[1]["params"][1:]
    _refused(case, checkpoint, "doesn't match the size of optimizer's group")


@cases(DEFAULTS)
def test_a_checkpoint_that_fits_still_loads(case):
    source_model, source = _trained(case)
    model = _model(seed=5)
    model.load_state_dict(source_model.state_dict())
    opt = _optimizer(case, model)
    opt.load_state_dict(source.state_dict())
    _assert_same(_frozen(source.state_dict()), _frozen(opt.state_dict()))
    _train(source_model, source, 2, seed=2)
    _train(model, opt, 2, seed=2)
    for p, q in zip(model.parameters(), source_model.parameters()):
        assert torch.equal(p, q)
