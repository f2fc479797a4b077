"""apex.optimizers: each makes its native twin with apex's arguments (apis/apex.py's Replacements);
FusedNovoGrad follows apex's kernel."""

from __future__ import annotations

import math

import pytest
import torch

import torchport.optim
from torchport.compat.apex import optimizers
from torchport.compat.apex._replace import NoNativeEquivalent


def params(seed=0):
    torch.manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(4, 3)), torch.nn.Parameter(torch.randn(3))]


def test_fused_adam_is_adamw_by_default_and_adam_without_adam_w_mode():
    assert type(optimizers.FusedAdam(params(), lr=1e-3, weight_decay=0.1)) is torchport.optim.FusedAdamW
    plain = optimizers.FusedAdam(params(), lr=1e-3, adam_w_mode=False)
    assert type(plain) is torchport.optim.FusedAdam and plain.defaults["weight_decay"] == 0.0


def test_apexs_defaults_reach_the_twin():
    lamb = optimizers.FusedLAMB(params(), use_nvlamb=True)
    assert type(lamb) is torchport.optim.FusedLamb
    assert lamb.defaults["eps"] == 1e-6 and lamb.defaults["weight_decay"] == 0.01 and lamb.defaults["always_adapt"]
    adagrad = optimizers.FusedAdagrad(params())
    assert type(adagrad) is torch.optim.Adagrad and adagrad.defaults["eps"] == 1e-10
    sgd = optimizers.FusedSGD(params(), 0.1, momentum=0.9, nesterov=True)
    assert type(sgd) is torchport.optim.FusedSGD and sgd.defaults["nesterov"]


@pytest.mark.parametrize(("make", "argument"), [
    (lambda: optimizers.FusedAdam(params(), bias_correction=False), "bias_correction=False"),
    (lambda: optimizers.FusedSGD(params(), 0.1, wd_after_momentum=True), "wd_after_momentum=True"),
    (lambda: optimizers.FusedLAMB(params(), adam_w_mode=False), "adam_w_mode=False"),
    (lambda: optimizers.FusedMixedPrecisionLamb(params(), reduced_precision_dtype=torch.bfloat16),
     "reduced_precision_dtype=torch.bfloat16"),
])
def test_a_value_native_torch_cannot_keep_is_a_clear_error_naming_it(make, argument):
    with pytest.raises(NoNativeEquivalent, match=argument.replace("(", r"\(").replace(".", r"\.")):
        make()


def test_ascends_npu_fused_names_are_torchport_optims():
    sgd = optimizers.NpuFusedSGD(params(), lr=0.1, momentum=0.9)
    assert type(sgd) is torchport.optim.FusedSGD


def test_fused_mixed_precision_lamb_is_lambs_math():
    a, b = params(), params()
    lamb, mixed = optimizers.FusedLAMB(a, lr=0.01), optimizers.FusedMixedPrecisionLamb(b, lr=0.01)
    for p, q in zip(a, b):
        p.grad = q.grad = torch.ones_like(p)
    lamb.step(), mixed.step()
    assert all(torch.equal(p, q) for p, q in zip(a, b))


def novograd_reference(weights, grads, lr, betas, eps, decay, steps, reg_inside_moment, init_zero, norm_type):
    """apex's multi_tensor_novograd written out per tensor in float64, one step after another."""
    b1, b2 = betas
    weights = [w.double().clone() for w in weights]
    ms = [torch.zeros_like(w) for w in weights]
    vs = [None] * len(weights)
    for step in range(1, steps + 1):
        for i, (w, g) in enumerate(zip(weights, grads)):
            g = g.double()
            n = g.abs().max().item() if norm_type == 0 else math.sqrt((g * g).sum().item())
            v = vs[i] if vs[i] is not None else (0.0 if init_zero else n)
            v = b2 * v + (1 - b2) * n if norm_type == 0 else math.sqrt(b2 * v * v + (1 - b2) * n * n)
            vs[i] = v
            bc1, bc2 = 1 - b1 ** step, math.sqrt(1 - b2 ** step)
            denom = v / bc2 + eps
            if reg_inside_moment:
                ms[i] = b1 * ms[i] + (1 - b1) * (g / denom + decay * w)
                w -= lr * ms[i] / bc1
            else:
                ms[i] = b1 * ms[i] + (1 - b1) * g
                w -= lr * ((ms[i] / bc1) / denom + decay * w)
    return weights


@pytest.mark.parametrize(("reg_inside_moment", "init_zero", "norm_type"),
                         [(False, False, 2), (True, False, 2), (False, True, 2), (False, False, 0)])
def test_fused_novograd_follows_apexs_kernel(reg_inside_moment, init_zero, norm_type):
    weights = params()
    torch.manual_seed(3)
    grads = [torch.randn_like(w) for w in weights]
    start = [w.detach().clone() for w in weights]
    opt = optimizers.FusedNovoGrad(weights, lr=0.05, weight_decay=0.01, reg_inside_moment=reg_inside_moment,
                                   init_zero=init_zero, norm_type=norm_type)
    for _ in range(5):
        for w, g in zip(weights, grads):
            w.grad = g.clone()
        opt.step()
    expected = novograd_reference(start, grads, 0.05, (0.9, 0.999), 1e-8, 0.01, 5, reg_inside_moment, init_zero,
                                  norm_type)
    assert all(torch.allclose(w.double(), e, rtol=1e-5, atol=1e-6) for w, e in zip(weights, expected))
