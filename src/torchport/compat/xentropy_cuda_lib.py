"""flash-attn 1's compiled cross-entropy extension (`import xentropy_cuda_lib`, from apex's
xentropy) on torch, for code that wraps its forward and backward in its own autograd Function
(TinyLlama's fused_cross_entropy.py does). Per row, with smoothing e over K classes:
loss = lse - (1 - e) x[label] - e / K sum(x); d loss / d x = softmax(x) - (1 - e) onehot - e / K.
Computed in float32; a label out of range (the ignored index) gets a loss its caller zeroes."""

from __future__ import annotations

import torch

from torchport.apis.kernels_llm import XENTROPY
from torchport.compat import _kernels_log
from torchport.compat._kernels_log import module_getattr


def forward(logits, labels, smoothing, total_classes=-1):
    """(losses, logsumexp), float32, one per row."""
    _kernels_log.adapted(f"{XENTROPY}.forward", "torch", "the loss, unfused, in float32")
    x = logits.float()
    classes = x.shape[-1] if total_classes is None or total_classes < 0 else total_classes
    lse = torch.logsumexp(x, dim=-1)
    picked = x.gather(1, _in_range(labels, x.shape[-1])[:, None])[:, 0]
    losses = lse - (1 - smoothing) * picked
    if smoothing:
        losses = losses - smoothing / classes * x.sum(-1)
    return losses, lse


def backward(grad_loss, logits, lse, labels, smoothing, inplace_backward=False, total_classes=-1):
    _kernels_log.adapted(f"{XENTROPY}.backward", "torch", "the gradient, unfused, in float32")
    x = logits.float()
    classes = x.shape[-1] if total_classes is None or total_classes < 0 else total_classes
    grad = torch.exp(x - lse[:, None])
    inside = (labels >= 0) & (labels < x.shape[-1])
    grad.scatter_add_(1, _in_range(labels, x.shape[-1])[:, None], -(1 - smoothing) * inside.float()[:, None])
    if smoothing:
        grad = grad - smoothing / classes
    grad = grad * grad_loss.float()[:, None]
    if inplace_backward:
        logits.data.copy_(grad)  # (into memory, as the kernel writes)
        return logits
    return grad.to(logits.dtype)


def _in_range(labels, classes: int):
    return labels.clamp(0, classes - 1)


__getattr__ = module_getattr(XENTROPY, __name__)
