"""apex's MultiTensorApply on the stand-in's kernels (torchport.compat.amp_C, always there)."""

from __future__ import annotations

from torchport.apis import apex as facts
from torchport.compat.apex import _log


class MultiTensorApply:
    available = True  # (apex: whether its amp_C extension imported; the stand-in's kernels always do)
    warned = False

    def __init__(self, chunk_size):
        self.chunk_size = chunk_size

    def check_avail(self):
        """apex raises here when its extension is missing; the stand-in's kernels are never missing."""

    def __call__(self, op, noop_flag_buffer, tensor_lists, *args):
        _log.adapted(facts.MULTI_TENSOR_APPLIER, getattr(op, "__qualname__", repr(op)),
                     f"{facts.COMPAT_AMP_C}: torch's foreach ops")
        return op(self.chunk_size, noop_flag_buffer, tensor_lists, *args)
