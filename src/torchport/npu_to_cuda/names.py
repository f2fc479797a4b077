"""What the NPU dialect's names are in CUDA's: the npu target's facts (targets/npu.py, its surface,
targets/npu_optim.py) read the other way, and no table of their own."""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from torchport.apis import graphs
from torchport.apis.cuda_module import DEVICE_MODULE
from torchport.apis.devices import CUDA_VISIBLE_DEVICES
from torchport.apis.distributed import CUDA_DIST_BACKEND
from torchport.apis.profiler import CUDA_ACTIVITY
from torchport.targets import npu as npu_facts
from torchport.targets.npu import TARGET as NPU
from torchport.targets.surface import NPU_SURFACE, TORCH_SURFACE, load, names
from torchport.targets.torch_api import torch_api

PACKAGE = NPU.setup_import  # torch_npu
DEVICE_TYPE = NPU.device_type
CUDA_TYPE = graphs.CUDA_PREFIX.lower()  # torch's device type of CUDA, as CUDA names its classes
METHOD = NPU.tensor_method  # x.npu() (tensors, modules and storages alike)
IS_METHOD = f"is_{METHOD}"
CUDA_METHOD, CUDA_IS = CUDA_TYPE, f"is_{CUDA_TYPE}"
BACKEND = ast.literal_eval(NPU.dist_backend)  # hccl
VISIBLE_DEVICES = NPU.visible_devices_env
DEVICE_MODULE_NAMES = (NPU.device_module, npu_facts.DEVICE_MODULE_HOME)
AMP = "amp"
TORCH = "torch"
TORCH_PROFILER = "torch.profiler"
TORCH_OPTIM = "torch.optim"
TORCHPORT_OPTIM = "torchport.optim"

DEVICE = re.compile(rf"{DEVICE_TYPE}(:\d+)?")
PREFIX = f"{DEVICE_TYPE}:"
FORMAT_PREFIX = re.compile(rf"{DEVICE_TYPE}:(%[dis]|\{{\w*\}})")  # "npu:%d" % i, "npu:{}".format(i)
DEVICE_WORD = re.compile(rf"\b{DEVICE_TYPE}\b", re.IGNORECASE)


def is_npu_name(qualified: str) -> bool:
    """Whether `qualified` is torch_npu's, torch.npu's or an Ascend adapter's (deepspeed_npu)."""
    return any(qualified == root or qualified.startswith(root + ".")
               for root in (PACKAGE, NPU.device_module, *npu_facts.PLUGINS))


def is_plugin(qualified: str) -> bool:
    return qualified.split(".")[0] in npu_facts.PLUGINS


def kernel_name(qualified: str) -> str | None:
    """`npu_linear` of torch_npu.npu_linear (or of torch.npu_linear, as torch_npu 1.x named its kernels)."""
    for module in (PACKAGE, npu_facts.LEGACY_KERNEL_MODULE):
        if qualified.startswith(module + "."):
            name = qualified[len(module) + 1:]
            return name if "." not in name else None
    return None


def canonical(qualified: str) -> str:
    """torch_npu.npu.X as torch.npu.X (the same module)."""
    home = npu_facts.DEVICE_MODULE_HOME
    if qualified == home or qualified.startswith(home + "."):
        return NPU.device_module + qualified[len(home):]
    return qualified


@lru_cache(maxsize=None)
def _cuda_surface(module: str) -> frozenset[str]:
    return names(TORCH_SURFACE, module)


def cuda_api(qualified: str) -> str | None:
    """The CUDA name of an NPU API (torch.npu.X -> torch.cuda.X, NPUGraph -> CUDAGraph,
    torch_npu.profiler.X -> torch.profiler.X); None where CUDA has none."""
    qualified = canonical(qualified)
    if qualified == NPU.device_module:
        return DEVICE_MODULE
    if qualified.startswith(NPU.device_module + "."):
        return _device_module_api(qualified[len(NPU.device_module) + 1:].split("."))
    profiler = NPU.profiler_module
    if qualified.startswith(profiler + "."):
        return _profiler_api(qualified[len(profiler) + 1:].split("."))
    return None


def _device_module_api(parts: list[str]) -> str | None:
    first = parts[0]
    if first == AMP and len(parts) > 1:
        amp = f"{DEVICE_MODULE}.{AMP}"
        return ".".join([amp, *parts[1:]]) if parts[1] in _cuda_surface(amp) else None
    if first in _cuda_surface(DEVICE_MODULE):
        return ".".join([DEVICE_MODULE, *parts])
    if len(parts) == 2 and parts[1] in _cuda_surface(DEVICE_MODULE) and _is_npu_submodule(first):
        return f"{DEVICE_MODULE}.{parts[1]}"  # torch_npu.npu.utils.get_device_name: what torch.npu exports
    prefix = DEVICE_TYPE.upper()
    if first.startswith(prefix):  # NPUGraph: the class CUDA names after itself
        twin = graphs.CUDA_PREFIX + first[len(prefix):]
        if graphs.twin(twin, DEVICE_TYPE) == first and twin in _cuda_surface(DEVICE_MODULE):
            return ".".join([DEVICE_MODULE, twin, *parts[1:]])
    return None


def _is_npu_submodule(name: str) -> bool:
    """torch_npu.npu.utils, .memory, .streams: modules of torch_npu.npu in its surface."""
    return f"{npu_facts.DEVICE_MODULE_HOME}.{name}" in load(NPU_SURFACE)["modules"]


def _profiler_api(parts: list[str]) -> str | None:
    if parts[0] not in torch_api().kinds.get(TORCH_PROFILER, {}):
        return None
    if parts[1:] == [NPU.profiler_activity]:  # ProfilerActivity.NPU
        parts = [parts[0], CUDA_ACTIVITY]
    return ".".join([TORCH_PROFILER, *parts])


def is_tuning_call(qualified: str) -> bool:
    return canonical(qualified) in npu_facts.TUNING_CALLS


def is_tuning_flag(qualified: str) -> bool:
    return canonical(qualified) in npu_facts.TUNING_FLAGS


def tuning_keywords(qualified: str) -> tuple[str, ...]:
    return npu_facts.TUNING_KEYWORDS.get(qualified, ())


def is_npu_setting(env: str) -> bool:
    """An environment variable of the NPU's software stack (not the visible devices: renamed)."""
    return env != VISIBLE_DEVICES and (env in npu_facts.TUNING_ENV or env.startswith(npu_facts.ENV_PREFIXES))


def is_launch_setting(env: str) -> bool:
    """A variable Ascend's launch scripts export (NPU_CALCULATE_DEVICE): unset elsewhere."""
    return env in npu_facts.LAUNCH_ENV


def is_transfer(qualified: str) -> bool:
    return qualified == npu_facts.TRANSFER_TO_NPU


