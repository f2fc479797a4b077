"""The option grid: each fused optimizer beside its reference implementation."""

from __future__ import annotations

import pytest
import torch

import torchport.optim as fo

import _npu_lamb_reference

# (fused class, reference source, reference name, options)
GRID = [
    (fo.FusedSGD, "torch", "SGD", dict(lr=0.05)),
    (fo.FusedSGD, "torch", "SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=1e-2)),
    (fo.FusedSGD, "torch", "SGD", dict(lr=1e-3, momentum=0.9, nesterov=True, maximize=True)),
    (fo.FusedAdam, "torch", "Adam", dict(lr=1e-2)),
    (fo.FusedAdam, "torch", "Adam", dict(lr=1e-2, weight_decay=0.1, amsgrad=True)),
    (fo.FusedAdam, "torch", "Adam", dict(lr=1e-3, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
    (fo.FusedAdamW, "torch", "AdamW", dict(lr=1e-2)),
    (fo.FusedAdamW, "torch", "AdamW", dict(lr=1e-2, weight_decay=0.1, amsgrad=True)),
    (fo.FusedAdadelta, "torch", "Adadelta", dict()),
    (fo.FusedAdadelta, "torch", "Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    (fo.FusedRMSprop, "torch", "RMSprop", dict(lr=1e-2)),
    (fo.FusedRMSprop, "torch", "RMSprop", dict(lr=1e-2, momentum=0.9, centered=True, weight_decay=0.1)),
    (fo.FusedRMSprop, "torch", "RMSprop", dict(lr=1e-2, centered=True, maximize=True)),
    (fo.FusedRMSprop, "torch", "RMSprop", dict(lr=1e-2, momentum=0.5)),
    (fo.FusedRMSpropTF, "timm", "RMSpropTF", dict(lr=1e-2)),
    (fo.FusedRMSpropTF, "timm", "RMSpropTF", dict(lr=1e-2, momentum=0.9)),
    (fo.FusedRMSpropTF, "timm", "RMSpropTF", dict(lr=1e-2, momentum=0.9, lr_in_momentum=False, centered=True)),
    (fo.FusedRMSpropTF, "timm", "RMSpropTF", dict(lr=1e-2, weight_decay=0.1, decoupled_decay=True)),
    (fo.FusedRMSpropTF, "timm", "RMSpropTF", dict(lr=1e-2, weight_decay=0.1, centered=True)),
    (fo.FusedLamb, "timm", "Lamb", dict(lr=1e-2)),
    (fo.FusedLamb, "timm", "Lamb", dict(lr=1e-2, weight_decay=0.0)),
    (fo.FusedLamb, "timm", "Lamb", dict(lr=1e-2, weight_decay=0.0, always_adapt=True, trust_clip=True)),
    (fo.FusedLamb, "timm", "Lamb", dict(lr=1e-2, grad_averaging=False, bias_correction=False, max_grad_norm=None)),
    (fo.FusedLamb, "timm", "Lamb", dict(lr=1e-2, weight_decay=0.1, decoupled_decay=True, max_grad_norm=0.05)),
    (fo.FusedAdamP, "timm", "AdamP", dict(lr=1e-2)),
    (fo.FusedAdamP, "timm", "AdamP", dict(lr=1e-2, weight_decay=0.1, nesterov=True)),
    # delta=10: every channel view passes the orthogonality test, so the projection always runs
    (fo.FusedAdamP, "timm", "AdamP", dict(lr=1e-2, weight_decay=0.1, delta=10.0)),
    (fo.FusedAdamP, "timm", "AdamP", dict(lr=1e-2, weight_decay=0.1, delta=0.5, wd_ratio=0.5)),
    (fo.FusedBertAdam, "bert", "BertAdam", dict(lr=1e-2)),
    (fo.FusedBertAdam, "bert", "BertAdam", dict(lr=1e-2, warmup=0.1, t_total=30)),
    (fo.FusedBertAdam, "bert", "BertAdam", dict(lr=1e-2, warmup=0.2, t_total=25, schedule="warmup_cosine", max_grad_norm=0.05)),
    (fo.FusedBertAdam, "bert", "BertAdam", dict(lr=1e-2, schedule="warmup_constant", warmup=0.1, t_total=30, weight_decay=0.0, max_grad_norm=-1)),
    (fo.FusedLamb, "timm", "Lamb", dict(lr=1e-2, bias_correction=False)),
    (fo.NpuFusedLamb, "npu", "NpuFusedLamb", dict(lr=1e-2)),
    (fo.NpuFusedLamb, "npu", "NpuFusedLamb", dict(lr=1e-2, betas=(0.8, 0.9), weight_decay=0.1)),
    (fo.NpuFusedLamb, "npu", "NpuFusedLamb", dict(lr=1e-2, weight_decay=0.1, adam=True)),
    (fo.NpuFusedLamb, "npu", "NpuFusedLamb", dict(lr=1e-2, use_global_grad_norm=True)),
]

# One default configuration per optimizer, for the semantic tests.
DEFAULTS = [GRID[1], GRID[4], GRID[7], GRID[9], GRID[11], GRID[15], GRID[23], GRID[26], GRID[29],
            GRID[34]]


def case_id(case) -> str:
    cls, _, _, options = case
    opts = ",".join(f"{k}={v}" for k, v in options.items() if k != "lr")
    return f"{cls.__name__}[{opts}]"


def reference(request, source: str, name: str):
    if source == "torch":
        return getattr(torch.optim, name)
    if source == "npu":  # torch_npu installs only beside an NPU: its math, transcribed
        return _npu_lamb_reference.NpuFusedLamb
    module = request.getfixturevalue("timm_optim" if source == "timm" else "bert_optim")
    return getattr(module, name)


def build(request, case, model_fused, model_ref, **ref_only):
    cls, source, name, options = case
    ref_cls = reference(request, source, name)
    return (cls(model_fused.parameters(), **options),
            ref_cls(model_ref.parameters(), **options, **ref_only))


def cases(grid):
    return pytest.mark.parametrize("case", grid, ids=[case_id(c) for c in grid])
