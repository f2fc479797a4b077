"""Distributed: process groups on NCCL, DistributedDataParallel's devices, SyncBatchNorm.

CUDA's collective library is NCCL; a target has its own (`Target.dist_backend`). The backend is
chosen where a process group is made: `init_process_group(backend)` and `new_group(backend=)`.
"""

from __future__ import annotations

import re

from torchport.apis.devices import Presence, device_presence

CUDA_DIST_BACKEND = "nccl"
CUDA_DEVICE = "cuda"
HOST_BACKEND = "gloo"  # the collective library every build has, which serves the CPU's tensors
NCCL_ENUM = "torch.distributed.Backend.NCCL"
# The calls that make a process group, each taking the backend as `backend=` or at its place.
PROCESS_GROUPS = ("init_process_group", "new_group")
BACKEND_POSITIONS = {"init_process_group": 0, "new_group": 2}  # new_group(ranks, timeout, backend)
# The call that answers the backend a process group is on, as exported and where it is defined: a
# test `get_backend() == "nccl"` asks about the group the script made, which is on the target's backend.
GETS_BACKEND = frozenset({"torch.distributed.get_backend", "torch.distributed.distributed_c10d.get_backend"})

# NCCL's settings in the environment: NCCL's own (NCCL_DEBUG, NCCL_P2P_DISABLE, NCCL_SOCKET_IFNAME)
# and those of torch's NCCL process group (TORCH_NCCL_ASYNC_ERROR_HANDLING). A target that uses
# another collective library names its twins (`Target.collective_settings`); the rest do nothing there.
NCCL_SETTING = re.compile(r"(?:TORCH_)?NCCL_[A-Z0-9_]*[A-Z0-9]")

# FSDP1, as torch.distributed.fsdp exports it and where it is defined. It needs an accelerator: torch
# refuses the CPU ("FSDP needs a non-CPU accelerator device"), where FSDP2's fully_shard runs.
FSDP_MODULE = "torch.distributed.fsdp"
FSDP1 = f"{FSDP_MODULE}.FullyShardedDataParallel"
FSDP1_CLASSES = frozenset({FSDP1, f"{FSDP_MODULE}.fully_sharded_data_parallel.FullyShardedDataParallel"})
FSDP1_WITHOUT_DEVICE = ("FSDP1 (FullyShardedDataParallel) needs an accelerator: torch refuses the CPU; shard with "
                        "FSDP2's fully_shard(model) (torch.distributed.fsdp), or wrap with DistributedDataParallel")

# The call that makes a device mesh (FSDP2's, tensor parallelism's) on a device type, its first argument.
MAKES_MESH = "init_device_mesh"

# DistributedDataParallel, as torch.nn.parallel exports it and where it is defined.
DDP_CLASSES = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"})

# Where DDP (and DataParallel) take their devices when they are passed by position:
# `DDP(module, device_ids, output_device, dim, ...)`, as the DDP tutorial writes `DDP(model, device_ids)`.
DEVICE_POSITIONS = {"device_ids": 1, "output_device": 2}

# nn.DataParallel, and the function form that applies a module over the GPUs once.
DATA_PARALLEL_CLASSES = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                                   "torch.nn.parallel.data_parallel.DataParallel"})
DATA_PARALLEL_FUNCTIONS = frozenset({"torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel"})

CONVERT_SYNC_BATCHNORM = "torch.nn.SyncBatchNorm.convert_sync_batchnorm"

# The calls that start a script's processes from inside it (`mp.spawn`), as exported and defined.
SPAWNS = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes",
                    "torch.multiprocessing.spawn.spawn", "torch.multiprocessing.spawn.start_processes"})
# The call that makes the default process group, as exported and where it is defined.
MAKES_GROUP = frozenset({f"torch.distributed.{PROCESS_GROUPS[0]}", f"torch.distributed.distributed_c10d.{PROCESS_GROUPS[0]}"})

# The process-group calls that bind the group to one device (`device_id=`, by keyword: it comes
# ninth by position). torch refuses it without an accelerator, an int as much as torch.device("cpu")
# ("device_id parameter must be an accelerator with an index").
BINDS_DEVICE = frozenset({f"torch.distributed.{name}" for name in PROCESS_GROUPS}
                         | {f"torch.distributed.distributed_c10d.{name}" for name in PROCESS_GROUPS})
GROUP_DEVICE_KEYWORD = "device_id"


def backend_given_when_run(value: str, dialect: str, target_backend: str) -> str:
    """The source of a process group's backend read from the script's options (`value`,
    `args.dist_backend`), where the launcher may still name the dialect's library (ModelZoo's
    `--dist-backend 'hccl'`, `--dist-backend nccl`): that one becomes the target's, any other
    stays the script's choice, as `run` maps a backend as it arrives."""
    return f'{{"{dialect}": {target_backend}}}.get({value}, {value})'


def ddp_device_ids(target) -> Presence:
    """Whether DDP gets `device_ids`/`output_device` on `target`: CPU modules take neither (a
    target whose DDP takes none, `Target.ddp_device_ids`), so they go there, and are given only
    when a device exists on the device-agnostic target."""
    if not target.ddp_device_ids:
        return Presence.NEVER
    return Presence.AT_RUN_TIME if target.guard else Presence.ALWAYS


def process_group_device(target) -> Presence:
    """Whether a process group is bound to a device (`init_process_group(device_id=...)`) on
    `target`: as DDP's device_ids, never where modules stay on the CPU, and only when a device
    exists on the device-agnostic target."""
    return ddp_device_ids(target)


def sync_batchnorm(target) -> Presence:
    """Whether `convert_sync_batchnorm(m)` converts on `target`: SyncBatchNorm runs on CUDA-like
    devices only (DDP refuses it on CPU modules), so elsewhere the model keeps its BatchNorm."""
    return device_presence(target)


def map_backend(value, backend: str, device_type: str, backends=(CUDA_DIST_BACKEND,), devices=(CUDA_DEVICE,)):
    """`value` as a process group's backend on a target whose collective library is `backend` on
    `device_type`, or None where it names none of `backends` (nor a device of `devices`).

    "nccl" becomes `backend`; a backend per device, "cuda:nccl,cpu:gloo" (torchtitan's, which
    gives the CPU's tensors gloo), keeps the CPU's pair and gives `device_type` its own
    ("npu:hccl,cpu:gloo"; "gloo" where gloo is the target's)."""
    if not isinstance(value, str):
        return None
    backends = {name.lower() for name in backends}
    if value.lower() in backends:
        return backend
    if ":" not in value:
        return None
    pairs: dict[str, str] = {}
    changed = False
    for part in value.split(","):
        device, _, name = part.strip().partition(":")
        if not (device.isidentifier() and name.isidentifier()):  # ("cuda:1" is a device, not a backend)
            return None
        if device in devices or name.lower() in backends:
            device, name, changed = device_type if device in devices else device, backend, True
        pairs.setdefault(device, name)
    if not changed:
        return None
    if set(pairs.values()) == {HOST_BACKEND}:  # (gloo for every device is gloo; and it serves only the CPU's tensors)
        return HOST_BACKEND
    return ",".join(f"{device}:{name}" for device, name in pairs.items())


# Where the target's backend is an expression (the device-agnostic target's
# `get_default_backend_for_device(DEVICE_TYPE)`), a backend per device becomes None: torch then
# gives each device of the build its default backend, which is what the pairs spelled out.
EACH_DEVICES_DEFAULT = "None"
