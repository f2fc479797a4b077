"""Device-agnostic code: torch.accelerator and torch.amp, falling back to the CPU when there is none.

The output runs unchanged on CUDA, XPU, MPS, NPU (with torch_npu imported) or a bare CPU:
the device type is looked up once per file, and calls that need a device are guarded.
"""

from torchport.apis.memory import MEMORY_HISTORY_APIS
from torchport.targets.base import Target
from torchport.targets.launch import HOST_PROCESSES, Launch
from torchport.targets.cpu import CPU_BF16
from torchport.apis.legacy_types import legacy_tensor_types
from torchport.targets.fallbacks import (CAPABILITY, MEMORY_HISTORY_VALUES, HOST_DEVICE_COUNT, HOST_EVENT, HOST_MEMORY, HOST_PROPERTIES, ONE_DEVICE_APPLY,
                                         NO_CAPABILITY, ONE_DEVICE_DATA_PARALLEL, host_event_class)
from torchport.targets.surface import TORCH_SURFACE, names, version
from torchport.targets.verdict import adapted, noop
from torchport.apis import kernel_paths

GUARD = "torch.accelerator.is_available()"
DEVICE_FUNCTION = '''def accelerator_device(device=None):
    """What cuda(device) meant, on DEVICE_TYPE: device is an index, None, a device or its name."""
    index = device if device is None or isinstance(device, int) else torch.device(device).index
    return torch.device(DEVICE_TYPE, index)'''

PROCESSOR_COUNT_FUNCTION = '''def device_processor_count(properties):
    """CUDA's multi_processor_count as DEVICE_TYPE names it: XPU's subslices, the NPU's AI cores."""
    return getattr(properties, {"xpu": "gpu_subslice_count", "npu": "cube_core_num"}.get(DEVICE_TYPE, "multi_processor_count"))'''

BF16_FUNCTION = '''def device_bf16_supported(*args, **kwargs):
    """torch.cuda.is_bf16_supported() on DEVICE_TYPE: its module's answer (torch.mps and torch.cpu have none: True)."""
    query = getattr(torch.get_device_module(DEVICE_TYPE), "is_bf16_supported", None)
    return query(*args, **kwargs) if query is not None else True'''


# torch.cuda.memory's recorder and snapshots on the device types whose module has a `memory` with them
# (cuda, xpu, npu); torch.cpu and torch.mps have none: nothing is recorded there.
MEMORY_HISTORY_GUARD = 'hasattr(torch.get_device_module(DEVICE_TYPE), "memory")'


def _memory_history(api: str):
    name = api.rsplit(".", 1)[1]
    return api, adapted(api, f"torch.get_device_module(DEVICE_TYPE).memory.{name}",
                        "the device's allocator's, where its module records (cuda, xpu, npu); else nothing is recorded",
                        guard=MEMORY_HISTORY_GUARD, value=MEMORY_HISTORY_VALUES[name])


# torch.cuda.get_rng_state_all() / set_rng_state_all(states) on DEVICE_TYPE: its module's, one state per
# device (torch.cuda, torch.xpu, torch_npu's torch.npu); torch.mps and torch.cpu have no such calls, one
# generator each: its state in a list (the host's is torch's global generator, torch.get_rng_state()), and
# the first state of the list restored to it. A checkpoint saved on one kind of device restores on that
# kind; a GPU's state restored without one is refused by torch (the CPU's generator is another kind).
RNG_STATE_FUNCTIONS = {
    "device_get_rng_state_all": '''def device_get_rng_state_all():
    """torch.cuda.get_rng_state_all() on DEVICE_TYPE (torch.mps and torch.cpu have one generator: its state, in a list)."""
    module = torch.get_device_module(DEVICE_TYPE)
    if hasattr(module, "get_rng_state_all"):
        return module.get_rng_state_all()
    return [getattr(module, "get_rng_state", torch.get_rng_state)()]''',
    "device_set_rng_state_all": '''def device_set_rng_state_all(new_states):
    """torch.cuda.set_rng_state_all(states) on DEVICE_TYPE (torch.mps and torch.cpu have one generator: the first state)."""
    module = torch.get_device_module(DEVICE_TYPE)
    if hasattr(module, "set_rng_state_all"):
        return module.set_rng_state_all(new_states)
    for state in new_states[:1]:
        getattr(module, "set_rng_state", torch.set_rng_state)(state)''',
}


def _renamed(name: str, replacement: str, note: str, **extra):
    api = f"torch.cuda.{name}"
    return api, adapted(api, replacement, note, **extra)


