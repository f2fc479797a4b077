"""apex.multi_tensor_apply: `multi_tensor_applier(op, noop_flag, tensor_lists, *args)` calls
`op(chunk_size, noop_flag, tensor_lists, *args)`, as apex's does. apex's ops are the CUDA kernels of
its `amp_C` extension; the stand-in's are torch's foreach ops (torchport.compat.amp_C, which
`torchport run` serves as `amp_C`), so `available` is True: a script that asks before using the
fused path takes it, and it runs on any device."""

from torchport.compat.apex.multi_tensor_apply.multi_tensor_apply import MultiTensorApply

CHUNK_SIZE = 2048 * 32  # apex's
multi_tensor_applier = MultiTensorApply(CHUNK_SIZE)

__all__ = ["MultiTensorApply", "multi_tensor_applier"]
