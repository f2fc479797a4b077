"""apex.parallel on torch DDP and SyncBatchNorm (BatchNorm kept where the device has no SyncBatchNorm,
as the target's rule says), apex.normalization on torch's LayerNorm and RMSNorm."""

from __future__ import annotations

import pytest
import torch

from torchport.compat.apex import normalization, parallel
from torchport.compat.apex._replace import NoNativeEquivalent


def bn_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6))


def test_convert_syncbn_model_keeps_batchnorm_on_the_cpu_as_its_target_says():
    model = bn_model()
    assert parallel.convert_syncbn_model(model) is model
    assert isinstance(model[1], torch.nn.BatchNorm1d)


def test_convert_syncbn_model_converts_where_the_device_has_syncbatchnorm(monkeypatch):
    monkeypatch.setattr(parallel._targets, "syncs_batchnorm", lambda device_type: True)
    assert isinstance(parallel.convert_syncbn_model(bn_model())[1], torch.nn.SyncBatchNorm)


def test_syncbatchnorm_normalises_as_batchnorm_on_a_device_without_one():
    x = torch.randn(8, 6)
    ours, theirs = parallel.SyncBatchNorm(6), torch.nn.BatchNorm1d(6)
    assert isinstance(ours, torch.nn.SyncBatchNorm)
    assert torch.allclose(ours(x), theirs(x)) and torch.allclose(ours.running_mean, theirs.running_mean)


def test_apex_ddp_refuses_what_torchs_cannot_do_by_name():
    with pytest.raises(NoNativeEquivalent, match="gradient_predivide_factor=2.0"):
        parallel.DistributedDataParallel(bn_model(), gradient_predivide_factor=2.0)
    with pytest.raises(NoNativeEquivalent, match="channel_last=True"):
        parallel.convert_syncbn_model(bn_model(), channel_last=True)


def test_apex_ddp_is_torchs_over_the_module_alone_and_leaves_the_tuning_to_it(monkeypatch, caplog):
    made = []
    monkeypatch.setattr(torch.nn.parallel.DistributedDataParallel, "__init__",
                        lambda self, *args, **kwargs: made.append((args, kwargs)) or torch.nn.Module.__init__(self))
    model = bn_model()
    ddp = parallel.DistributedDataParallel(model, delay_allreduce=True, message_size=1)
    assert isinstance(ddp, torch.nn.parallel.DistributedDataParallel) and made == [((model,), {})]
    assert "message_size, delay_allreduce ignored" in caplog.text


def test_the_norms_are_torchs_with_apexs_eps():
    layer, rms = normalization.FusedLayerNorm(5), normalization.FusedRMSNorm([5])
    assert type(layer).__mro__[1] is torch.nn.LayerNorm and layer.eps == 1e-5
    assert isinstance(rms, torch.nn.RMSNorm) and rms.eps == 1e-5
    assert list(layer.state_dict()) == ["weight", "bias"] and list(rms.state_dict()) == ["weight"]
    x = torch.randn(2, 5)
    assert torch.allclose(layer(x), torch.nn.functional.layer_norm(x, (5,), eps=1e-5))
    with pytest.raises(RuntimeError, match="elementwise_affine = False"):
        normalization.MixedFusedLayerNorm(5, elementwise_affine=False)
    assert normalization.MixedFusedRMSNorm(5).weight.shape == (5,)


def test_larc_scales_each_gradient_by_its_trust_ratio_and_steps_without_weight_decay():
    weight = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
    inner = torch.optim.SGD([weight], lr=0.1, weight_decay=0.01)
    larc = parallel.LARC(inner, trust_coefficient=0.02)
    weight.grad = torch.tensor([0.6, 0.8])
    larc.step()
    local_lr = min(0.02 * 5.0 / (1.0 + 5.0 * 0.01 + 1e-8) / 0.1, 1.0)
    expected = torch.tensor([3.0, 4.0]) - 0.1 * local_lr * (torch.tensor([0.6, 0.8]) + 0.01 * torch.tensor([3.0, 4.0]))
    assert torch.allclose(weight.detach(), expected) and inner.param_groups[0]["weight_decay"] == 0.01
