"""FusedAdam and FusedAdamW: the math of ``torch.optim.Adam`` / ``torch.optim.AdamW`` (torch 2.13)."""

from __future__ import annotations

import math

import torch

from .checks import check_betas, check_range, scalar
from .flat import FlatOptimizer, Run, step_grad


class FusedAdam(FlatOptimizer):
    """Adam over flat buffers, following ``torch.optim.Adam`` of torch 2.13 (non-capturable).

    Options and defaults are torch's: ``lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    amsgrad=False, maximize=False, decoupled_weight_decay=False``. The update runs through
    ``torch._fused_adam_`` / ``torch._fused_adamw_`` on the whole flat buffer where the device has
    them (as ``fused=True`` does per tensor), else through torch's single-tensor ops in cache-sized
    chunks. State and checkpoints have torch's keys: ``step``, ``exp_avg``, ``exp_avg_sq`` and
    ``max_exp_avg_sq`` (amsgrad).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, maximize=False, decoupled_weight_decay=False):
        check_range("learning rate", lr)
        check_range("epsilon value", eps)
        check_betas(betas)
        check_range("weight_decay value", weight_decay)
        # foreach / capturable / differentiable / fused are kept with torch's defaults so that a
        # checkpoint of this optimizer loads into torch.optim.Adam unchanged.
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=None, capturable=False,
                        differentiable=False, fused=None,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _state_spec(self, group):
        spec = {"exp_avg": 0.0, "exp_avg_sq": 0.0}
        if group.get("amsgrad", False):
            spec["max_exp_avg_sq"] = 0.0
        return spec

    def _update(self, run: Run) -> None:
        group = run.group
        lr = scalar(group["lr"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        wd = scalar(group["weight_decay"])
        eps = scalar(group["eps"])
        amsgrad = group.get("amsgrad", False)
        maximize = group.get("maximize", False)
        decoupled = group.get("decoupled_weight_decay", False)
        p, g, m, v = run.params, run.grads, run.state("exp_avg"), run.state("exp_avg_sq")
        vmax = run.state("max_exp_avg_sq") if amsgrad else None
        if run.fused_kernels():
            kernel = torch._fused_adamw_ if decoupled else torch._fused_adam_
            kernel([p], [g], [m], [v], [vmax] if amsgrad else [], [run.step_tensor()],
                   lr=lr, beta1=beta1, beta2=beta2, weight_decay=wd, eps=eps,
                   amsgrad=amsgrad, maximize=maximize)
            return
        bc1 = 1 - beta1 ** run.step
        bc2_sqrt = math.sqrt(1 - beta2 ** run.step)
        step_size = lr / bc1
        for c in run.chunks():
            pc, mc, vc = p[c], m[c], v[c]
            if decoupled and wd != 0:
                pc.mul_(1 - lr * wd)
            gc = step_grad(g[c], pc, maximize, 0.0 if decoupled else wd)
            mc.lerp_(gc, 1 - beta1)
            vc.mul_(beta2).addcmul_(gc, gc, value=1 - beta2)
            if amsgrad:
                torch.maximum(vmax[c], vc, out=vmax[c])
                denom = (vmax[c].sqrt() / bc2_sqrt).add_(eps)
            else:
                denom = (vc.sqrt() / bc2_sqrt).add_(eps)
            pc.addcdiv_(mc, denom, value=-step_size)


class FusedAdamW(FusedAdam):
    """AdamW over flat buffers, following ``torch.optim.AdamW`` of torch 2.13: Adam with
    decoupled weight decay (``p *= 1 - lr * weight_decay``), default ``weight_decay=1e-2``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, maximize=maximize, decoupled_weight_decay=True)


def adam_direction_(out: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor,
                    exp_avg_sq: torch.Tensor, step: float, beta1: float, beta2: float, eps: float,
                    scale: float = 1.0) -> None:
    """Updates Adam's moments and writes ``scale * m_hat / (sqrt(v_hat) + eps)`` into `out`, in
    one pass of torch's fused Adam kernel: run on `out` zeroed with ``lr = -scale``, it leaves
    the step's direction there. A `step` of +inf turns bias correction off (1 - b**inf = 1)."""
    out.zero_()
    steps = [torch.tensor(float(step), dtype=torch.float32, device=out.device)]
    torch._fused_adam_([out], [grad], [exp_avg], [exp_avg_sq], [], steps, lr=-scale, beta1=beta1,
                       beta2=beta2, weight_decay=0.0, eps=eps, amsgrad=False, maximize=False)
