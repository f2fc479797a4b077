"""NpuFusedLamb against the installed pytorch-lamb 1.0.0, the code torch_npu's LAMB was modelled
on (the option grid compares it with torch_npu's own math, transcribed)."""

from __future__ import annotations

import pytest
import torch

from _optim_harness import assert_models_match, assert_moved, batches, loss_of, make_model, train

import torchport.optim as fo

# pytorch-lamb calls the deprecated add_(scalar, tensor) overloads
pytestmark = pytest.mark.filterwarnings("ignore:This overload of add:UserWarning")


def _model_without_zero_params(seed: int = 0):
    """pytorch-lamb gives a parameter of norm 0 a trust ratio of 0, so it never moves (torch_npu
    makes that ratio 1); with no such parameter the two agree."""
    model = make_model(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.norm() == 0:
                p.fill_(0.05)
    return model


@pytest.mark.parametrize("options", [dict(), dict(betas=(0.8, 0.9), weight_decay=0.1),
                                     dict(weight_decay=0.1, adam=True)],
                         ids=["defaults", "betas,weight_decay", "adam"])
def test_matches_pytorch_lamb(cybertron_lamb, options):
    fused_model, ref_model = _model_without_zero_params(), _model_without_zero_params()
    fused = fo.NpuFusedLamb(fused_model.parameters(), lr=1e-2, **options)
    ref = cybertron_lamb.Lamb(ref_model.parameters(), lr=1e-2, **options)
    data = batches(30)
    train(ref_model, ref, data)
    train(fused_model, fused, data)
    assert_models_match(fused_model, ref_model)
    assert_moved(fused_model, _model_without_zero_params())


def test_pytorch_lamb_checkpoint_resumes_identically(cybertron_lamb):
    """Its state also holds weight_norm, adam_norm and trust_ratio, which are outputs, not state."""
    fused_model, ref_model = _model_without_zero_params(), _model_without_zero_params()
    ref = cybertron_lamb.Lamb(ref_model.parameters(), lr=1e-2, weight_decay=0.1)
    data = batches(20)
    train(ref_model, ref, data[:10])
    assert "trust_ratio" in ref.state_dict()["state"][0]
    fused_model.load_state_dict(ref_model.state_dict())
    fused = fo.NpuFusedLamb(fused_model.parameters(), lr=1e-2, weight_decay=0.1)
    fused.load_state_dict(ref.state_dict())
    assert fused.state_dict()["state"][0]["step"] == 10
    train(ref_model, ref, data[10:])
    train(fused_model, fused, data[10:])
    assert_models_match(fused_model, ref_model)


def test_zero_norm_parameter_takes_a_plain_adam_step():
    """torch_npu's guard: trust ratio 1, so step 1 moves p by lr * m / (sqrt(v) + eps), which
    without bias correction is lr * (1 - b1) / sqrt(1 - b2) per unit gradient sign."""
    p = torch.nn.Parameter(torch.zeros(4))
    opt = fo.NpuFusedLamb([p], lr=0.1, betas=(0.9, 0.99), eps=0.0)
    p.grad = torch.tensor([1.0, -2.0, 3.0, -4.0])
    opt.step()
    expected = -0.1 * 0.1 / (0.01 ** 0.5) * p.grad.sign()
    torch.testing.assert_close(p.detach(), expected)


def test_global_grad_norm_scales_the_update_not_the_gradient():
    model = make_model()
    opt = fo.NpuFusedLamb(model.parameters(), lr=1e-2, use_global_grad_norm=True)
    loss_of(model, batches(1)[0]).mul(1e3).backward()
    grads = [p.grad.clone() for p in model.parameters()]
    assert torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads])) > 1
    opt.step()
    for p, g in zip(model.parameters(), grads):
        assert torch.equal(p.grad, g)
