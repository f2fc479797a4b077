"""apex.parallel.LARC: layer-wise adaptive rate scaling (You et al., arXiv:1708.03888) around any
optimizer. Each parameter's gradient (weight decay added) is scaled by
    local_lr = trust_coefficient * ||p|| / (||g|| + wd * ||p|| + eps)
clipped to the group's lr with `clip` (min(local_lr / lr, 1)), then the wrapped optimizer steps
with weight decay 0 (it is in the gradient already); parameters with a zero norm or gradient
norm are left as they are."""

from __future__ import annotations

import torch


class LARC:
    def __init__(self, optimizer, trust_coefficient=0.02, clip=True, eps=1e-8):
        self.optim, self.trust_coefficient, self.clip, self.eps = optimizer, trust_coefficient, clip, eps

    param_groups = property(lambda self: self.optim.param_groups,
                            lambda self, value: setattr(self.optim, "param_groups", value))
    state = property(lambda self: self.optim.state)
    defaults = property(lambda self: self.optim.defaults)

    def __repr__(self):
        return f"LARC({self.optim!r})"

    def state_dict(self):
        return self.optim.state_dict()

    def load_state_dict(self, state_dict):
        self.optim.load_state_dict(state_dict)

    def zero_grad(self, *args, **kwargs):
        self.optim.zero_grad(*args, **kwargs)

    def add_param_group(self, param_group):
        self.optim.add_param_group(param_group)

    def step(self, closure=None):
        decays = []
        with torch.no_grad():
            for group in self.optim.param_groups:
                decay = group.get("weight_decay", 0)
                decays.append(decay)
                group["weight_decay"] = 0
                for p in group["params"]:
                    if p.grad is not None:
                        self._adapt(p, decay, group["lr"])
        try:
            return self.optim.step(closure) if closure is not None else self.optim.step()
        finally:
            for group, decay in zip(self.optim.param_groups, decays):
                group["weight_decay"] = decay

    def _adapt(self, p: torch.Tensor, decay: float, lr: float) -> None:
        param_norm, grad_norm = torch.linalg.vector_norm(p), torch.linalg.vector_norm(p.grad)
        if param_norm == 0 or grad_norm == 0:
            return
        local_lr = self.trust_coefficient * param_norm / (grad_norm + param_norm * decay + self.eps)
        if self.clip:
            local_lr = torch.clamp(local_lr / lr, max=1.0)
        p.grad.add_(p, alpha=decay).mul_(local_lr)
