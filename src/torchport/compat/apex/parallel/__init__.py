"""apex.parallel on torch: DistributedDataParallel is torch's (apex's tuning arguments accepted and
left to torch), SyncBatchNorm and convert_syncbn_model torch's, where the device has SyncBatchNorm
(the target's rule, apis/distributed.py `sync_batchnorm`); elsewhere (the CPU) BatchNorm stays."""

from __future__ import annotations

import torch

from torchport.apis import apex as facts
from torchport.compat.apex import _log, _replace, _targets
from torchport.compat.apex.parallel.LARC import LARC

DDP_API = "apex.parallel.DistributedDataParallel"
CONVERT_API = "apex.parallel.convert_syncbn_model"
SYNC_BN_API = "apex.parallel.SyncBatchNorm"


class DistributedDataParallel(torch.nn.parallel.DistributedDataParallel):
    """torch's DDP over `module` (its own device and process group; torch buckets and overlaps)."""

    def __init__(self, module, message_size=10000000, delay_allreduce=False, shared_param=None,
                 allreduce_trigger_params=None, retain_allreduce_buffers=False, allreduce_always_fp32=False,
                 num_allreduce_streams=1, allreduce_communicators=None, gradient_average=True,
                 gradient_predivide_factor=1.0, gradient_average_split_factor=None, prof=False):
        given = {name: value for name, value in locals().items() if name not in ("self", "module", "__class__")}
        replacement = facts.PARALLEL[DDP_API]
        _replace.refuse_differing(DDP_API, replacement, given)
        tuned = [name for name in facts.DDP_TUNING if given.get(name) != _DDP_DEFAULTS[name]]
        _log.ignored(DDP_API, tuned)
        _log.same(DDP_API, replacement.native, f"{', '.join(tuned)} left to torch" if tuned else "")
        super().__init__(module)


_DDP_DEFAULTS = dict(message_size=10000000, delay_allreduce=False, shared_param=None, allreduce_trigger_params=None,
                     retain_allreduce_buffers=False, allreduce_always_fp32=False, num_allreduce_streams=1,
                     allreduce_communicators=None, gradient_average_split_factor=None, prof=False)


class SyncBatchNorm(torch.nn.SyncBatchNorm):
    """torch's SyncBatchNorm; on a device without one it normalises as BatchNorm does."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, channel_last=False, fuse_relu=False):
        _replace.refuse_differing(SYNC_BN_API, facts.PARALLEL[SYNC_BN_API],
                                  {"channel_last": channel_last, "fuse_relu": fuse_relu})
        _log.same(SYNC_BN_API, facts.PARALLEL[SYNC_BN_API].native)
        super().__init__(num_features, eps, momentum, affine, track_running_stats, process_group)

    def forward(self, input):
        if _targets.syncs_batchnorm(input.device.type):
            return super().forward(input)
        return torch.nn.modules.batchnorm._BatchNorm.forward(self, input)


def convert_syncbn_model(module, process_group=None, channel_last=False):
    """Every BatchNorm of `module` as a SyncBatchNorm, where its device has SyncBatchNorm."""
    replacement = facts.PARALLEL[CONVERT_API]
    _replace.refuse_differing(CONVERT_API, replacement, {"channel_last": channel_last})
    device_type = _targets.device_type_of(module)
    if not _targets.syncs_batchnorm(device_type):
        _log.noop(CONVERT_API, f"the module keeps its BatchNorm layers: {device_type} has no SyncBatchNorm")
        return module
    _log.same(CONVERT_API, replacement.native)
    return torch.nn.SyncBatchNorm.convert_sync_batchnorm(module, process_group)


def create_syncbn_process_group(group_size):
    """The process group of this rank's `group_size` consecutive ranks (None: all of them)."""
    if group_size == 0:
        return None
    world_size, rank = torch.distributed.get_world_size(), torch.distributed.get_rank()
    if world_size < group_size or world_size % group_size:
        raise ValueError(f"create_syncbn_process_group({group_size}): the world size {world_size} is not a multiple")
    groups = [torch.distributed.new_group(ranks=list(range(start, start + group_size)))
              for start in range(0, world_size, group_size)]  # (every rank makes every group)
    return groups[rank // group_size]


__all__ = ["DistributedDataParallel", "SyncBatchNorm", "convert_syncbn_model", "create_syncbn_process_group", "LARC"]
