"""One loss scale of `amp.initialize` (apex's LossScaler) as a torch.amp.GradScaler.

apex unscales the gradients when `scale_loss` exits and skips a step whose gradients overflowed;
GradScaler does the same through `unscale_` and `step`. What differs is when the scale changes:
GradScaler's `update()` belongs after every optimizer of an iteration has stepped, so it is
deferred here until the optimizers this scale unscaled have all stepped, or until a new backward
pass goes through an optimizer it already unscaled or stepped (apex changes its scale after every
backward pass: either way the scale a step sees is the one its gradients were scaled by).

An optimizer whose unscaled gradients wait for a step when the scale changes gets them multiplied
by the new scale, so that GradScaler's next unscale returns them intact (scales are powers of two:
the products are exact).
"""

from __future__ import annotations

import torch

from torchport.apis.apex import DYNAMIC, STATIC_GROWTH_INTERVAL

INIT_SCALE = 2.0**16  # apex's LossScaler: starts at 2**16, doubles after 2000 unskipped steps
SCALE_WINDOW = 2000


class LossScale:
    def __init__(self, index: int, device_type: str, loss_scale, min_scale=None, max_scale=2.0**24,
                 verbose: bool = True) -> None:
        self.index, self.min_scale, self.max_scale, self.verbose = index, min_scale, max_scale, verbose
        self.dynamic = loss_scale == DYNAMIC
        if self.dynamic:
            self.scaler = torch.amp.GradScaler(device_type, init_scale=INIT_SCALE, growth_interval=SCALE_WINDOW)
        else:  # a static scale of 1.0 scales nothing: apex passes the loss through (loss.float())
            self.scaler = torch.amp.GradScaler(device_type, init_scale=float(loss_scale),
                                               growth_interval=STATIC_GROWTH_INTERVAL,
                                               enabled=float(loss_scale) != 1.0)
        self.scaled: list = []  # optimizers holding gradients scaled by this scale
        self.unscaled: list = []  # ... unscaled by it, not stepped yet
        self.stepped: list = []  # ... stepped through it since its last update
        self._scale = float(INIT_SCALE if self.dynamic else loss_scale)

    @property
    def enabled(self) -> bool:
        return self.scaler.is_enabled()

    def loss_scale(self) -> float:
        return self.scaler.get_scale() if self.enabled else 1.0

    _loss_scale = property(loss_scale)  # (apex's attribute, which scripts read)

    # -- scale_loss ------------------------------------------------------------------------
    def begin(self, optimizers) -> None:
        """A backward pass through `optimizers` starts: their gradients must carry this scale."""
        for optimizer in optimizers:
            owner = _owner(optimizer)
            if owner is self and (_holds(self.unscaled, optimizer) or _holds(self.stepped, optimizer)):
                self.update()
            elif owner is not None and owner is not self:
                if _holds(owner.unscaled, optimizer):
                    owner.update()  # (its gradients now carry owner's scale)
                if _holds(owner.scaled, optimizer):
                    _drop(owner.scaled, optimizer)
                    _multiply_grads(optimizer, self.loss_scale() / owner.loss_scale())
            if not _holds(self.scaled, optimizer):
                self.scaled.append(optimizer)
            optimizer._torchport_amp.scale = self

    def scale(self, loss: torch.Tensor) -> torch.Tensor:
        return self.scaler.scale(loss.float())

    def end(self, optimizers) -> None:
        """The backward pass is over: unscale the gradients (GradScaler records any inf/nan)."""
        for optimizer in optimizers:
            if _holds(self.scaled, optimizer):
                self.scaler.unscale_(optimizer)
                _drop(self.scaled, optimizer)
                self.unscaled.append(optimizer)

    # -- optimizer.step --------------------------------------------------------------------
    def step(self, optimizer, args, kwargs):
        """Step through the scaler (skipped if the gradients hold inf/nan), then update the scale
        once no optimizer it unscaled waits for its step."""
        result = self.scaler.step(optimizer, *args, **kwargs)
        _drop(self.scaled, optimizer)
        _drop(self.unscaled, optimizer)
        self.stepped.append(optimizer)
        optimizer._torchport_amp.scale = None
        if not self.unscaled:
            self.update()
        return result

    def update(self) -> None:
        if not (self.unscaled or self.stepped):
            return  # (GradScaler.update needs an inf check made since the last one)
        before = self._scale
        self.scaler.update()
        after = self._clamped(self.scaler.get_scale())
        self._scale = after
        for optimizer in self.unscaled:  # unscaled, no step yet: they carry the new scale now
            _multiply_grads(optimizer, after)
        for optimizer in self.scaled:  # scaled by the old scale (delay_unscale)
            _multiply_grads(optimizer, after / before)
        self.scaled = self.scaled + self.unscaled
        self.unscaled, self.stepped = [], []
        if after < before and self.verbose:
            print(f"Gradient overflow.  Skipping step, loss scaler {self.index} reducing loss scale to {after}")

    def _clamped(self, scale: float) -> float:
        bounded = scale
        if self.dynamic and self.max_scale is not None:
            bounded = min(bounded, float(self.max_scale))
        if self.dynamic and self.min_scale is not None:
            bounded = max(bounded, float(self.min_scale))
        if bounded != scale:
            self.scaler.update(bounded)
        return bounded

    # -- amp.state_dict ----------------------------------------------------------------------
    def state(self) -> dict:
        """apex's entry: the scale and the steps since it last changed."""
        if not self.enabled:
            return {"loss_scale": 1.0, "unskipped": 0}
        native = self.scaler.state_dict()
        return {"loss_scale": native["scale"], "unskipped": native["_growth_tracker"]}

    def load(self, entry: dict) -> None:
        """Load apex's entry ({"loss_scale", "unskipped"}) or a GradScaler's state_dict."""
        if not self.enabled:
            return
        native = self.scaler.state_dict()
        if "loss_scale" in entry:
            native.update(scale=float(entry["loss_scale"]), _growth_tracker=int(entry.get("unskipped", 0)))
        else:
            native.update(entry)
        self.scaler.load_state_dict(native)
        self._scale = float(native["scale"])


def _owner(optimizer):
    return optimizer._torchport_amp.scale


def _holds(optimizers: list, optimizer) -> bool:
    return any(o is optimizer for o in optimizers)


def _drop(optimizers: list, optimizer) -> None:
    optimizers[:] = [o for o in optimizers if o is not optimizer]


def _multiply_grads(optimizer, factor: float) -> None:
    if factor == 1.0:
        return
    with torch.no_grad():
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(factor)
