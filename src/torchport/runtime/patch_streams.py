"""What CUDA-only stream and normalization calls do where the script's tensors live on the CPU.

  tensor.record_stream(s)                      CPU tensors have no stream allocator and reject it:
                                               a no-op for them (TP014 drops it in migrate)
  nn.SyncBatchNorm.convert_sync_batchnorm(m)   on the cpu target, `m` itself: DDP refuses
                                               SyncBatchNorm on CPU modules (TP015 in migrate)
"""

from __future__ import annotations

import functools

from torchport.targets.verdict import Kind, Verdict

ORDER = 60  # after patch_devices, before patch_compilers (session.py installs the families lowest first)
RECORD = Verdict("torch.Tensor.record_stream", Kind.NOOP, None, "on a CPU tensor: CPU tensors have no stream allocator")
CONVERT = Verdict("torch.nn.SyncBatchNorm.convert_sync_batchnorm", Kind.NOOP, None,
                  "the module keeps its BatchNorm layers: SyncBatchNorm needs a GPU-like device")


def install(session) -> None:
    import torch

    _patch_record_stream(session, torch.Tensor)
    if session.device_type == "cpu":
        _patch_convert(session, torch.nn.SyncBatchNorm)


def _patch_record_stream(session, tensor_class) -> None:
    original = tensor_class.record_stream
    note = session.log.note

    @functools.wraps(original)
    def record_stream(self, stream):
        if self.device.type == "cpu":
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
