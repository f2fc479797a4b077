"""apex.contrib.layer_norm.FastLayerNorm: torch's LayerNorm over the last dimension (the same
weight and bias, ones and zeros at first, the same state_dict keys), apex's eps default."""

from __future__ import annotations

import torch

from torchport.compat.apex import _log

API = "apex.contrib.layer_norm.FastLayerNorm"


class FastLayerNorm(torch.nn.LayerNorm):
    def __init__(self, hidden_size, eps=1e-5, memory_efficient=False):
        _log.same(API, "torch.nn.LayerNorm")
        super().__init__(hidden_size, eps=eps)
        self.epsilon = eps  # (apex's attribute name)
        self.memory_efficient = memory_efficient
