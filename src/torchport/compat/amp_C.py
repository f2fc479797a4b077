"""apex's `amp_C` extension (its fused multi-tensor CUDA kernels) on torch's foreach ops, for any
device: what `apex.multi_tensor_apply.multi_tensor_applier` is called with in scripts (gradient
norms, scaling, axpby). `torchport run` serves this module as `amp_C` where none is installed.

Each kernel has apex's signature, `(chunk_size, noop_flag, tensor_lists, *args)`, and apex's
overflow check: `noop_flag` (a one-element int tensor) is set to 1 where a value read is not finite
(apex's kernels compute on regardless, as these do). `chunk_size` is how apex splits the work
between CUDA blocks: it changes nothing here."""

from __future__ import annotations

import torch

__all__ = ["multi_tensor_scale", "multi_tensor_axpby", "multi_tensor_l2norm"]


def _flag_unless_finite(noop_flag: torch.Tensor, tensors) -> None:
    if tensors and not torch.stack([torch.isfinite(t).all() for t in tensors]).all():
        noop_flag.fill_(1)


def multi_tensor_scale(chunk_size, noop_flag, tensor_lists, scale):
    """tensor_lists = [inputs, outputs]: each output = its input * scale (in the output's dtype)."""
    inputs, outputs = tensor_lists
    _flag_unless_finite(noop_flag, inputs)
    if not inputs:
        return
    scaled = torch._foreach_mul([t.float() for t in inputs], float(scale))
    torch._foreach_copy_(outputs, scaled)


def multi_tensor_axpby(chunk_size, noop_flag, tensor_lists, a, b, arg_to_check):
    """tensor_lists = [xs, ys, outs]: out = a * x + b * y; `arg_to_check` says whose values the
    overflow check reads (-1 both, 0 x, 1 y)."""
    xs, ys, outs = tensor_lists
    checked = {-1: [*xs, *ys], 0: xs, 1: ys}.get(arg_to_check, [])
    _flag_unless_finite(noop_flag, checked)
    if not xs:
        return
    result = torch._foreach_add(torch._foreach_mul([x.float() for x in xs], float(a)),
                                torch._foreach_mul([y.float() for y in ys], float(b)))
    torch._foreach_copy_(outs, result)


def multi_tensor_l2norm(chunk_size, noop_flag, tensor_lists, per_tensor=False):
    """tensor_lists = [tensors]: (the L2 norm of them all as one vector, a float32 tensor of one
    element; each tensor's own norm where `per_tensor`, else an empty tensor)."""
    (tensors,) = tensor_lists
    if not tensors:
        return torch.zeros(1, dtype=torch.float32), torch.empty(0, dtype=torch.float32)
    device = tensors[0].device
    norms = torch.stack(torch._foreach_norm([t.float() for t in tensors])).to(torch.float32)
    total = torch.linalg.vector_norm(norms).reshape(1)
    _flag_unless_finite(noop_flag, [total])
    return total, norms if per_tensor else torch.empty(0, dtype=torch.float32, device=device)
