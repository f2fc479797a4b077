"""FusedRMSpropTF: the math of timm's ``RMSpropTF`` (timm 1.0.31, ``timm/optim/rmsprop_tf.py``)."""

from __future__ import annotations

import torch

from .checks import check_range, scalar
from .flat import FlatOptimizer, Run
from .rmsprop import rmsprop_state


class FusedRMSpropTF(FlatOptimizer):
    """TensorFlow-style RMSprop over flat buffers, following timm 1.0.31's ``RMSpropTF``.

    Differences from torch's RMSprop, as in timm: ``square_avg`` starts at ONE, ``eps`` goes inside
    the square root, the squared average uses TF's order of ops, and with ``lr_in_momentum`` the
    learning rate is folded into the momentum buffer. ``decoupled_decay`` multiplies the parameter
    by ``1 - lr * weight_decay`` (``lr**2 / initial lr`` with ``corrected_weight_decay``); torch_npu's
    NpuFusedRMSpropTF drops the ``lr`` there, this class follows timm. Defaults are timm's:
    ``lr=1e-2, alpha=0.9, eps=1e-10, weight_decay=0, momentum=0, centered=False,
    decoupled_decay=False, lr_in_momentum=True``. timm's ``caution`` is not supported.
    State: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered).
    """

    # eight ops per chunk: 2x longer chunks measured 26.7-26.9 ms per step on ResNet-50 shapes
    # with momentum against 28.4 ms at 1x and 28.1-28.7 ms at 4x, interleaved (2 cores, 32 MiB L3)
    _chunk_factor = 2

    def __init__(self, params, lr=1e-2, alpha=0.9, eps=1e-10, weight_decay=0, momentum=0.,
                 centered=False, decoupled_decay=False, corrected_weight_decay=False,
                 lr_in_momentum=True):
        check_range("learning rate", lr)
        check_range("epsilon", eps)
        check_range("momentum", momentum)
        check_range("weight_decay", weight_decay)
        check_range("alpha value", alpha)
        if corrected_weight_decay and scalar(lr) <= 0:
            raise ValueError("corrected_weight_decay needs a positive (peak) learning rate")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, decoupled_decay=decoupled_decay,
                        corrected_weight_decay=corrected_weight_decay,
                        max_lr_snapshot=scalar(lr), lr_in_momentum=lr_in_momentum,
                        caution=False, foreach=None)
        super().__init__(params, defaults)

    def _state_spec(self, group):
        return rmsprop_state(group, square_avg=1.0)

    def _update(self, run: Run) -> None:
        group = run.group
        if group.get("caution"):
            raise ValueError("FusedRMSpropTF does not implement timm's caution option")
        lr, alpha, eps = scalar(group["lr"]), scalar(group["alpha"]), scalar(group["eps"])
        wd, momentum = scalar(group["weight_decay"]), scalar(group["momentum"])
        centered = group["centered"]
        wd_scale = lr
        if group.get("corrected_weight_decay"):
            wd_scale = lr ** 2 / scalar(group["max_lr_snapshot"])
        one_minus_alpha = 1.0 - alpha
        for chunk in run.chunk_views(*self._state_spec(group), temporaries=3):
            pc, gc, sqc = chunk["params"], chunk["grads"], chunk["square_avg"]
            grad_buffer, diff_buffer, avg_buffer = chunk["temporaries"]
            if wd != 0:
                if group["decoupled_decay"]:
                    pc.mul_(1.0 - wd_scale * wd)
                else:
                    gc = torch.add(gc, pc, alpha=wd, out=grad_buffer)
            sqc.add_(torch.pow(gc, 2, out=diff_buffer).sub_(sqc), alpha=one_minus_alpha)
            if centered:
                gac = chunk["grad_avg"]
                gac.add_(torch.sub(gc, gac, out=diff_buffer), alpha=one_minus_alpha)
                avg = torch.addcmul(sqc, gac, gac, value=-1, out=avg_buffer).add_(eps).sqrt_()
            else:
                avg = torch.add(sqc, eps, out=avg_buffer).sqrt_()
            if momentum > 0:
                bc = chunk["momentum_buffer"]
                bc.mul_(momentum)
                if group["lr_in_momentum"]:
                    bc.addcdiv_(gc, avg, value=lr)
                    pc.sub_(bc)
                else:
                    bc.addcdiv_(gc, avg)
                    pc.add_(bc, alpha=-lr)
            else:
                pc.addcdiv_(gc, avg, value=-lr)
