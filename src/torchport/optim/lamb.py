"""FusedLamb: the math of timm's ``Lamb`` (timm 1.0.31, ``timm/optim/lamb.py``)."""

from __future__ import annotations

import torch

from .adam import adam_direction_
from .checks import check_betas, check_range, scalar
from .flat import FlatOptimizer, Run
from .segments import segment_norms, split_per_block


class FusedLamb(FlatOptimizer):
    """LAMB (NVLAMB variant) over flat buffers, following timm 1.0.31's ``Lamb``.

    * The global gradient norm over every parameter with a gradient clips the gradients used by the
      update (``g / max(1, norm / max_grad_norm)``) without modifying ``p.grad``;
      ``max_grad_norm=None`` disables it.
    * One step counter per parameter group drives bias correction; it counts every ``step()``
      call, and appears as ``param_groups[i]["step"]`` in checkpoints, as in timm.
    * The trust ratio ``||p|| / ||update||`` (1 where either is zero, at most 1 with
      ``trust_clip``) applies when ``weight_decay != 0`` or ``always_adapt``; both norms are
      per-parameter reductions batched over same-shape parameters, with no host sync.
    * ``decoupled_decay`` multiplies the parameter by ``1 - lr * weight_decay`` (``lr**2 / initial
      lr`` with ``corrected_weight_decay``) instead of adding ``weight_decay * p`` to the update.

    With grad averaging (the default) in fp32/fp64, the Adam direction ``m_hat / (sqrt(v_hat) +
    eps)`` comes from one pass of torch's fused Adam kernel (same math, rounding within ~3e-7
    after 30 steps); otherwise timm's ops run in cache-sized chunks. Defaults are timm's: ``lr=1e-3, bias_correction=True, betas=(0.9, 0.999), eps=1e-6,
    weight_decay=0.01, grad_averaging=True, max_grad_norm=1.0, trust_clip=False,
    always_adapt=False``. timm's ``caution`` is not supported. torch_npu's NpuFusedLamb follows
    cybertronai's LAMB instead (no bias correction, ``||p||`` clamped to 10); its ``NpuFusedLamb``
    alias here has timm's math and signature.
    """

    _step_format = "group"

    def __init__(self, params, lr=1e-3, bias_correction=True, betas=(0.9, 0.999), eps=1e-6,
                 weight_decay=0.01, grad_averaging=True, max_grad_norm=1.0, trust_clip=False,
                 always_adapt=False, decoupled_decay=False, corrected_weight_decay=False):
        check_range("learning rate", lr)
        check_range("epsilon", eps)
        check_range("weight_decay", weight_decay)
        check_betas(betas)
        if max_grad_norm is not None:
            check_range("max_grad_norm", max_grad_norm)
        if corrected_weight_decay and scalar(lr) <= 0:
            raise ValueError("corrected_weight_decay needs a positive (peak) learning rate")
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=tuple(betas), eps=eps,
                        weight_decay=weight_decay, grad_averaging=grad_averaging,
                        max_grad_norm=max_grad_norm, trust_clip=trust_clip,
                        always_adapt=always_adapt, caution=False, decoupled_decay=decoupled_decay,
                        corrected_weight_decay=corrected_weight_decay,
                        max_lr_snapshot=scalar(lr), foreach=None)
        super().__init__(params, defaults)
        self._clip = None

    def _state_spec(self, group):
        return {"exp_avg": 0.0, "exp_avg_sq": 0.0}

    def _begin_step(self, runs):
        """timm clips with one norm over all gradients of all groups (``defaults``' max norm)."""
        max_norm = self.defaults["max_grad_norm"]
        self._clip = None
        if max_norm is None:
            return
        live = [b for b in self._buckets if len(b.inactive) < len(b.segments)]
        device = live[0].device
        norms = [torch.linalg.vector_norm(b.grads).to(device) for b in live]
        total = torch.linalg.vector_norm(torch.stack(norms))
        self._clip = (total / max_norm).clamp_(min=1.0)

    def _update(self, run: Run) -> None:
        group = run.group
        if group.get("caution"):
            raise ValueError("FusedLamb does not implement timm's caution option")
        lr, eps, wd = scalar(group["lr"]), scalar(group["eps"]), scalar(group["weight_decay"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        beta3 = 1 - beta1 if group["grad_averaging"] else 1.0
        step = run.group_step
        if group["bias_correction"]:
            bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
        else:
            bc1, bc2 = 1.0, 1.0
        decoupled = group.get("decoupled_decay", False)
        wd_scale = lr
        if decoupled and group.get("corrected_weight_decay"):
            wd_scale = lr ** 2 / scalar(group["max_lr_snapshot"])
        adapt = wd != 0 or group["always_adapt"]
        clip = self._clip.to(run.bucket.device) if self._clip is not None else None
        for piece in run.pieces():
            p = piece.params
            update = piece.scratch("update")
            if (piece.fused_kernels() and beta3 == 1 - beta1
                    and p.dtype in (torch.float32, torch.float64)):
                self._adam_direction(piece, update, clip, beta1, beta2, eps, step,
                                     group["bias_correction"])
                directed = [(p, update)]
            else:  # each chunk's decay and step follow its direction, while it is in cache
                directed = self._chunked_direction(piece, update, clip, beta1, beta3, beta2, eps,
                                                   bc1, bc2)
            for pc, uc in directed:
                if wd != 0:
                    if decoupled:
                        pc.add_(pc, alpha=-wd_scale * wd)
                    else:
                        uc.add_(pc, alpha=wd)
                if not adapt:
                    pc.add_(uc, alpha=-lr)
            if not adapt:
                continue
            blocks = piece.blocks
            w_norm, u_norm = segment_norms(blocks, p), segment_norms(blocks, update)
            ratio = torch.where(w_norm > 0, torch.where(u_norm > 0, w_norm / u_norm, 1.0), 1.0)
            if group["trust_clip"]:
                ratio = torch.clamp(ratio, max=1.0)
            for block, r in zip(blocks, split_per_block(ratio, blocks)):
                u2 = block.matrix(update)
                u2.mul_(r)
                block.matrix(p).add_(u2, alpha=-lr)

    @staticmethod
    def _adam_direction(piece, update, clip, beta1, beta2, eps, step, bias_correction):
        """update = m_hat / (sqrt(v_hat) + eps), in one pass of torch's Adam kernel."""
        g = piece.grads
        if clip is not None:
            g = torch.div(g, clip, out=piece.scratch("clipped_grad"))
        adam_direction_(update, g, piece.state("exp_avg"), piece.state("exp_avg_sq"),
                        step if bias_correction else float("inf"), beta1, beta2, eps)

    @staticmethod
    def _chunked_direction(piece, update, clip, beta1, beta3, beta2, eps, bc1, bc2):
        """timm's single-tensor ops, chunk by chunk: yields (params, update) of each chunk once
        its direction is in `update`."""
        p, g = piece.params, piece.grads
        m, v = piece.state("exp_avg"), piece.state("exp_avg_sq")
        for c in piece.chunks():
            mc, vc = m[c], v[c]
            gc = g[c] / clip if clip is not None else g[c]
            if beta3 == 1 - beta1:
                mc.lerp_(gc, beta3)
            else:
                mc.mul_(beta1).add_(gc, alpha=beta3)
            vc.mul_(beta2).addcmul_(gc, gc, value=1 - beta2)
            denom = vc.sqrt().div_(bc2 ** 0.5).add_(eps)
            yield p[c], torch.div(mc, bc1, out=update[c]).div_(denom)
