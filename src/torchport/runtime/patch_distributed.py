"""`init_process_group("nccl")`, `new_group(backend="nccl")`, `DistributedDataParallel(device_ids=...)`,
`DataParallel` and `init_device_mesh("cuda", ...)`.

"nccl" becomes the target's `dist_backend` (evaluated here: "gloo" on the CPU); device_ids and
output_device are dropped where the target says DDP takes none (`ddp_device_ids`, and always on the
CPU), else their CUDA devices are mapped. DataParallel over one device runs the module as it is
(with a warning), over several too (a log line says DDP with one process per device uses them).
"""

from __future__ import annotations

import functools
import inspect
import warnings

from torchport.apis.distributed import (
    FSDP1, FSDP1_WITHOUT_DEVICE, FSDP_MODULE, GROUP_DEVICE_KEYWORD, MAKES_MESH, PROCESS_GROUPS, ddp_device_ids, map_backend,
    process_group_device,
)
from torchport.runtime.after_import import after_import
from torchport.runtime.patch_amp import device_type_first
from torchport.runtime.patch_cuda_module import raiser
from torchport.runtime.devices import CUDA
from torchport.targets.devices import is_host
from torchport.targets.verdict import Kind, Verdict

ORDER = 40  # after patch_devices, before patch_compilers (session.py installs the families lowest first)


def install(session) -> None:
    import torch
    import torch.nn.parallel as parallel

    if not _keeps_torchs_data_parallel(session, torch):
        _patch_data_parallel(session, torch, parallel.DataParallel)
    if not torch.distributed.is_available():
        return
    import torch.distributed.distributed_c10d as c10d

    backend = session.evaluate(session.target.dist_backend)
    for name in PROCESS_GROUPS:
        original = getattr(c10d, name)
        wrapper = _backend_mapper(session, f"torch.distributed.{name}", original, backend)
        session.book.replace_everywhere((torch.distributed, c10d), name, original, wrapper)
    _patch_ddp(session, parallel.DistributedDataParallel)
    _patch_device_mesh(session, torch)
    if is_host(session.device_type):
        after_import(FSDP_MODULE, lambda fsdp: _refuse_fsdp1(session, fsdp.FullyShardedDataParallel), session.book)


def _refuse_fsdp1(session, fsdp1) -> None:
    """FSDP1 on the CPU: torch refuses it deep in its set-up; the script's call says why, and what
    runs there instead."""
    verdict = Verdict(FSDP1, Kind.UNSUPPORTED, None, FSDP1_WITHOUT_DEVICE)
    refuse = raiser(session, verdict)

    def __init__(self, *args, **kwargs):
        session.log.note(verdict)
        refuse()

    session.book.replace(fsdp1, "__init__", __init__)


def _patch_device_mesh(session, torch) -> None:
    """`init_device_mesh("cuda", ...)` makes its mesh on the target's device type (torch would
    set a CUDA device for each rank, and FSDP2's `fully_shard` shards onto the mesh's device)."""
    import torch.distributed.device_mesh as device_mesh

    original = device_mesh.init_device_mesh
    wrapper = device_type_first(session, f"torch.distributed.device_mesh.{MAKES_MESH}", original)
    session.book.replace_everywhere((torch.distributed, device_mesh), MAKES_MESH, original, wrapper)


def dialect_backend(value, backend: str, device_type: str, dialects=(CUDA,)):
    """`map_backend` for the dialects a script may be written in (CUDA's; the NPU's where the
    stand-in torch_npu is served: "hccl", "npu:hccl")."""
    return map_backend(value, backend, device_type, {d.dist_backend for d in dialects}, {d.device_type for d in dialects})


def _backend_mapper(session, api: str, original, backend: str):
    signature = inspect.signature(original)
    verdicts = {}
    binds = process_group_device(session.target).here(is_host(session.device_type))
    unbound = Verdict(f"{api}(device_id=...)", Kind.ADAPTED, f"{api}(device_id=None)",
                      f"a process group on {session.device_type} binds no device (torch refuses one there)")

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        bound = signature.bind_partial(*args, **kwargs)
        given = bound.arguments.get("backend")
        new = dialect_backend(given, backend, session.device_type, session.mapper.dialects)
        if new is not None:
            if given not in verdicts:
                verdicts[given] = Verdict(f"{api}(backend={given!r})", Kind.SAME, f"{api}(backend={new!r})")
            session.log.note(verdicts[given])
            bound.arguments["backend"] = new
        device_id = bound.arguments.get(GROUP_DEVICE_KEYWORD)
        if device_id is not None and not binds:  # (an int or torch.device("cpu") alike)
            session.log.note(unbound)
            bound.arguments[GROUP_DEVICE_KEYWORD] = None
        elif device_id is not None:
            mapped = session.mapper.map(device_id)
            if mapped is not None:
                session.note_device(api, device_id, mapped, keyword=GROUP_DEVICE_KEYWORD)
                bound.arguments[GROUP_DEVICE_KEYWORD] = mapped
        return original(*bound.args, **bound.kwargs)

    return wrapper