TARGET = Target(
    name="accelerator",
    kernel_paths=kernel_paths.ACCELERATOR,
    rank=5,
    summary="any accelerator via torch.accelerator / torch.amp, else CPU",
    device_module="torch.accelerator",
    surface=names(TORCH_SURFACE, "torch.accelerator"),
    surface_version=f"torch {version(TORCH_SURFACE)}",
    device_type=None,
    device_type_expr="DEVICE_TYPE",
    definitions={  # (in the order they are defined: each may use those before it)
        "DEVICE_TYPE": f'DEVICE_TYPE = torch.accelerator.current_accelerator().type if {GUARD} else "cpu"',
        # the module of the device type's legacy typed classes (torch.cuda.FloatTensor, torch.npu.FloatTensor), else torch's
        "TENSOR_TYPES": 'TENSOR_TYPES = torch.get_device_module(DEVICE_TYPE) if hasattr(torch.get_device_module(DEVICE_TYPE), "FloatTensor") else torch',
        # what x.cuda(device) moves to, for a device of a kind the rewrite cannot tell
        "accelerator_device": DEVICE_FUNCTION,
        # torch.cuda.is_bf16_supported() asked of the device type's module, where it has the query
        "device_bf16_supported": BF16_FUNCTION,
        # CUDA's count of multiprocessors, read from the properties of whichever device it is
        "device_processor_count": PROCESSOR_COUNT_FUNCTION,
        # torch.cuda.get_rng_state_all() / set_rng_state_all() through the device type's module, where it has them
        **RNG_STATE_FUNCTIONS,
        # autocast where it is faster than float32: on any accelerator; on the CPU it falls back
        # to, only where that CPU computes bfloat16 natively (as the cpu target decides)
        "CPU_BF16": CPU_BF16,
        "AUTOCAST_OK": 'AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16',
        HOST_EVENT: host_event_class(f"if {GUARD}:\n    torch.accelerator.synchronize()"),
    },
    device_function="accelerator_device",
    processor_count="device_processor_count()",
    launch=Launch(count=f"torch.accelerator.device_count() or {HOST_PROCESSES}"),  # (none: the CPU stands in)
    dist_backend="torch.distributed.get_default_backend_for_device(DEVICE_TYPE)",
    collective_settings=None,  # (NCCL is its collective library where it runs on a GPU)
    ddp_device_ids=True,
    # torch's own on a CUDA build, which splits the batch over the GPUs (or, with none, only wraps
    # the module); one device elsewhere. (Not `DEVICE_TYPE == "cuda"`: a comparison with "cuda" is
    # read as "on the accelerator" when the output is migrated again.)
    data_parallel=f"torch.nn.DataParallel if torch.version.cuda else {ONE_DEVICE_DATA_PARALLEL}",
    data_parallel_apply=f"torch.nn.parallel.data_parallel if torch.version.cuda else {ONE_DEVICE_APPLY}",
    guard=GUARD,
    float16_autocast='torch.float16 if DEVICE_TYPE != "cpu" else torch.bfloat16',
    autocast_enabled="AUTOCAST_OK",
    unguarded=frozenset({"is_available", "current_accelerator"}),
    host_timing=True,
    overrides=dict(
        [
            _renamed("current_device", "torch.accelerator.current_device_index", "same meaning",
                     guard=GUARD, value="0"),
            _renamed("device_count", "torch.accelerator.device_count",
                     "where there is none, the CPU stands in: one per process the launcher started "
                     "(LOCAL_WORLD_SIZE), 1 outside a launcher", guard=GUARD, value=HOST_DEVICE_COUNT),
            _renamed("set_device", "torch.accelerator.set_device_index", "same meaning", guard=GUARD),
            ("torch.cuda.get_device_name",
             noop("torch.cuda.get_device_name", "torch.accelerator has no model names: the device type",
                  "DEVICE_TYPE")),
            ("torch.cuda", adapted("torch.cuda", "torch.get_device_module(DEVICE_TYPE)",
                                   "the device type's own module (torch.cpu without an accelerator)")),
            ("torch.cuda.get_device_properties",
             adapted("torch.cuda.get_device_properties", "torch.get_device_module(DEVICE_TYPE).get_device_properties",
                     f"the accelerator's, only when {GUARD}; else the host's", guard=GUARD, value=HOST_PROPERTIES)),
            _renamed("is_bf16_supported", "device_bf16_supported",
                     "the device's own answer (CUDA's is False before Ampere, where a script picks float16); "
                     "True where its module has no such query (mps, the host's torch.cpu)"),
            _renamed("get_rng_state_all", "device_get_rng_state_all", "the device type's module's, a state per device; "
                     "torch.mps and the host's torch.cpu have none: their one generator's state, in a list"),
            _renamed("set_rng_state_all", "device_set_rng_state_all", "the device type's module's; torch.mps and the "
                     "host's torch.cpu have none: their one generator from the list's first state; torch refuses a GPU's "
                     "state for the host's generator"),
            _renamed(CAPABILITY, f"torch.get_device_module(DEVICE_TYPE).{CAPABILITY}",
                     f"CUDA's (major, minor) on a GPU; {NO_CAPABILITY} elsewhere, as on the host (torch.accelerator's and "
                     "torch.xpu's answer a dict of properties, torch_npu's None)",
                     guard=f"(torch.version.cuda or torch.version.hip) is not None and {GUARD}", value=NO_CAPABILITY),
            _renamed("mem_get_info", "torch.accelerator.get_memory_info", f"(free, total): the accelerator's, only when {GUARD}; "
                     "else the host's", guard=GUARD, value=HOST_MEMORY),
            _renamed("Stream", "torch.Stream", "torch's device-generic stream, on DEVICE_TYPE", device_first=True),
            _renamed("stream", "contextlib.nullcontext",
                     "work stays on the current stream: its order is kept, the overlap is lost", drop_args=True),
            _renamed("device", "torch.accelerator.device_index", "the device's index: it takes no device object",
                     guard=GUARD, value="contextlib.nullcontext()", index_first=True),
        ]
        + [_memory_history(api) for api in MEMORY_HISTORY_APIS]
        + [
            _renamed(name, f"TENSOR_TYPES.{name}", "the device type's own class (CUDA, NPU); XPU and MPS have none: "
                     "there it is the CPU's, so move what it makes with .to(DEVICE_TYPE)")
            for name in legacy_tensor_types(names(TORCH_SURFACE, "torch.cuda"))
        ]
    ),
)
