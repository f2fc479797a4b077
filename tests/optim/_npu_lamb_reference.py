"""torch_npu's ``NpuFusedLamb`` (``torch_npu/optim/npu_fused_lamb.py``) transcribed for the CPU.

torch_npu installs only beside an Ascend NPU, so its math is written out here line by line, one
parameter at a time where torch_npu works on combined buffers (the math is elementwise, or per
parameter for the norms). It is cybertronai's pytorch-lamb plus two additions: a trust ratio of 1
where either norm is zero, and ``use_global_grad_norm``. torch_npu reaches the global norm through
``get_optimizer_combined_grads()``, which it never defines; here it is the norm over every
gradient, as that method's name and the apex original say.
"""

from __future__ import annotations

import torch
from torch.optim import Optimizer


class NpuFusedLamb(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0, adam=False,
                 use_global_grad_norm=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        self.adam = adam
        self.use_global_grad_norm = use_global_grad_norm
        self.global_grad_norm = torch.tensor([1.0])
        super().__init__(params, defaults)

    def _get_global_grad_norm(self):
        global_norm = 0
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    global_norm += p.grad.pow(2).sum()
        return torch.as_tensor(global_norm).sqrt()

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if self.use_global_grad_norm:
            self.global_grad_norm = self._get_global_grad_norm()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            step_size = group["lr"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                state["step"] += 1
                grad = p.grad
                if self.global_grad_norm.item() > 1:
                    grad = grad / self.global_grad_norm
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                adam_step = exp_avg / exp_avg_sq.sqrt().add(group["eps"])
                if group["weight_decay"] != 0:
                    adam_step.add_(p, alpha=group["weight_decay"])
                trust_ratio = torch.ones_like(p)
                if not self.adam:
                    weight_norm = p.pow(2).sum().sqrt().clamp(0, 10)
                    adam_norm = adam_step.pow(2).sum().sqrt()
                    if not (weight_norm == 0 or adam_norm == 0):
                        trust_ratio.fill_(weight_norm / adam_norm)
                p.addcmul_(adam_step, trust_ratio, value=-step_size)
        return loss
