"""apex.contrib.xentropy.SoftmaxCrossEntropyLoss: each sample's cross entropy with label smoothing,
0 where the label is `padding_idx`, as apex's fused kernel computes it, here by torch's
cross_entropy (the same smoothing: (1 - s) * nll + s * the mean of -log p over the classes)."""

from __future__ import annotations

import torch

from torchport.compat.apex import _log

API = "apex.contrib.xentropy.SoftmaxCrossEntropyLoss"


class SoftmaxCrossEntropyLoss:
    """Called as apex's autograd Function is: `SoftmaxCrossEntropyLoss.apply(logits, labels, ...)`."""

    @staticmethod
    def apply(logits, labels, smoothing=0.0, padding_idx=0, half_to_float=False):
        _log.same(API, "torch.nn.functional.cross_entropy")
        losses = torch.nn.functional.cross_entropy(logits.float(), labels, reduction="none",
                                                   label_smoothing=float(smoothing))
        losses = losses.masked_fill(labels == padding_idx, 0)
        return losses if half_to_float else losses.to(logits.dtype)
