"""What CUDA-only stream and normalization calls do where the script's tensors live on the CPU.

  tensor.record_stream(s)                      CPU tensors have no stream allocator and reject it:
                                               a no-op for them (TP014 drops it in migrate)
  nn.SyncBatchNorm.convert_sync_batchnorm(m)   on the cpu target, `m` itself: DDP refuses
                                               SyncBatchNorm on CPU modules (TP015 in migrate)
"""

from __future__ import annotations

import functools

from torchport.apis.distributed import CONVERT_SYNC_BATCHNORM, sync_batchnorm
from torchport.apis.streams import NO_STREAM_ALLOCATOR, RECORD_STREAM
from torchport.targets.devices import HOST_DEVICE_TYPE, is_host
from torchport.targets.verdict import Kind, Verdict

ORDER = 60  # after patch_devices, before patch_compilers (session.py installs the families lowest first)
RECORD = Verdict(f"torch.Tensor.{RECORD_STREAM}", Kind.NOOP, None, f"on a CPU tensor: {NO_STREAM_ALLOCATOR}")
CONVERT = Verdict(CONVERT_SYNC_BATCHNORM, Kind.NOOP, None,
                  "the module keeps its BatchNorm layers: SyncBatchNorm needs a GPU-like device")


def install(session) -> None:
    import torch

    _patch_record_stream(session, torch.Tensor)
    if not sync_batchnorm(session.target).here(is_host(session.device_type)):
        _patch_convert(session, torch.nn.SyncBatchNorm)


def _patch_record_stream(session, tensor_class) -> None:
    original = tensor_class.record_stream
    note = session.log.note

    @functools.wraps(original)
    def record_stream(self, stream):
        if self.device.type == HOST_DEVICE_TYPE:
            note(RECORD)
            return None
        return original(self, stream)

    session.book.replace(tensor_class, "record_stream", record_stream)


def _patch_convert(session, sync_batchnorm) -> None:
    note = session.log.note

    def convert_sync_batchnorm(module, process_group=None):
        note(CONVERT)
        return module

    session.book.replace(sync_batchnorm, "convert_sync_batchnorm", staticmethod(convert_sync_batchnorm))
