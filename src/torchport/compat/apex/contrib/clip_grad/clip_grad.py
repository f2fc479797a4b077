"""apex.contrib.clip_grad.clip_grad_norm_: torch's, which apex's is "identical to" (its docstring),
with a fused CUDA kernel for the 2-norm that torch's foreach norm stands for here."""

from __future__ import annotations

import torch

from torchport.compat.apex import _log

API = "apex.contrib.clip_grad.clip_grad_norm_"
NATIVE = "torch.nn.utils.clip_grad_norm_"


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    _log.same(API, NATIVE)
    return torch.nn.utils.clip_grad_norm_(parameters, max_norm, norm_type=norm_type,
                                          error_if_nonfinite=error_if_nonfinite)
