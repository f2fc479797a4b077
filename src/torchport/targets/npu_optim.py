"""torch_npu.optim's fused optimizers, as the advice and `--apply-affinity` on npu need them.

The committed surface (torch_npu-2.14.0.json) lists the classes as re-exported, without their
parameters; these were read from the public source of torch_npu (Ascend/pytorch, the files
torch_npu/optim/npu_fused_*.py, at the commits below, the newest stored versions). Each entry says
which of the class's parameters mean what the optimizer it replaces means by the same name, and
how many of them it takes in the same positional order, so that a swap is made only where every
argument of the call means the same to both.
"""

from __future__ import annotations

from dataclasses import dataclass

PACKAGE = "torch_npu.optim"
SOURCE = "Ascend/pytorch"


@dataclass(frozen=True)
class Constructor:
    name: str  # the class in torch_npu.optim
    parameters: tuple[str, ...]  # after `params`, in its own order
    same: tuple[str, ...]  # those that mean what the replaced optimizer's do (by name)
    positional: int  # how many leading `same` ones the replaced optimizer also takes in this order
    required: tuple[str, ...] = ()  # parameters without a default
    path: str = ""
    commit: str = ""

    @property
    def qualified(self) -> str:
        return f"{PACKAGE}.{self.name}"


def _path(module: str) -> str:
    return f"torch_npu/optim/{module}.py"


SGD = Constructor("NpuFusedSGD", ("lr", "momentum", "dampening", "weight_decay", "nesterov"),
                  ("lr", "momentum", "dampening", "weight_decay", "nesterov"), 5, required=("lr",),
                  path=_path("npu_fused_sgd"), commit="287c65d6f0bd51417c30c88ffdcce66a633f4628")
ADAM = Constructor("NpuFusedAdam", ("lr", "betas", "eps", "weight_decay", "amsgrad"),
                   ("lr", "betas", "eps", "weight_decay", "amsgrad"), 5,
                   path=_path("npu_fused_adam"), commit="255f30140f6273a9c4f81b67689274f6e2a22f6d")
ADAMW = Constructor("NpuFusedAdamW", ("lr", "betas", "eps", "weight_decay", "amsgrad"),
                    ("lr", "betas", "eps", "weight_decay", "amsgrad"), 5,
                    path=_path("npu_fused_adamw"), commit="0f223c5c3825272005b79b06ac837519eacac982")
ADADELTA = Constructor("NpuFusedAdadelta", ("lr", "rho", "eps", "weight_decay"),
                       ("lr", "rho", "eps", "weight_decay"), 4,
                       path=_path("npu_fused_adadelta"), commit="0c7ead807a42428339337324621a4f9a42132873")
RMSPROP = Constructor("NpuFusedRMSprop", ("lr", "alpha", "eps", "weight_decay", "momentum", "centered"),
                      ("lr", "alpha", "eps", "weight_decay", "momentum", "centered"), 6,
                      path=_path("npu_fused_rmsprop"), commit="0c7ead807a42428339337324621a4f9a42132873")
# timm's AdamP, the same parameters (timm's `caution` it lacks)
ADAMP = Constructor("NpuFusedAdamP", ("lr", "betas", "eps", "weight_decay", "delta", "wd_ratio", "nesterov"),
                    ("lr", "betas", "eps", "weight_decay", "delta", "wd_ratio", "nesterov"), 7,
                    path=_path("npu_fused_adamp"), commit="1178aa011aea89c2982eca55d316098785a192d5")
# timm's RMSpropTF, but for decoupled_decay (torch_npu decays by weight_decay alone, timm by
# lr * weight_decay); timm puts corrected_weight_decay before lr_in_momentum
RMSPROP_TF = Constructor(
    "NpuFusedRMSpropTF",
    ("lr", "alpha", "eps", "weight_decay", "momentum", "centered", "decoupled_decay", "lr_in_momentum"),
    ("lr", "alpha", "eps", "weight_decay", "momentum", "centered", "lr_in_momentum"), 6,
    path=_path("npu_fused_rmsprop_tf"), commit="0c7ead807a42428339337324621a4f9a42132873")
# Not timm's LAMB: no bias correction, no gradient clipping unless use_global_grad_norm, the weight
# norm clamped at 10, weight_decay 0 by default: advice only.
LAMB = Constructor("NpuFusedLamb", ("lr", "betas", "eps", "weight_decay", "adam", "use_global_grad_norm"),
                   (), 0, path=_path("npu_fused_lamb"), commit="1178aa011aea89c2982eca55d316098785a192d5")
# BertAdam's parameters, but max_grad_norm clips all gradients together (BertAdam: each its own):
# advice only.
BERT_ADAM = Constructor(
    "NpuFusedBertAdam",
    ("lr", "warmup", "t_total", "schedule", "b1", "b2", "e", "weight_decay", "max_grad_norm"),
    (), 0, required=("lr",),
    path=_path("npu_fused_bert_adam"), commit="0c7ead807a42428339337324621a4f9a42132873")

# NpuFusedOptimizerBase (torch_npu/optim/npu_fused_optim_base.py, 005c36ac4b5238ac3d899244017aee3c204a3fae)
BASE_COMMIT = "005c36ac4b5238ac3d899244017aee3c204a3fae"
CLIP = "clip_grad_norm_fused_"  # its method: (max_norm, norm_type=2), over the combined gradients
# What each of them needs of the script, read from the base class: it combines the parameters and
# gradients into flat buffers at the first step, by dtype and in the NPU's own formats.
NEEDS = ("the parameters on the NPU and float32 or float16 (bfloat16 raises TypeError); "
         "zero the gradients with optimizer.zero_grad(): its set_to_none=True raises ValueError, and "
         "gradients set to None later (model.zero_grad() does by default) leave its fused buffer stale")
# `zero_grad(set_to_none=True)` raises in them: a file that calls it is not swapped.
SET_TO_NONE = r"\.zero_grad\(\s*(?:set_to_none\s*=\s*)?True\b"

# torch (timm, BERT) optimizer -> its torch_npu twin
TWINS = {
    "torch.optim.SGD": SGD,
    "torch.optim.Adam": ADAM,
    "torch.optim.AdamW": ADAMW,
    "torch.optim.Adadelta": ADADELTA,
    "torch.optim.RMSprop": RMSPROP,
    "timm.optim.Lamb": LAMB,
    "timm.optim.AdamP": ADAMP,
    "timm.optim.RMSpropTF": RMSPROP_TF,
    "pytorch_pretrained_bert.optimization.BertAdam": BERT_ADAM,
}
WHY_NOT = {
    LAMB.name: "not timm's LAMB (no bias correction, no gradient clipping unless use_global_grad_norm=True, "
               "weight_decay 0 by default): compare the training before switching",
    BERT_ADAM.name: "max_grad_norm clips all gradients together (BertAdam clips each parameter's own): "
                    "pass max_grad_norm=-1 and clip with optimizer.clip_grad_norm_fused_, or compare",
}
