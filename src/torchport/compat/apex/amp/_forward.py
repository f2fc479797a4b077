"""The model side of `amp.initialize`: O1/O2 run each model's forward under torch.autocast, O3 casts
the model to the half type, as apex's opt levels mean in native torch (apis/apex.py OPT_LEVELS).

The device type is the model's own (read at each call: the model may move); its half type and
whether autocast stays on are the target's rules for that device (`_targets`). Half outputs are
cast to float32, as apex casts them, so that a loss computed after the forward runs in float32,
as it would inside a hand-written autocast region (autocast runs losses in float32).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from torchport.compat.apex import _targets

HALF_TYPES = (torch.float16, torch.bfloat16)


def run_under_autocast(model: torch.nn.Module, output_type=None) -> None:
    forward = model.forward
    rules: dict = {}  # device type -> (dtype, enabled), decided once per model and device

    def autocast_forward(*args, **kwargs):
        device_type = _targets.device_type_of(model, *args)
        if device_type not in rules:
            rules[device_type] = (_targets.half_dtype(device_type), _targets.autocast_allowed(device_type))
        dtype, enabled = rules[device_type]
        with torch.autocast(device_type, dtype=dtype, enabled=enabled):
            output = forward(*args, **kwargs)
        return cast(output, output_type or torch.float32, only_half=output_type is None)

    model.forward = autocast_forward


def cast_to_half(model: torch.nn.Module, dtype, keep_batchnorm_fp32: bool, output_type=None) -> None:
    """O3: the model in the target's half type (BatchNorm kept in float32 if asked), its floating
    inputs cast to it and its outputs to float32 (or `output_type`), as apex's O3 does."""
    half = _targets.half_dtype(_targets.device_type_of(model), dtype)
    model.to(half)
    if keep_batchnorm_fp32:
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                module.float()
    forward = model.forward

    def half_forward(*args, **kwargs):
        output = forward(*cast(args, half), **cast(kwargs, half))
        return cast(output, output_type or torch.float32)

    model.forward = half_forward


def cast_outputs(model: torch.nn.Module, output_type) -> None:
    """`cast_model_outputs=` without autocast or a cast model: only the outputs are cast."""
    forward = model.forward
    model.forward = lambda *args, **kwargs: cast(forward(*args, **kwargs), output_type)


def cast(value, dtype, only_half: bool = False):
    """`value` with its floating tensors cast to `dtype` (inside lists, tuples and dicts)."""
    if isinstance(value, torch.Tensor):
        wanted = value.is_floating_point() and (value.dtype in HALF_TYPES or not only_half)
        return value.to(dtype) if wanted else value
    if isinstance(value, Mapping):
        items = {k: cast(v, dtype, only_half) for k, v in value.items()}
        return items if type(value) is dict else type(value)(items)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return type(value)(*(cast(v, dtype, only_half) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(cast(v, dtype, only_half) for v in value)
    return value
