"""FusedBertAdam: the math of ``BertAdam`` from pytorch-pretrained-bert 0.6.2 (``optimization.py``)."""

from __future__ import annotations

import torch

from .bert_schedules import SCHEDULES
from .checks import check_range, scalar
from .flat import FlatOptimizer, Run
from .segments import segment_norms, split_per_block


class FusedBertAdam(FlatOptimizer):
    """BERT's Adam over flat buffers, following pytorch-pretrained-bert 0.6.2's ``BertAdam``.

    * Each parameter's gradient is clipped to ``max_grad_norm`` on its own (as
      ``clip_grad_norm_(p, max_grad_norm)``, in place on ``p.grad``); torch_npu's NpuFusedBertAdam
      clips the whole buffer at once instead, this class follows the original. The per-parameter
      norms are batched reductions over same-shape parameters, with no host sync.
    * No bias correction: ``update = m / (sqrt(v) + e) + weight_decay * p``.
    * ``lr * schedule.get_lr(step)`` is evaluated at the step count *before* the increment, so with a
      warmup the first step moves no parameter.

    Signature and defaults are BertAdam's: ``lr`` (required), ``warmup=-1, t_total=-1,
    schedule='warmup_linear', b1=0.9, b2=0.999, e=1e-6, weight_decay=0.01, max_grad_norm=1.0``;
    ``schedule`` may be a name or any object with ``get_lr(step)``. State: ``step`` (int),
    ``next_m``, ``next_v``.
    """

    _step_format = "int"

    def __init__(self, params, lr=None, warmup=-1, t_total=-1, schedule="warmup_linear",
                 b1=0.9, b2=0.999, e=1e-6, weight_decay=0.01, max_grad_norm=1.0, **kwargs):
        if lr is None:
            raise TypeError("FusedBertAdam needs a learning rate: lr=...")
        check_range("learning rate", lr)
        check_range("b1 parameter", b1, 0.0, 1.0)
        check_range("b2 parameter", b2, 0.0, 1.0)
        check_range("epsilon value", e)
        if not hasattr(schedule, "get_lr"):
            if schedule not in SCHEDULES:
                raise ValueError(f"Invalid schedule parameter: {schedule!r} (one of "
                                 f"{sorted(k for k in SCHEDULES if k)} or None)")
            schedule = SCHEDULES[schedule](warmup=warmup, t_total=t_total)
        defaults = dict(lr=lr, schedule=schedule, b1=b1, b2=b2, e=e, weight_decay=weight_decay,
                        max_grad_norm=max_grad_norm)
        super().__init__(params, defaults)

    def _state_spec(self, group):
        return {"next_m": 0.0, "next_v": 0.0}

    def get_lr(self) -> list[float]:
        """The scheduled learning rate of each parameter, as BertAdam reports it."""
        lrs = []
        for group in self.param_groups:
            for p in group["params"]:
                seg = self._seg_of[id(p)]
                if not seg.initialized:
                    return [0]
                step = self._group_steps[seg.group] - seg.skipped
                lrs.append(group["lr"] * group["schedule"].get_lr(step))
        return lrs

    def _update(self, run: Run) -> None:
        group = run.group
        b1, b2, e = scalar(group["b1"]), scalar(group["b2"]), scalar(group["e"])
        wd, max_norm = scalar(group["weight_decay"]), scalar(group["max_grad_norm"])
        lr = scalar(group["lr"]) * group["schedule"].get_lr(run.step - 1)
        for piece in run.pieces():
            g = piece.grads
            single = piece.hi - piece.lo == 1
            if max_norm > 0:
                blocks = piece.blocks
                norms = segment_norms(blocks, g)
                coef = torch.clamp(max_norm / (norms + 1e-6), max=1.0).to(g.dtype)
                if not single:
                    for block, c in zip(blocks, split_per_block(coef, blocks)):
                        block.matrix(g).mul_(c)
            for chunk in piece.chunk_views("next_m", "next_v", temporaries=2):
                pc, gc, mc, vc = chunk["params"], chunk["grads"], chunk["next_m"], chunk["next_v"]
                update_buffer, decay_buffer = chunk["temporaries"]
                if single and max_norm > 0:  # a large parameter: clip chunk by chunk, in cache
                    gc.mul_(coef)
                mc.mul_(b1).add_(gc, alpha=1 - b1)
                vc.mul_(b2).addcmul_(gc, gc, value=1 - b2)
                # the reference's ops and roundings (no fused multiply-adds), in buffers that stay in cache
                update = torch.sqrt(vc, out=update_buffer).add_(e)
                torch.div(mc, update, out=update)
                if wd > 0.0:
                    update.add_(torch.mul(pc, wd, out=decay_buffer))
                pc.add_(update.mul_(-lr))
