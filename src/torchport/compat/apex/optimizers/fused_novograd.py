"""FusedNovoGrad: apex's NovoGrad (Jasper, arXiv:1904.03288), which has no native twin.

The update, per parameter tensor p with gradient g, as apex's multi_tensor_novograd computes it
(in float32):
    n      = ||g||_2 (norm_type=2) or max|g| (norm_type=0)
    v      = sqrt(beta2 * v**2 + (1 - beta2) * n**2)    (L2)    or  beta2 * v + (1 - beta2) * n  (inf)
             v starts at 0 (init_zero) or at the first step's n
    bc1    = 1 - beta1**step,  bc2 = sqrt(1 - beta2**step)   (1 without bias_correction)
    beta3  = 1 - beta1 with grad_averaging, else 1
    reg_inside_moment:  g' = g / (v / bc2 + eps) + wd * p;  m = beta1 * m + beta3 * g';  p -= lr * m / bc1
    otherwise:          m = beta1 * m + beta3 * g;  p -= lr * ((m / bc1) / (v / bc2 + eps) + wd * p)
The step count is per parameter group (apex's group["step"]); v is kept per parameter in its
state (apex keeps one tensor of norms per group).
"""

from __future__ import annotations

import math

import torch

from torchport.optim.closure import closure_loss


class FusedNovoGrad(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, bias_correction=True, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, reg_inside_moment=False, grad_averaging=True, norm_type=2, init_zero=False,
                 set_grad_none=True):
        if amsgrad:
            raise RuntimeError("FusedNovoGrad does not support the AMSGrad variant.")
        if norm_type not in (0, 2):
            raise RuntimeError("FusedNovoGrad only support l2/inf norm now.")
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=tuple(betas), eps=eps,
                        weight_decay=weight_decay, grad_averaging=grad_averaging, norm_type=norm_type,
                        init_zero=init_zero)
        super().__init__(params, defaults)
        self.moment_mode = 0 if reg_inside_moment else 1
        self.set_grad_none = set_grad_none

    def zero_grad(self, set_to_none: bool | None = None):
        super().zero_grad(set_to_none=self.set_grad_none if set_to_none is None else set_to_none)

    @torch.no_grad()
    def step(self, closure=None):
        loss = closure_loss(closure)
        for group in self.param_groups:
            group["step"] = group.get("step", 0) + 1
            for p in group["params"]:
                if p.grad is not None:
                    if p.grad.is_sparse:
                        raise RuntimeError("FusedNovoGrad does not support sparse gradients")
                    self._update(p, group)
        return loss

    def _update(self, p: torch.Tensor, group: dict) -> None:
        beta1, beta2 = group["betas"]
        step, lr, eps, decay = group["step"], group["lr"], group["eps"], group["weight_decay"]
        grad = p.grad.float()
        norm = grad.abs().max() if group["norm_type"] == 0 else torch.linalg.vector_norm(grad)
        state = self.state[p]
        if not state:
            state["exp_avg"] = torch.zeros_like(p, dtype=torch.float32)
            state["exp_avg_sq"] = torch.zeros((), device=p.device) if group["init_zero"] else norm.clone()
        v = state["exp_avg_sq"]
        if group["norm_type"] == 0:
            v.mul_(beta2).add_(norm, alpha=1 - beta2)
        else:
            v.copy_(torch.sqrt(beta2 * v * v + (1 - beta2) * norm * norm))
        bc1, bc2 = (1 - beta1**step, math.sqrt(1 - beta2**step)) if group["bias_correction"] else (1.0, 1.0)
        beta3 = 1 - beta1 if group["grad_averaging"] else 1.0
        denom = v / bc2 + eps
        m, weight = state["exp_avg"], p.float()
        if self.moment_mode == 0:
            m.mul_(beta1).add_(grad / denom + decay * weight, alpha=beta3)
            update = m / bc1
        else:
            m.mul_(beta1).add_(grad, alpha=beta3)
            update = (m / bc1) / denom + decay * weight
        p.copy_(weight - lr * update)
