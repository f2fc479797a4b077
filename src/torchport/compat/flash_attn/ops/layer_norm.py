"""flash_attn.ops.layer_norm on torch: the functional forms of flash-attn's fused
dropout + add + LayerNorm."""

from __future__ import annotations

import torch.nn.functional as F

from torchport.apis.kernels_llm import FLASH_ATTN
from torchport.compat._kernels_log import module_getattr
from torchport.compat.flash_attn.ops.rms_norm import _dropout_add, _refuse

MODULE = f"{FLASH_ATTN}.ops.layer_norm"


def layer_norm(x, weight, bias, epsilon):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, epsilon)


def dropout_add_layer_norm(x0, residual, weight, bias, dropout_p, epsilon, rowscale=None, layerscale=None,
                           prenorm=False, residual_in_fp32=False, return_dropout_mask=False):
    """layer_norm(dropout(x0) + residual) (and the sum, with prenorm)."""
    _refuse(rowscale=rowscale, layerscale=layerscale, return_dropout_mask=return_dropout_mask)
    total = _dropout_add(x0, residual, dropout_p, residual_in_fp32)
    out = layer_norm(total.to(weight.dtype), weight, bias, epsilon)
    return (out, total) if prenorm else out


__getattr__ = module_getattr(MODULE, __name__)
