"""apex.fp16_utils: `FP16_Optimizer` as a thin wrapper over torch.amp.GradScaler around the model's
own float32 parameters, and `network_to_half` keeping the model in float32 (torch.amp keeps
weights float32; GradScaler refuses float16 gradients). The other helpers (master/model copies,
FP16Model, the loss scalers) have no native meaning: using one raises with the native recipe."""

from __future__ import annotations

import torch

from torchport.apis import apex as facts
from torchport.apis.apex import STATIC_GROWTH_INTERVAL
from torchport.compat.apex import _log, _targets

# apex.fp16_utils' DynamicLossScaler: starts at 2**32, doubles after 1000 steps without overflow
DYNAMIC_INIT_SCALE, DYNAMIC_WINDOW = 2.0**32, 1000


class FP16_Optimizer:
    def __init__(self, init_optimizer, static_loss_scale=1.0, dynamic_loss_scale=False, dynamic_loss_args=None,
                 verbose=True):
        _log.adapted(f"{facts.FP16_UTILS}.FP16_Optimizer", "torch.amp.GradScaler", facts.FP16_UTILS_RECIPE)
        self.optimizer, self.verbose = init_optimizer, verbose
        device_type = _targets.device_type_of(init_optimizer)
        if dynamic_loss_scale:
            args = dict(dynamic_loss_args or {})
            self.scaler = torch.amp.GradScaler(device_type, init_scale=args.get("init_scale", DYNAMIC_INIT_SCALE),
                                               growth_factor=args.get("scale_factor", 2.0),
                                               growth_interval=args.get("scale_window", DYNAMIC_WINDOW))
        else:
            self.scaler = torch.amp.GradScaler(device_type, init_scale=float(static_loss_scale),
                                               growth_interval=STATIC_GROWTH_INTERVAL,
                                               enabled=float(static_loss_scale) != 1.0)
        self._unscaled = False

    param_groups = property(lambda self: self.optimizer.param_groups)
    state = property(lambda self: self.optimizer.state)
    loss_scale = property(lambda self: self.scaler.get_scale() if self.scaler.is_enabled() else 1.0)

    def zero_grad(self, set_grads_to_None=False):
        self.optimizer.zero_grad(set_to_none=set_grads_to_None)

    def backward(self, loss, update_master_grads=True, retain_graph=False):
        self.scaler.scale(loss.float()).backward(retain_graph=retain_graph)
        if update_master_grads:
            self.update_master_grads()

    def update_master_grads(self):
        if not self._unscaled:
            self.scaler.unscale_(self.optimizer)
            self._unscaled = True

    def clip_master_grads(self, max_norm, norm_type=2):
        self.update_master_grads()
        params = [p for group in self.optimizer.param_groups for p in group["params"]]
        return torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)

    def step(self, closure=None):
        if closure is not None:
            raise RuntimeError("FP16_Optimizer.step(closure): GradScaler takes no closure")
        result = self.scaler.step(self.optimizer)
        self.scaler.update()
        self._unscaled = False
        return result

    def state_dict(self):
        return {"loss_scaler": self.scaler.state_dict(), "optimizer_state_dict": self.optimizer.state_dict()}

    def load_state_dict(self, state_dict):
        if state_dict.get("loss_scaler"):
            self.scaler.load_state_dict(state_dict["loss_scaler"])
        self.optimizer.load_state_dict(state_dict["optimizer_state_dict"])


def network_to_half(network):
    """The model as it is (float32): the forward's half precision is autocast's business."""
    _log.adapted(f"{facts.FP16_UTILS}.network_to_half", "(the model kept in float32)", facts.FP16_UTILS_RECIPE)
    return network


def to_python_float(t):
    """A one-element tensor's value as a Python number (apex's helper, used in its examples)."""
    return t.item() if hasattr(t, "item") else t[0]


def __getattr__(name: str):
    """Any other name of apex.fp16_utils: an ImportError (a `from ... import` of it in a
    try/except ImportError takes the script's other branch) carrying the native recipe."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise ImportError(f"{facts.FP16_UTILS}.{name}: {facts.FP16_UTILS_RECIPE}", name=name)


__all__ = ["FP16_Optimizer", "network_to_half", "to_python_float"]
