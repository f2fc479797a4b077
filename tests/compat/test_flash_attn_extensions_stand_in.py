"""flash-attn's compiled extensions that projects call themselves (rotary_emb, xentropy_cuda_lib,
dropout_layer_norm), stood in on torch: each forward against its formula, each hand-written
backward against torch autograd of the same computation (in float32, as the kernels compute)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from torchport.compat import dropout_layer_norm, rotary_emb, xentropy_cuda_lib


def test_apply_rotary_writes_the_rotation_into_its_outputs_even_when_they_are_its_inputs():
    x = torch.randn(2, 3, 8)
    x1, x2 = x.chunk(2, dim=-1)
    cos, sin = torch.randn(3, 4), torch.randn(3, 4)
    expected = torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    rotary_emb.apply_rotary(x1, x2, cos, sin, x1, x2, False)
    torch.testing.assert_close(x, expected)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_xentropy_forward_and_backward_are_cross_entropys(smoothing):
    logits = torch.randn(5, 7, dtype=torch.float64, requires_grad=True)
    labels = torch.tensor([0, 6, 3, 3, 1])
    losses, lse = xentropy_cuda_lib.forward(logits.detach(), labels, smoothing)
    expected = F.cross_entropy(logits, labels, reduction="none", label_smoothing=smoothing)
    torch.testing.assert_close(losses, expected.detach().float())
    torch.testing.assert_close(lse, torch.logsumexp(logits.detach(), -1).float())
    grad_loss = torch.rand(5, dtype=torch.float64)
    (expected * grad_loss).sum().backward()
    grad = xentropy_cuda_lib.backward(grad_loss, logits.detach().clone(), lse, labels, smoothing, False)
    torch.testing.assert_close(grad, logits.grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rms", [False, True], ids=["LayerNorm", "RMSNorm"])
def test_dropout_add_ln_gradients_are_autograds_of_the_norm_of_the_sum(rms):
    x0 = torch.randn(4, 6, requires_grad=True)
    residual = torch.randn(4, 6, requires_grad=True)
    gamma = torch.rand(6, requires_grad=True)
    beta = None if rms else torch.rand(6, requires_grad=True)
    z, x, mask, mu, rsigma = dropout_layer_norm.dropout_add_ln_fwd(
        x0.detach(), residual.detach(), gamma.detach(), None if beta is None else beta.detach(), None, None, None,
        None, 0.0, 1e-5, 1.0, 0, None, False, rms)
    total = x0 + residual
    expected = (F.rms_norm(total, (6,), gamma, 1e-5) if rms else F.layer_norm(total, (6,), gamma, beta, 1e-5))
    torch.testing.assert_close(z, expected.detach())
    dz, dx = torch.randn(4, 6), torch.randn(4, 6)
    ((expected * dz).sum() + (total * dx).sum()).backward()
    dx0, dresidual, dgamma, dbeta, *_ = dropout_layer_norm.dropout_add_ln_bwd(
        dz, dx, x, x0.detach(), mask, mu, rsigma, gamma.detach(), None, None, None, None, 0.0, 1.0, 0, True, rms)
    torch.testing.assert_close(dx0, x0.grad)
    torch.testing.assert_close(dresidual, residual.grad)
    torch.testing.assert_close(dgamma, gamma.grad)
    if beta is not None:
        torch.testing.assert_close(dbeta, beta.grad)
