"""FusedAdadelta: the math of ``torch.optim.Adadelta`` (torch 2.13)."""

from __future__ import annotations

from .checks import check_range, scalar
from .flat import FlatOptimizer, Run


class FusedAdadelta(FlatOptimizer):
    """Adadelta over flat buffers, following ``torch.optim.Adadelta`` of torch 2.13.

    Defaults are torch's: ``lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False``. torch has
    no fused Adadelta kernel, so the single-tensor ops run over the flat buffer in cache-sized
    chunks, in torch's order (bit-identical to the for-loop in every dtype). State:
    ``step``, ``square_avg``, ``acc_delta``.
    """

    # compute-bound (two square roots): fewer, longer chunks measured 34 ms instead of 38 ms on
    # ResNet-50 shapes (bench/optim.py, 2 cores)
    _chunk_factor = 4

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, *, maximize=False):
        check_range("learning rate", lr)
        check_range("rho value", rho, 0.0, 1.0, high_open=False)
        check_range("epsilon value", eps)
        check_range("weight_decay value", weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=False, foreach=None, differentiable=False)
        super().__init__(params, defaults)

    def _state_spec(self, group):
        return {"square_avg": 0.0, "acc_delta": 0.0}

    def _update(self, run: Run) -> None:
        group = run.group
        lr, rho, eps = scalar(group["lr"]), scalar(group["rho"]), scalar(group["eps"])
        wd = scalar(group["weight_decay"])
        maximize = group.get("maximize", False)
        p, g = run.params, run.grads
        sq, acc = run.state("square_avg"), run.state("acc_delta")
        for c in run.chunks():
            pc = p[c]
            gc = -g[c] if maximize else g[c]
            if wd != 0:
                gc = gc.add(pc, alpha=wd)
            sqc, accc = sq[c], acc[c]
            sqc.mul_(rho).addcmul_(gc, gc, value=1 - rho)
            std = sqc.add(eps).sqrt_()
            delta = accc.add(eps).sqrt_().div_(std).mul_(gc)
            accc.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            pc.add_(delta, alpha=-lr)
