"""flash_attn.ops.rms_norm on torch: RMSNorm (with flash-attn's optional residual add and prenorm
output) and the functional forms. Dropout before the add is torch's."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from torchport.apis.kernels_llm import FLASH_ATTN
from torchport.compat import _kernels_log
from torchport.compat._kernels_log import module_getattr

MODULE = f"{FLASH_ATTN}.ops.rms_norm"


def rms_norm(x, weight, epsilon):
    return F.rms_norm(x, (x.shape[-1],), weight, epsilon)


def dropout_add_rms_norm(x0, residual, weight, bias, dropout_p, epsilon, rowscale=None, layerscale=None,
                         prenorm=False, residual_in_fp32=False, return_dropout_mask=False):
    """norm(dropout(x0) + residual) (and the sum, with prenorm). rowscale/layerscale/the mask: refused."""
    _refuse(rowscale=rowscale, layerscale=layerscale, return_dropout_mask=return_dropout_mask)
    total = _dropout_add(x0, residual, dropout_p, residual_in_fp32)
    out = rms_norm(total.to(weight.dtype), weight, epsilon)
    if bias is not None:
        out = out + bias
    return (out, total) if prenorm else out


class RMSNorm(torch.nn.Module):
    """x / rms(x) * weight over the last dimension."""

    def __init__(self, hidden_size, eps=1e-5, device=None, dtype=None):
        super().__init__()
        _kernels_log.adapted(f"{MODULE}.RMSNorm", "torch.nn.functional.rms_norm", "the same normalisation, unfused")
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(hidden_size, device=device, dtype=dtype))
        self.register_parameter("bias", None)

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)


class DropoutAddRMSNorm(torch.nn.Module):
    """norm(dropout(x0) + residual); with prenorm, (normed, sum) as flash-attn's returns them."""

    def __init__(self, hidden_size, prenorm=False, p=0.0, eps=1e-5, residual_in_fp32=False, device=None, dtype=None):
        super().__init__()
        _kernels_log.adapted(f"{MODULE}.DropoutAddRMSNorm", "torch.nn.functional.rms_norm",
                             "dropout, add and normalisation, unfused")
        self.prenorm, self.p, self.eps, self.residual_in_fp32 = prenorm, p, eps, residual_in_fp32
        self.weight = torch.nn.Parameter(torch.ones(hidden_size, device=device, dtype=dtype))
        self.register_parameter("bias", None)

    def forward(self, x0, residual=None):
        return dropout_add_rms_norm(x0, residual, self.weight, None, self.p if self.training else 0.0, self.eps,
                                    prenorm=self.prenorm, residual_in_fp32=self.residual_in_fp32)


def _dropout_add(x0, residual, dropout_p, residual_in_fp32):
    """dropout(x0) + residual (residual None: dropout(x0) alone), in float32 with residual_in_fp32:
    the sum that dropout_add_rms_norm and dropout_add_layer_norm normalise."""
    total = F.dropout(x0, dropout_p) if dropout_p else x0
    if residual is not None:
        total = total + residual
    return total.float() if residual_in_fp32 else total


def _refuse(**arguments) -> None:
    for name, value in arguments.items():
        if value not in (None, False):
            raise NotImplementedError(f"{MODULE}: {name}= has no stand-in in torchport (scale the input yourself)")


__getattr__ = module_getattr(MODULE, __name__)
