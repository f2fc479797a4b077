"""The learning-rate schedules of pytorch-pretrained-bert 0.6.2's ``BertAdam``.

Each maps the step count to a multiplier of the base learning rate, through the training
progress ``x = step / t_total``; ``t_total < 0`` means a constant multiplier of 1, ``warmup=-1``
means no warmup. Any object with a ``get_lr(step)`` method (pytorch-pretrained-bert's own schedule
objects included) can be passed to :class:`~torchport.optim.FusedBertAdam` instead of a name.
"""

from __future__ import annotations

import math


class ConstantLR:
    """Multiplier 1 at every step."""

    warn_t_total = False

    def __init__(self, warmup: float = 0.002, t_total: float = -1, **_):
        if not 0.0 <= warmup < 1.0 and warmup != -1:
            raise ValueError(f"Invalid warmup: {warmup} - should be in [0.0, 1.0[ or -1")
        self.warmup, self.t_total = float(max(warmup, 0.0)), float(t_total)

    def get_lr(self, step: int, nowarn: bool = False) -> float:
        if self.t_total < 0:
            return 1.0
        return self.get_lr_(float(step) / self.t_total)

    def get_lr_(self, progress: float) -> float:
        return 1.0


class WarmupCosineSchedule(ConstantLR):
    """Linear warmup, then cosine decay over ``cycles`` (0.5: from 1 to 0 at the end)."""

    def __init__(self, warmup: float = 0.002, t_total: float = -1, cycles: float = 0.5, **kw):
        super().__init__(warmup, t_total, **kw)
        self.cycles = cycles

    def get_lr_(self, progress):
        if progress < self.warmup:
            return progress / self.warmup
        progress = (progress - self.warmup) / (1 - self.warmup)
        return 0.5 * (1.0 + math.cos(math.pi * self.cycles * 2 * progress))


class WarmupCosineWithHardRestartsSchedule(WarmupCosineSchedule):
    """Linear warmup, then ``cycles`` cosine decays with hard restarts."""

    def __init__(self, warmup: float = 0.002, t_total: float = -1, cycles: float = 1.0, **kw):
        if cycles < 1.0:
            raise ValueError(f"cycles must be >= 1, got {cycles}")
        super().__init__(warmup, t_total, cycles, **kw)

    def get_lr_(self, progress):
        if progress < self.warmup:
            return progress / self.warmup
        progress = (progress - self.warmup) / (1 - self.warmup)
        return 0.5 * (1.0 + math.cos(math.pi * ((self.cycles * progress) % 1)))


class WarmupCosineWithWarmupRestartsSchedule(WarmupCosineWithHardRestartsSchedule):
    """``cycles`` equal parts, each a linear warmup then a cosine decay."""

    def __init__(self, warmup: float = 0.002, t_total: float = -1, cycles: float = 1.0, **kw):
        if warmup * cycles >= 1.0:
            raise ValueError(f"warmup * cycles must be < 1, got {warmup} * {cycles}")
        super().__init__(warmup * cycles if warmup >= 0 else warmup, t_total, cycles, **kw)

    def get_lr_(self, progress):
        progress = progress * self.cycles % 1.0
        if progress < self.warmup:
            return progress / self.warmup
        progress = (progress - self.warmup) / (1 - self.warmup)
        return 0.5 * (1.0 + math.cos(math.pi * progress))


class WarmupConstantSchedule(ConstantLR):
    """Linear warmup, then 1."""

    def get_lr_(self, progress):
        return progress / self.warmup if progress < self.warmup else 1.0


class WarmupLinearSchedule(ConstantLR):
    """Linear warmup, then linear decay to 0 at ``t_total``."""

    def get_lr_(self, progress):
        if progress < self.warmup:
            return progress / self.warmup
        return max((progress - 1.0) / (self.warmup - 1.0), 0.0)


SCHEDULES = {
    None: ConstantLR,
    "none": ConstantLR,
    "warmup_cosine": WarmupCosineSchedule,
    "warmup_constant": WarmupConstantSchedule,
    "warmup_linear": WarmupLinearSchedule,
}
