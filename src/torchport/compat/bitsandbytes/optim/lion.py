"""Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms"), as bitsandbytes
computes it in 32 bits: update = sign(beta1 m + (1 - beta1) g); p <- p (1 - lr wd) - lr update;
m <- beta2 m + (1 - beta2) g. torch.optim has no Lion."""

from __future__ import annotations

import torch

from torchport.optim.closure import closure_loss


class Lion(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        super().__init__(params, {"lr": lr, "betas": betas, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        loss = closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if not state:
                    state["exp_avg"] = torch.zeros_like(param, memory_format=torch.preserve_format)
                average = state["exp_avg"]
                param.mul_(1 - group["lr"] * group["weight_decay"])
                update = average.mul(beta1).add_(param.grad, alpha=1 - beta1).sign_()
                param.add_(update, alpha=-group["lr"])
                average.mul_(beta2).add_(param.grad, alpha=1 - beta2)
        return loss