def _patch_ddp(session, ddp) -> None:
    original = ddp.__dict__["__init__"]
    signature = inspect.signature(original)
    drop = not ddp_device_ids(session.target).here(is_host(session.device_type))
    dropped = Verdict(
        "DistributedDataParallel(device_ids=...)", Kind.ADAPTED, "DistributedDataParallel(device_ids=None)",
        f"modules on {session.device_type} take no device_ids or output_device",
    )

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        arguments = bound.arguments
        if arguments.get("device_ids") is not None or arguments.get("output_device") is not None:
            if drop:
                session.log.note(dropped)
                arguments.pop("device_ids", None)
                arguments.pop("output_device", None)
            else:
                if arguments.get("device_ids") is not None:
                    arguments["device_ids"] = [_mapped(session, d) for d in arguments["device_ids"]]
                if arguments.get("output_device") is not None:
                    arguments["output_device"] = _mapped(session, arguments["output_device"])
        original(*bound.args, **bound.kwargs)

    session.book.replace(ddp, "__init__", __init__)


def _mapped(session, device):
    """A DDP device: an int stays the index on the target; "cuda:1" and devices are mapped."""
    if isinstance(device, int):
        return device
    new = session.mapper.map(device)
    if new is None:
        return device
    session.note_device("DistributedDataParallel", device, new, depth=2)
    return new


def _keeps_torchs_data_parallel(session, torch) -> bool:
    """Whether torch's DataParallel splits the batch here, as the target says (`accelerator` on a
    CUDA build with a GPU): then it is left as it is."""
    choice = session.target.data_parallel
    return (choice is not None and not is_host(session.device_type)
            and session.evaluate(choice) is torch.nn.DataParallel)


def _patch_data_parallel(session, torch, data_parallel) -> None:
    """DataParallel runs the module itself on one device, over any number of devices asked for
    (torch's replicates and scatters with CUDA's copies): `.module`, isinstance and "module."
    checkpoint keys stay. On a device, forward moves the inputs to the module's, as scatter did."""
    original = data_parallel.__dict__["__init__"]
    original_forward = data_parallel.__dict__["forward"]
    device_type = session.device_type
    passed = Verdict(
        "torch.nn.DataParallel", Kind.ADAPTED, "the module itself",
        f"one {device_type} device: DataParallel has nothing to split",
    )
    several = Verdict(
        "torch.nn.DataParallel", Kind.ADAPTED, "the module itself, on one device",
        f"DataParallel splits no batch on {device_type}: DistributedDataParallel with one process per "
        "device (torchrun) uses several",
    )
    move = not is_host(device_type)

    @functools.wraps(original)
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        count = len(device_ids) if device_ids is not None else _device_count(session, torch)
        session.log.note(several if count > 1 else passed)
        over = f" (asked for {count} devices)" if count > 1 else ""
        warnings.warn(
            f"torchport: torch.nn.DataParallel runs the module directly on one {device_type} device{over}",
            RuntimeWarning, stacklevel=2,
        )
        torch.nn.Module.__init__(self)
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim
        self.src_device_obj = None

    @functools.wraps(original_forward)
    def forward(self, *inputs, **kwargs):
        parameter = next(self.module.parameters(), None) if move and not self.device_ids else None
        if parameter is not None:
            inputs, kwargs = _moved(torch, inputs, parameter.device), _moved(torch, kwargs, parameter.device)
        return original_forward(self, *inputs, **kwargs)

    session.book.replace(data_parallel, "__init__", __init__)
    session.book.replace(data_parallel, "forward", forward)
    _patch_data_parallel_function(session, torch, data_parallel)


def _patch_data_parallel_function(session, torch, data_parallel) -> None:
    """`nn.parallel.data_parallel(module, inputs)`: torch's finds no device off CUDA; the module
    applied once, through the DataParallel above."""
    import importlib

    defining = importlib.import_module("torch.nn.parallel.data_parallel")
    original = defining.__dict__["data_parallel"]
    applied = Verdict("torch.nn.parallel.data_parallel", Kind.ADAPTED, "the module applied on one device",
                      f"DataParallel splits no batch on {session.device_type}")

    @functools.wraps(original)
    def wrapper(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
        session.log.note(applied)
        if not isinstance(inputs, tuple):
            inputs = (inputs,) if inputs is not None else ()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            wrapped = data_parallel(module)
        return wrapped(*inputs, **(module_kwargs or {}))

    session.book.replace_everywhere((torch.nn.parallel, defining), "data_parallel", original, wrapper)


def _moved(torch, value, device):
    """`value` with its tensors (in lists, tuples, named tuples, dicts) on `device`."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        items = [_moved(torch, v, device) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return type(value)((k, _moved(torch, v, device)) for k, v in value.items())
    return value


def _device_count(session, torch) -> int:
    """The devices DataParallel would split a batch over in this process: on the CPU its one device,
    even under a launcher, where the script's own `torch.cuda.device_count()` answers the launched
    process count (one CPU per process: DataParallel has nothing to split within one)."""
    if is_host(session.device_type):
        return 1
    return getattr(torch, session.device_type).device_count()
