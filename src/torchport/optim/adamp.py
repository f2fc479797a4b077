"""FusedAdamP: the math of timm's ``AdamP`` (timm 1.0.31, ``timm/optim/adamp.py``, from clovaai)."""

from __future__ import annotations

import math

import torch

from .adam import adam_direction_
from .checks import check_betas, check_range, scalar
from .flat import FlatOptimizer, Run
from .segments import Block


class FusedAdamP(FlatOptimizer):
    """AdamP over flat buffers, following timm 1.0.31's ``AdamP`` (clovaai/AdamP).

    Adam moments with bias correction give ``perturb = m / denom`` (Nesterov: ``(b1 m + (1-b1) g)
    / denom``); without Nesterov, in fp32/fp64, torch's fused Adam kernel computes them in one
    pass (see :func:`~torchport.optim.adam.adam_direction_`). For every parameter with more than
    one dimension, if the gradient is nearly orthogonal to the weight in its channel view
    (``p.reshape(p.size(0), -1)``) or else its layer view (``p.reshape(1, -1)``), i.e.
    ``max |cos| < delta / sqrt(view width)``, the radial component is removed from ``perturb`` and
    the weight decay is scaled by ``wd_ratio``.

    timm decides per parameter with a Python ``if`` (a host sync each). Here the cosines of all
    same-shape parameters are batched reductions and the decision is a mask, so a step has no
    per-parameter sync. Defaults are timm's: ``lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
    weight_decay=0, delta=0.1, wd_ratio=0.1, nesterov=False``; ``caution`` is not supported.
    State: ``step`` (int), ``exp_avg``, ``exp_avg_sq``.
    """

    _step_format = "int"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 delta=0.1, wd_ratio=0.1, nesterov=False):
        check_range("learning rate", lr)
        check_range("epsilon", eps)
        check_range("weight_decay", weight_decay)
        check_range("delta", delta)
        check_range("wd_ratio", wd_ratio)
        check_betas(betas)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        delta=delta, wd_ratio=wd_ratio, nesterov=nesterov, caution=False)
        super().__init__(params, defaults)

    def _state_spec(self, group):
        return {"exp_avg": 0.0, "exp_avg_sq": 0.0}

    def _update(self, run: Run) -> None:
        group = run.group
        if group.get("caution"):
            raise ValueError("FusedAdamP does not implement timm's caution option")
        lr, eps, wd = scalar(group["lr"]), scalar(group["eps"]), scalar(group["weight_decay"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        bc1, bc2 = 1 - beta1 ** run.step, 1 - beta2 ** run.step
        step_size = lr / bc1
        for piece in run.pieces():
            p, g = piece.params, piece.grads
            m, v = piece.state("exp_avg"), piece.state("exp_avg_sq")
            perturb = piece.temporary("perturb")
            if piece.fused_kernels() and not group["nesterov"] and p.dtype in (torch.float32, torch.float64):
                # exp_avg / denom (bias correction of the first moment undone: scale bc1), in one
                # pass instead of eight. (In half precision the kernel computes in fp32: timm's
                # ops in that dtype are run instead.)
                adam_direction_(perturb, g, m, v, piece.step, beta1, beta2, eps, scale=bc1)
            else:
                for c in piece.chunks():
                    gc, mc, vc = g[c], m[c], v[c]
                    mc.mul_(beta1).add_(gc, alpha=1 - beta1)
                    vc.mul_(beta2).addcmul_(gc, gc, value=1 - beta2)
                    denom = vc.sqrt().div_(math.sqrt(bc2)).add_(eps)
                    if group["nesterov"]:
                        torch.div(beta1 * mc + (1 - beta1) * gc, denom, out=perturb[c])
                    else:
                        torch.div(mc, denom, out=perturb[c])
            for block in piece.blocks:
                projected = None
                if len(block.shape) > 1:
                    projected = self._project(block, p, g, perturb, group, eps)
                if wd > 0:
                    if projected is None:
                        block.matrix(p).mul_(1.0 - lr * wd)
                    else:
                        # the multiplier in at least fp32, as torch does with timm's Python scalar
                        decay = torch.where(projected, 1.0 - lr * wd * group["wd_ratio"], 1.0 - lr * wd)
                        if p.dtype == torch.float64:
                            decay = decay.double()
                        block.matrix(p).mul_(decay.unsqueeze(1))
            p.add_(perturb, alpha=-step_size)

    @staticmethod
    def _project(block: Block, p, g, perturb, group, eps) -> torch.Tensor:
        """Removes the radial part of ``perturb`` where timm's test passes; returns which
        parameters of the block were projected."""
        if block.rows_outer:
            pr, gr, qr = block.rows(p), block.rows(g), block.rows(perturb)
        else:  # a layout where dim 0 is not outermost: go through logical-order copies
            pr, gr, qr = (_logical_rows(block, t) for t in (p, g, perturb))
        width = pr.shape[2]
        p_norm = torch.linalg.vector_norm(pr, dim=2)
        g_norm = torch.linalg.vector_norm(gr, dim=2)
        gp = (gr * pr).sum(dim=2)
        qp = (qr * pr).sum(dim=2)
        # F.cosine_similarity: x.y / (max(|x|, eps) * max(|y|, eps))
        cos_rows = (gp / (g_norm.clamp_min(eps) * p_norm.clamp_min(eps))).abs()
        channel = cos_rows.amax(dim=1) < group["delta"] / math.sqrt(width)
        p_layer = torch.linalg.vector_norm(p_norm, dim=1)
        g_layer = torch.linalg.vector_norm(g_norm, dim=1)
        cos_layer = (gp.sum(dim=1) / (g_layer.clamp_min(eps) * p_layer.clamp_min(eps))).abs()
        layer = ~channel & (cos_layer < group["delta"] / math.sqrt(width * pr.shape[1]))
        # perturb -= p_n * <p_n, perturb>, with p_n = p / (|p| + eps) per row (channel) or layer
        coef = torch.where(channel.unsqueeze(1), qp / (p_norm + eps) ** 2, 0.0)
        coef = coef + torch.where(layer, qp.sum(dim=1) / (p_layer + eps) ** 2, 0.0).unsqueeze(1)
        if block.rows_outer:
            qr.addcmul_(pr, coef.unsqueeze(2).to(qr.dtype), value=-1)
        else:
            _logical_sub_(block, perturb, p, coef)
        return channel | layer


def _logical_rows(block: Block, flat: torch.Tensor) -> torch.Tensor:
    return torch.stack([seg_view(block, flat, i).reshape(block.shape[0], -1)
                        for i in range(block.count)])


def seg_view(block: Block, flat: torch.Tensor, i: int) -> torch.Tensor:
    return flat.as_strided(block.shape, block.strides,
                           flat.storage_offset() + block.start + i * block.spacing)


def _logical_sub_(block: Block, perturb, p, coef) -> None:
    shape = (-1,) + (1,) * (len(block.shape) - 1)
    for i in range(block.count):
        seg_view(block, perturb, i).sub_(seg_view(block, p, i) * coef[i].reshape(shape).to(p.dtype))
