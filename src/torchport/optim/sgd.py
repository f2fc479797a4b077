"""FusedSGD: the math of ``torch.optim.SGD`` (torch 2.13)."""

from __future__ import annotations

import torch

from .checks import check_range, scalar
from .flat import FlatOptimizer, Run, step_grad

_KERNEL_DTYPES = (torch.float32, torch.float64)


class FusedSGD(FlatOptimizer):
    """SGD over flat buffers, following ``torch.optim.SGD`` of torch 2.13.

    Options and defaults are torch's: ``lr=1e-3, momentum=0, dampening=0, weight_decay=0,
    nesterov=False, maximize=False``. As in torch, the momentum buffer starts as a copy of the
    first gradient (no dampening on that step) and exists only when ``momentum != 0``; there is no
    ``step`` in the state. The update runs through ``torch._fused_sgd_`` on the whole flat buffer
    where the device has it (not for fp16/bf16 on CPU, where torch 2.13's kernel is inexact), else
    torch's single-tensor ops in cache-sized chunks.
    """

    _step_format = None

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False):
        check_range("learning rate", lr)
        check_range("momentum value", momentum)
        check_range("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=None, differentiable=False,
                        fused=None)
        super().__init__(params, defaults)

    def _state_spec(self, group):
        return {"momentum_buffer": 0.0} if group["momentum"] != 0 else {}

    def _update(self, run: Run) -> None:
        group = run.group
        lr = scalar(group["lr"])
        momentum = scalar(group["momentum"])
        dampening = scalar(group["dampening"])
        wd = scalar(group["weight_decay"])
        nesterov, maximize = group["nesterov"], group.get("maximize", False)
        first = run.step == 1
        p, g = run.params, run.grads
        buf = run.state("momentum_buffer") if momentum != 0 else None
        # torch 2.13's CPU _fused_sgd_ is wrong for fp16/bf16 (errors of ~10 ulp even without
        # momentum), so half types take the op path there.
        if run.fused_kernels() and (p.dtype in _KERNEL_DTYPES or p.device.type != "cpu"):
            torch._fused_sgd_([p], [g], [buf] if buf is not None else [], weight_decay=wd,
                              momentum=momentum, lr=lr, dampening=dampening, nesterov=nesterov,
                              maximize=maximize, is_first_step=first)
            return
        for c in run.chunks():
            pc = p[c]
            gc = step_grad(g[c], pc, maximize, wd)
            if buf is not None:
                bc = buf[c]
                if first:
                    bc.copy_(gc)
                else:
                    bc.mul_(momentum).add_(gc, alpha=1 - dampening)
                gc = gc.add(bc, alpha=momentum) if nesterov else bc
            pc.add_(gc, alpha=-lr)
