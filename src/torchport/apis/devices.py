"""Where torch takes a device, and whether a call that needs one has it on a target.

Shared by the rewriter (which literals to rewrite), the patcher (which callables to wrap) and
the analysers (which arguments to read). Target-independent; the targets say what a device becomes.
"""

from __future__ import annotations

import re
from enum import Enum

from torchport.apis.amp import DEVICE_TYPE_FIRST_CALLS

# torch.* functions with a `device=` keyword (tensor factories and friends).
FACTORIES = frozenset(
    {
        "arange", "as_tensor", "bartlett_window", "blackman_window", "empty", "empty_like",
        "empty_strided", "eye", "from_file", "frombuffer", "full", "full_like", "hamming_window",
        "hann_window", "kaiser_window", "linspace", "logspace", "normal", "ones", "ones_like",
        "rand", "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm", "range",
        "scalar_tensor", "sparse_coo_tensor", "sparse_csr_tensor", "tensor", "tril_indices",
        "triu_indices", "zeros", "zeros_like",
    }
)

# Tensor methods with a `device=` keyword.
TENSOR_FACTORY_METHODS = frozenset(
    {"new_empty", "new_empty_strided", "new_full", "new_ones", "new_tensor", "new_zeros"}
)

# Methods whose first positional argument may be a device (`x.to("cuda:0")`, `m.to(0)`).
TO_METHODS = frozenset({"to", "to_empty"})

# Calls whose first positional argument is a device or a device type.
DEVICE_FIRST_CALLS = frozenset({"torch.device", *DEVICE_TYPE_FIRST_CALLS})

# Keyword arguments that hold a device, whatever the callee.
DEVICE_KEYWORDS = frozenset({"device", "map_location", "output_device"})

# Keyword arguments that hold a device where torch's own APIs take them (FSDP's and
# init_process_group's `device_id`); other libraries' mean their own devices by them
# (PaddlePaddle's `config.enable_use_gpu(..., device_id=0)` in YOLOv5's models/common.py).
TORCH_DEVICE_KEYWORDS = frozenset({"device_id"})

# Keyword arguments that hold a list of device indices (DDP's, DataParallel's and dist.barrier's
# `device_ids`): an index there means one on the module's or the process group's own device type,
# the same on every target, and dist.barrier takes ints alone ("npu:0" is refused). They stay ints.
INDEX_LIST_KEYWORDS = frozenset({"device_ids"})

# How a package names its builds for a kind of hardware ("onnxruntime-gpu", "tensorflow-cpu",
# "cupy-cuda12x", "faiss-gpu"): a choice between such names on torch.cuda.is_available() asks
# about a CUDA GPU for that package, not about the target's device.
BUILD_WORDS = re.compile(r"gpu|cuda|cpu", re.IGNORECASE)


def names_a_build(text: str) -> bool:
    """Whether `text` (not a device's name) names a package build for some hardware."""
    return bool(BUILD_WORDS.search(text))


# CUDA's spelling in the environment: the devices a process may see.
CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"


class Presence(Enum):
    """Whether a call that only makes sense with a device (pinning host memory for it, a stream
    allocator, SyncBatchNorm, DDP's device_ids) has one on a target. The rewriter turns it into
    source (keep, drop, or run only when the target's guard holds); the patcher, which knows the
    device type it runs on, asks `here`."""

    ALWAYS = "always"  # a device target: the call stays as it is
    NEVER = "never"  # the host alone (the CPU target): the call has nothing to do, and goes
    AT_RUN_TIME = "at run time"  # the device-agnostic target: only when its `guard` holds

    def here(self, on_host: bool) -> bool:
        """Whether there is a device for the call at run time, where the device type is known
        (`on_host`: it is the host's, as the device-agnostic target's is without an accelerator)."""
        return self is Presence.ALWAYS or (self is Presence.AT_RUN_TIME and not on_host)


def device_presence(target) -> Presence:
    """Whether `target` has a device for a call that needs one (see `Presence`)."""
    if not target.has_device:
        return Presence.NEVER
    return Presence.AT_RUN_TIME if target.guard is not None else Presence.ALWAYS
