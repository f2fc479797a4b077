"""FusedLamb: the math of timm's ``Lamb`` (timm 1.0.31, ``timm/optim/lamb.py``), on a LAMB step
shared with :class:`~torchport.optim.NpuFusedLamb`."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .adam import adam_direction_
from .checks import check_betas, check_range, scalar
from .flat import FlatOptimizer, Run
from .segments import segment_norms, split_per_block


class LambStep(FlatOptimizer):
    """The LAMB step both LAMB classes share: an optional global gradient clip, the Adam
    direction, weight decay, and per-parameter trust ratios batched over same-shape parameters
    with no host sync. Subclasses say how a group's options read (:meth:`_settings`), whether
    gradients are clipped (:meth:`_global_max_norm`), and how the trust ratio is formed and
    applied (:meth:`_trust_ratio`, :meth:`_step_block`)."""

    _clip: torch.Tensor | None = None

    def _state_spec(self, group):
        return {"exp_avg": 0.0, "exp_avg_sq": 0.0}

    def _global_max_norm(self) -> float | None:
        raise NotImplementedError

    def _settings(self, group: dict) -> "LambSettings":
        raise NotImplementedError

    def _trust_ratio(self, w_norm: torch.Tensor, u_norm: torch.Tensor,
                     s: "LambSettings") -> torch.Tensor:
        raise NotImplementedError

    @staticmethod
    def _step_block(p: torch.Tensor, update: torch.Tensor, ratio: torch.Tensor, lr: float) -> None:
        raise NotImplementedError

    def _begin_step(self, runs):
        """One norm over all gradients of all groups clips the gradients the update uses."""
        max_norm = self._global_max_norm()
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
        s = self._settings(group)
        step = run.group_step
        bc1, bc2 = (1 - s.beta1 ** step, 1 - s.beta2 ** step) if s.bias_correction else (1.0, 1.0)
        clip = self._clip.to(run.bucket.device) if self._clip is not None else None
        for piece in run.pieces():
            p = piece.params
            update = piece.temporary("update")
            if (piece.fused_kernels() and s.lerp_moments
                    and p.dtype in (torch.float32, torch.float64)):
                self._adam_direction(piece, update, clip, s, step)
                directed = [(p, update)]
            else:  # each chunk's decay and step follow its direction, while it is in cache
                directed = self._chunked_direction(piece, update, clip, s, bc1, bc2)
            for pc, uc in directed:
                if s.weight_decay != 0:
                    if s.decoupled:
                        pc.add_(pc, alpha=-s.wd_scale * s.weight_decay)
                    else:
                        uc.add_(pc, alpha=s.weight_decay)
                if not s.adapt:
                    pc.add_(uc, alpha=-s.lr)
            if not s.adapt:
                continue
            blocks = piece.blocks
            w_norm, u_norm = segment_norms(blocks, p), segment_norms(blocks, update)
            ratio = self._trust_ratio(w_norm, u_norm, s)
            for block, r in zip(blocks, split_per_block(ratio, blocks)):
                self._step_block(block.matrix(p), block.matrix(update), r, s.lr)

    @staticmethod
    def _adam_direction(piece, update, clip, s: "LambSettings", step):
        """update = m_hat / (sqrt(v_hat) + eps), in one pass of torch's Adam kernel."""
        g = piece.grads
        if clip is not None:
            g = torch.div(g, clip, out=piece.temporary("clipped grad"))
        adam_direction_(update, g, piece.state("exp_avg"), piece.state("exp_avg_sq"),
                        step if s.bias_correction else float("inf"), s.beta1, s.beta2, s.eps)

    @staticmethod
    def _chunked_direction(piece, update, clip, s: "LambSettings", bc1, bc2):
        """The reference's single-tensor ops, chunk by chunk: yields (params, update) of each
        chunk once its direction is in `update`."""
        p, g = piece.params, piece.grads
        m, v = piece.state("exp_avg"), piece.state("exp_avg_sq")
        for c in piece.chunks():
            mc, vc = m[c], v[c]
            gc = g[c] / clip if clip is not None else g[c]
            if s.lerp_moments:
                mc.lerp_(gc, s.beta3)
            else:
                mc.mul_(s.beta1).add_(gc, alpha=s.beta3)
            vc.mul_(s.beta2).addcmul_(gc, gc, value=1 - s.beta2)
            denom = vc.sqrt().div_(bc2 ** 0.5).add_(s.eps)
            yield p[c], torch.div(mc, bc1, out=update[c]).div_(denom)


class FusedLamb(LambStep):
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
    after 30 steps); otherwise timm's ops run in cache-sized chunks. Defaults are timm's:
    ``lr=1e-3, bias_correction=True, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01,
    grad_averaging=True, max_grad_norm=1.0, trust_clip=False, always_adapt=False``. timm's
    ``caution`` is not supported. torch_npu's NpuFusedLamb follows cybertronai's LAMB instead,
    with another signature: that is :class:`~torchport.optim.NpuFusedLamb`.
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

    def _global_max_norm(self) -> float | None:
        """timm's clip: one max norm for all groups, from ``defaults``."""
        return self.defaults["max_grad_norm"]

    def _settings(self, group: dict) -> "LambSettings":
        if group.get("caution"):
            raise ValueError("FusedLamb does not implement timm's caution option")
        lr, wd = scalar(group["lr"]), scalar(group["weight_decay"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        decoupled = group.get("decoupled_decay", False)
        wd_scale = lr
        if decoupled and group.get("corrected_weight_decay"):
            wd_scale = lr ** 2 / scalar(group["max_lr_snapshot"])
        beta3 = 1 - beta1 if group["grad_averaging"] else 1.0
        return LambSettings(
            lr=lr, eps=scalar(group["eps"]), weight_decay=wd, beta1=beta1, beta2=beta2,
            beta3=beta3, lerp_moments=beta3 == 1 - beta1,
            bias_correction=group["bias_correction"], decoupled=decoupled, wd_scale=wd_scale,
            adapt=wd != 0 or group["always_adapt"], trust_clip=group["trust_clip"])

    def _trust_ratio(self, w_norm: torch.Tensor, u_norm: torch.Tensor,
                     s: "LambSettings") -> torch.Tensor:
        """timm's ``||p|| / ||update||``, 1 where either norm is zero, at most 1 with trust_clip."""
        ratio = torch.where(w_norm > 0, torch.where(u_norm > 0, w_norm / u_norm, 1.0), 1.0)
        if s.trust_clip:
            ratio = torch.clamp(ratio, max=1.0)
        return ratio

    @staticmethod
    def _step_block(p: torch.Tensor, update: torch.Tensor, ratio: torch.Tensor, lr: float) -> None:
        """timm scales the update by the trust ratio, then steps: ``p -= lr * (ratio * u)``."""
        update.mul_(ratio)
        p.add_(update, alpha=-lr)


@dataclass(frozen=True)
class LambSettings:
    """One group's hyperparameters, as the shared LAMB step reads them."""

    lr: float
    eps: float
    weight_decay: float
    beta1: float
    beta2: float
    beta3: float  # the gradient's weight in exp_avg: 1 - beta1 with grad averaging, else 1
    # exp_avg.lerp_(g, beta3) (timm with grad averaging; torch's fused Adam kernel matches it
    # closely), else exp_avg.mul_(beta1).add_(g, alpha=beta3)
    lerp_moments: bool
    bias_correction: bool
    decoupled: bool  # weight decay on the parameter rather than in the update
    wd_scale: float  # the lr that multiplies decoupled decay
    adapt: bool  # apply the trust ratio
    trust_clip: bool  # the trust ratio at most 1 (timm's LAMBC)
