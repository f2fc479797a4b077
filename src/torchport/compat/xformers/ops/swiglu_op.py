"""xformers.ops.SwiGLU on torch: w3(silu(w1(x)) * w2(x)), its weights packed (w12) or not, as
xformers keeps them, so that state dicts load either way."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from torchport.compat import _kernels_log
from torchport.compat._kernels_log import module_getattr

MODULE = "xformers.ops"


def swiglu(x, w1, b1, w2, b2, w3, b3, *, op=None):
    _kernels_log.adapted(f"{MODULE}.swiglu", "torch", "w3(silu(w1 x) * w2 x), unfused")
    return F.linear(F.silu(F.linear(x, w1, b1)) * F.linear(x, w2, b2), w3, b3)


class SwiGLU(torch.nn.Module):
    def __init__(self, in_features, hidden_features, out_features=None, bias=True, *, _pack_weights=True):
        super().__init__()
        _kernels_log.adapted(f"{MODULE}.SwiGLU", "torch", "w3(silu(w1 x) * w2 x), unfused")
        out_features = out_features or in_features
        self.w12 = torch.nn.Linear(in_features, 2 * hidden_features, bias=bias) if _pack_weights else None
        if not _pack_weights:
            self.w1 = torch.nn.Linear(in_features, hidden_features, bias=bias)
            self.w2 = torch.nn.Linear(in_features, hidden_features, bias=bias)
        self.hidden_features = hidden_features
        self.in_features, self.out_features = in_features, out_features
        self.w3 = torch.nn.Linear(hidden_features, out_features, bias=bias)
        self.op = None

    def forward(self, x):
        if self.w12 is not None:
            gate, up = self.w12(x).chunk(2, dim=-1)
        else:
            gate, up = self.w1(x), self.w2(x)
        return self.w3(F.silu(gate) * up)


__getattr__ = module_getattr("xformers.ops.swiglu_op", __name__)
