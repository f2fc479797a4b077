"""NpuFusedLamb: torch_npu's LAMB, which is cybertronai's ``pytorch-lamb`` (1.0.0) with
torch_npu's signature and two additions."""

from __future__ import annotations

import torch

from .checks import check_betas, check_range, scalar
from .lamb import LambSettings, LambStep

# pytorch-lamb clamps ||p|| to this in the trust ratio ("the paper doesn't specify clamp values")
MAX_WEIGHT_NORM = 10.0


class NpuFusedLamb(LambStep):
    """LAMB as ``torch_npu.optim.NpuFusedLamb`` defines it, over flat buffers.

    torch_npu modelled this optimizer on cybertronai's ``pytorch-lamb`` 1.0.0, not on timm's Lamb
    (:class:`~torchport.optim.FusedLamb`), and scripts tuned for Ascend call it with torch_npu's
    signature: ``(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0, adam=False,
    use_global_grad_norm=False)``. The math is pytorch-lamb's:

    * no bias correction: ``adam_step = m / (sqrt(v) + eps) + weight_decay * p``;
    * the trust ratio ``min(||p||, 10) / ||adam_step||`` applies at every step, whatever the
      weight decay; ``adam=True`` fixes it at 1 (Adam without bias correction);
    * ``p -= (lr * trust_ratio) * adam_step``.

    torch_npu's two additions are kept: the trust ratio is 1 where either norm is zero
    (pytorch-lamb divides by zero there), and ``use_global_grad_norm=True`` divides the gradients
    the update uses, not ``p.grad``, by the L2 norm over all gradients when that norm exceeds 1
    (in torch_npu itself this option calls methods that torch_npu does not define). As there,
    ``adam`` and ``use_global_grad_norm`` are attributes of the optimizer, not of its param
    groups, so checkpoints have torch_npu's layout (``step`` a per-parameter int).

    The Adam direction is pytorch-lamb's ops (``mul_``/``add_`` moments: torch's fused Adam kernel
    rounds them differently) run over the flat buffer in cache-sized chunks.
    """

    _step_format = "int"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0, adam=False,
                 use_global_grad_norm=False):
        check_range("learning rate", lr)
        check_range("epsilon", eps)
        check_range("weight_decay", weight_decay)
        check_betas(betas)
        self.adam = adam
        self.use_global_grad_norm = use_global_grad_norm
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def __getstate__(self) -> dict:
        return {**super().__getstate__(), "adam": self.adam,
                "use_global_grad_norm": self.use_global_grad_norm}

    def _global_max_norm(self) -> float | None:
        """torch_npu divides by the global norm when it exceeds 1: a clip to max norm 1."""
        return 1.0 if self.use_global_grad_norm else None

    def _settings(self, group: dict) -> LambSettings:
        lr, wd = scalar(group["lr"]), scalar(group["weight_decay"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        return LambSettings(lr=lr, eps=scalar(group["eps"]), weight_decay=wd, beta1=beta1,
                            beta2=beta2, beta3=1 - beta1, lerp_moments=False,
                            bias_correction=False, decoupled=False, wd_scale=lr,
                            adapt=not self.adam, trust_clip=False)

    def _trust_ratio(self, w_norm: torch.Tensor, u_norm: torch.Tensor,
                     s: LambSettings) -> torch.Tensor:
        w_norm = w_norm.clamp(max=MAX_WEIGHT_NORM)
        return torch.where(w_norm > 0, torch.where(u_norm > 0, w_norm / u_norm, 1.0), 1.0)

    @staticmethod
    def _step_block(p: torch.Tensor, update: torch.Tensor, ratio: torch.Tensor, lr: float) -> None:
        """pytorch-lamb folds the ratio into the step size: ``p.add_(u, alpha=-lr * ratio)``,
        here one ``-lr * ratio`` per parameter (rounded as there) and one fused multiply-add."""
        p.addcmul_(update, torch.mul(ratio, -lr))
