"""flash-attn's compiled dropout + residual add + LayerNorm/RMSNorm extension
(`import dropout_layer_norm`, csrc/layer_norm) on torch, for code that wraps its forward and
backward in its own autograd Function (TinyLlama's rmsnorm.py does). The plain forms
(dropout_add_ln_fwd / _bwd) are computed in float32 with the gradients written out; row and
column scales and the subset forms are refused (NotImplementedError naming them).

Forward, per row: x = dropout(x0) + residual; LayerNorm z = (x - mu) * rsigma * gamma + beta,
RMSNorm z = x * rsigma * gamma (+ beta). Backward with xhat the normalised x and g = dz * gamma:
LayerNorm dx = rsigma (g - mean(g) - xhat mean(g xhat)), RMSNorm dx = rsigma (g - xhat mean(g xhat)),
plus the gradient flowing into x itself (prenorm), then through the dropout mask to x0."""

from __future__ import annotations

import torch

from torchport.apis.kernels_llm import DROPOUT_LAYER_NORM
from torchport.compat import _kernels_log
from torchport.compat._kernels_log import module_getattr


def dropout_add_ln_fwd(x0, residual, gamma, beta, rowscale, colscale, x0_subset, z_subset, dropout_p, epsilon,
                       rowscale_const, z_numrows, gen, residual_in_fp32, is_rms_norm=False):
    """(z, x, dropout mask or None, mu, rsigma)."""
    _refuse(rowscale=rowscale, colscale=colscale, x0_subset=x0_subset, z_subset=z_subset)
    _kernels_log.adapted(f"{DROPOUT_LAYER_NORM}.dropout_add_ln_fwd", "torch", "dropout, add and norm, unfused")
    mask = None
    x = x0.float()
    if dropout_p > 0:
        mask = torch.rand(x.shape, device=x.device, generator=gen) >= dropout_p
        x = x * mask / (1 - dropout_p)
    if residual is not None:
        x = x + residual.float()
    mu, rsigma, xhat = _normalised(x, epsilon, is_rms_norm)
    z = xhat * gamma.float() + (beta.float() if beta is not None else 0.0)
    keep = torch.float32 if residual_in_fp32 else (residual.dtype if residual is not None else x0.dtype)
    return z.to(gamma.dtype), x.to(keep), mask, mu, rsigma


def dropout_add_ln_bwd(dz, dx, x, x0, dmask, mu, rsigma, gamma, rowscale, colscale, x0_subset, z_subset,
                       dropout_p, rowscale_const, x0_numrows, has_residual, is_rms_norm=False):
    """(dx0, dresidual or None, dgamma, dbeta, dgamma_part, dbeta_part)."""
    _refuse(rowscale=rowscale, colscale=colscale, x0_subset=x0_subset, z_subset=z_subset)
    _kernels_log.adapted(f"{DROPOUT_LAYER_NORM}.dropout_add_ln_bwd", "torch", "its gradients, unfused")
    xf, dzf = x.float(), dz.float()
    xhat = (xf - (0.0 if is_rms_norm else mu[:, None])) * rsigma[:, None]
    g = dzf * gamma.float()
    inner = (g * xhat).mean(-1, keepdim=True)
    grad = rsigma[:, None] * (g - xhat * inner - (0.0 if is_rms_norm else g.mean(-1, keepdim=True)))
    if dx is not None:
        grad = grad + dx.float()
    dresidual = grad.to(x.dtype) if has_residual else None
    dx0 = grad * dmask / (1 - dropout_p) if dmask is not None else grad
    dgamma, dbeta = (dzf * xhat).sum(0).to(gamma.dtype), dzf.sum(0).to(gamma.dtype)
    return dx0.to(x0.dtype if x0 is not None else dz.dtype), dresidual, dgamma, dbeta, dgamma, dbeta


def _normalised(x, epsilon, is_rms_norm):
    if is_rms_norm:
        mu = torch.zeros(x.shape[0], device=x.device)
        rsigma = torch.rsqrt(x.pow(2).mean(-1) + epsilon)
        return mu, rsigma, x * rsigma[:, None]
    mu = x.mean(-1)
    rsigma = torch.rsqrt((x - mu[:, None]).pow(2).mean(-1) + epsilon)
    return mu, rsigma, (x - mu[:, None]) * rsigma[:, None]


def _refuse(**arguments) -> None:
    for name, value in arguments.items():
        if value is not None:
            raise NotImplementedError(f"{DROPOUT_LAYER_NORM}: {name} has no stand-in in torchport "
                                      "(torch.nn.LayerNorm / RMSNorm after your own scaling)")


__getattr__ = module_getattr(DROPOUT_LAYER_NORM, __name__)
