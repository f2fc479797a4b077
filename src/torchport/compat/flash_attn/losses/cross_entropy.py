"""flash_attn.losses.cross_entropy on torch: CrossEntropyLoss with flash-attn's logit scale and
z-loss (lse_square_scale * logsumexp^2), computed in float32. Vocabulary split across a process
group (tensor parallelism) has no stand-in."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from torchport.apis.kernels_llm import FLASH_ATTN
from torchport.compat import _kernels_log
from torchport.compat._kernels_log import module_getattr

MODULE = f"{FLASH_ATTN}.losses.cross_entropy"


class CrossEntropyLoss(torch.nn.Module):
    def __init__(self, ignore_index=-100, reduction="mean", label_smoothing=0.0, logit_scale=1.0,
                 lse_square_scale=0.0, inplace_backward=False, process_group=None, return_z_loss=False):
        super().__init__()
        if process_group is not None:
            raise NotImplementedError(f"{MODULE}.CrossEntropyLoss(process_group=...): a vocabulary split across "
                                      "ranks has no stand-in in torchport: gather the logits first")
        if reduction not in ("mean", "sum", "none"):
            raise NotImplementedError(f"{MODULE}.CrossEntropyLoss: reduction={reduction!r} (mean, sum or none)")
        _kernels_log.adapted(f"{MODULE}.CrossEntropyLoss", "torch.nn.functional.cross_entropy",
                             "the same loss, unfused, in float32")
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing
        self.logit_scale, self.lse_square_scale, self.return_z_loss = logit_scale, lse_square_scale, return_z_loss

    def forward(self, input, target):
        logits = input.float() * self.logit_scale
        losses = F.cross_entropy(logits, target, ignore_index=self.ignore_index, reduction="none",
                                 label_smoothing=self.label_smoothing)
        kept = target != self.ignore_index
        z_loss = torch.where(kept, self.lse_square_scale * torch.logsumexp(logits, dim=-1) ** 2, 0.0)
        losses = losses + z_loss
        loss, z_loss = self._reduce(losses, kept), self._reduce(z_loss, kept)
        return (loss, z_loss) if self.return_z_loss else loss

    def _reduce(self, values, kept):
        if self.reduction == "mean":
            return values.sum() / kept.sum().float()
        return values.sum() if self.reduction == "sum" else values


__getattr__ = module_getattr(MODULE, __name__)
