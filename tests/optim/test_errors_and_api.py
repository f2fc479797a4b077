"""Clear errors for what flat buffers cannot hold, the torch_npu aliases, and import hygiene."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from torch import nn

import torchport.optim as fo

ALL = [fo.FusedSGD, fo.FusedAdam, fo.FusedAdamW, fo.FusedAdadelta, fo.FusedLamb, fo.FusedAdamP,
       fo.FusedBertAdam, fo.FusedRMSprop, fo.FusedRMSpropTF, fo.NpuFusedLamb]


def _make(cls, params, **kw):
    return cls(params, lr=1e-2, **kw)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_sparse_gradients_are_refused(cls):
    emb = nn.Embedding(10, 4, sparse=True)
    opt = _make(cls, emb.parameters())
    emb(torch.tensor([1, 2])).sum().backward()
    assert emb.weight.grad.is_sparse
    with pytest.raises(TypeError, match="sparse"):
        opt.step()


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_tensor_subclasses_are_refused(cls):
    class Tagged(torch.Tensor):
        pass

    param = torch.zeros(3).as_subclass(Tagged).requires_grad_()
    with pytest.raises(TypeError, match="subclass"):
        _make(cls, [param])


def test_gradient_subclasses_are_refused_and_the_buffer_is_untouched():
    class Tagged(torch.Tensor):
        pass

    param = nn.Parameter(torch.zeros(3))
    opt = fo.FusedSGD([param], lr=0.1)
    param.grad = torch.ones(3).as_subclass(Tagged)
    with pytest.raises(TypeError, match="gradient subclasses"):
        opt.step()
    assert torch.equal(param, torch.zeros(3))
    assert torch.equal(opt._buckets[0].grads, torch.zeros_like(opt._buckets[0].grads))


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_a_parameter_twice_in_a_group_is_refused(cls):
    p, q = nn.Parameter(torch.ones(3)), nn.Parameter(torch.ones(2))
    with pytest.raises(ValueError, match="appears twice in one param group"):
        _make(cls, [p, q, p])
    opt = _make(cls, [q])
    with pytest.raises(ValueError, match="appears twice"):
        opt.add_param_group({"params": [p, p]})
    assert len(opt.param_groups) == 1


def test_a_parameter_in_two_groups_is_refused_as_torch_does():
    p, q = nn.Parameter(torch.ones(3)), nn.Parameter(torch.ones(2))
    with pytest.raises(ValueError, match="more than one parameter group"):
        fo.FusedAdam([{"params": [p, q]}, {"params": [p]}])


def test_integer_and_complex_params_are_refused():
    with pytest.raises(TypeError, match="float32, float16, bfloat16"):
        fo.FusedAdam([torch.zeros(3, dtype=torch.complex64, requires_grad=True)])


@pytest.mark.parametrize("cls, kw, word", [
    (fo.FusedAdam, dict(lr=-1.0), "learning rate"),
    (fo.FusedAdam, dict(betas=(1.0, 0.9)), "beta1"),
    (fo.FusedAdamW, dict(eps=-1e-8), "epsilon"),
    (fo.FusedSGD, dict(lr=0.1, nesterov=True), "Nesterov"),
    (fo.FusedSGD, dict(lr=0.1, momentum=-0.5), "momentum"),
    (fo.FusedAdadelta, dict(rho=1.5), "rho"),
    (fo.FusedRMSprop, dict(alpha=-0.1), "alpha"),
    (fo.FusedRMSpropTF, dict(weight_decay=-1), "weight_decay"),
    (fo.FusedLamb, dict(max_grad_norm=-1.0), "max_grad_norm"),
    (fo.FusedAdamP, dict(delta=-0.1), "delta"),
    (fo.FusedBertAdam, dict(lr=0.1, schedule="warmup_bogus"), "schedule"),
    (fo.FusedBertAdam, dict(lr=0.1, warmup=1.5, t_total=10), "warmup"),
])
def test_bad_hyperparameters_name_the_problem(cls, kw, word):
    with pytest.raises(ValueError, match=word):
        cls([nn.Parameter(torch.zeros(2))], **kw)


def test_bert_adam_needs_lr():
    with pytest.raises(TypeError, match="lr"):
        fo.FusedBertAdam([nn.Parameter(torch.zeros(2))])


def test_npu_aliases():
    for cls in ALL:
        if cls is not fo.FusedLamb and cls is not fo.NpuFusedLamb:
            assert getattr(fo, "Npu" + cls.__name__) is cls


def test_npu_fused_lamb_takes_torch_npus_signature_positionally():
    """torch_npu's NpuFusedLamb is cybertronai's LAMB, with parameters timm's Lamb lacks."""
    params = [nn.Parameter(torch.ones(3))]
    opt = fo.NpuFusedLamb(params, 1e-2, (0.8, 0.9), 1e-5, 0.01, True, True)
    assert (opt.adam, opt.use_global_grad_norm) == (True, True)
    group = opt.param_groups[0]
    assert (group["lr"], group["betas"], group["eps"], group["weight_decay"]) == (
        1e-2, (0.8, 0.9), 1e-5, 0.01)
    with pytest.raises(TypeError, match="adam"):
        fo.FusedLamb(params, adam=True)


def test_bert_schedules_match_reference(bert_optim):
    from torchport.optim import bert_schedules as mine
    for name in ("warmup_linear", "warmup_constant", "warmup_cosine", "none"):
        a = mine.SCHEDULES[name](warmup=0.1, t_total=50)
        b = bert_optim.SCHEDULES[name](warmup=0.1, t_total=50)
        assert [a.get_lr(s) for s in range(70)] == [b.get_lr(s, nowarn=True) for s in range(70)]
    for cls in ("WarmupCosineWithHardRestartsSchedule", "WarmupCosineWithWarmupRestartsSchedule"):
        a = getattr(mine, cls)(warmup=0.05, t_total=40, cycles=2.0)
        b = getattr(bert_optim, cls)(warmup=0.05, t_total=40, cycles=2.0)
        assert [a.get_lr(s) for s in range(45)] == [b.get_lr(s, nowarn=True) for s in range(45)]


def test_zero_grad_set_to_none_false_zeroes_in_place():
    p = nn.Parameter(torch.ones(5))
    opt = fo.FusedSGD([p], lr=0.1)
    (p * 3).sum().backward()
    grad = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is grad and torch.equal(grad, torch.zeros(5))
    (p * 2).sum().backward()
    assert p.grad is grad and torch.equal(grad, torch.full((5,), 2.0))


def test_import_torchport_does_not_import_torch():
    code = "import sys, torchport; assert 'torch' not in sys.modules, 'torch was imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
