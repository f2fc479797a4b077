"""Plain CPU: the proving ground. Device calls become no-ops, AMP runs in bfloat16, DDP on gloo."""

from torchport.targets.advice import common
from torchport.targets.base import Target
from torchport.targets.kernels import Kernels
from torchport.targets.surface import TORCH_SURFACE, names, version
from torchport.apis.frameworks import DEEPSPEED_ADAM, DEEPSPEED_LAMB, DEEPSPEED_LION, lacking
from torchport.apis.legacy_types import legacy_tensor_types
from torchport.targets.fallbacks import (HOST_DEVICE_COUNT, HOST_EVENT, HOST_RNG_STATE_FUNCTIONS, HOST_STREAM,
                                         HOST_STREAM_CLASS, host_event_class, host_rng_state_verdicts,
                                         host_stream_verdicts)
from torchport.targets.verdict import noop, same
from torchport.apis import kernel_paths

CUDA_NAMES = names(TORCH_SURFACE, "torch.cuda")
NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16")  # of torch.cpu.get_capabilities()
NATIVE_BF16 = ", ".join(f'"{flag}"' for flag in NATIVE_BF16_FLAGS)  # (as written into migrated files)
# Whether the CPU a migrated file runs on computes bfloat16 natively, as the file reads it.
CPU_BF16 = f"CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ({NATIVE_BF16}))"

TARGET = Target(
    name="cpu",
    kernel_paths=kernel_paths.CPU,
    rank=4,
    advice=common(has_device=False),
    summary="CPU only: no device calls, bfloat16 autocast, gloo",
    device_module="torch.cpu",
    surface=names(TORCH_SURFACE, "torch.cpu"),
    surface_version=f"torch {version(TORCH_SURFACE)}",
    device_type="cpu",
    tensor_method="cpu",
    storage_method="cpu",
    keeps_device_index=False,
    dist_backend='"gloo"',
    ddp_device_ids=False,
    data_parallel=None,  # torch's DataParallel only wraps the module here (device_ids empty)
    float16_autocast="torch.bfloat16",  # CPU float16 autocast works but runs ~30x slower
    # ... and bfloat16 without AVX512-BF16 / AMX (x86) or BF16 (Arm) ran a ViT step 3-4x slower
    # than float32: autocast stays on only where the CPU computes bfloat16 natively.
    autocast_enabled="CPU_BF16",
    definitions={
        "CPU_BF16": CPU_BF16,
        HOST_EVENT: host_event_class(),
        HOST_STREAM: HOST_STREAM_CLASS,
        **HOST_RNG_STATE_FUNCTIONS,
    },
    host_timing=True,
    # DeepSpeed's CPU accelerator builds its CPU optimizers (DeepSpeedCPUAdam, DeepSpeedCPULion), not its fused GPU ones
    missing_builds={
        **lacking(DEEPSPEED_ADAM, "DeepSpeed's fused GPU Adam has no CPU build: torch.optim.AdamW, or "
                  "deepspeed.ops.adam.DeepSpeedCPUAdam"),
        **lacking(DEEPSPEED_LAMB, "DeepSpeed's fused GPU Lamb has no CPU build: torchport.optim.FusedLamb"),
        **lacking(DEEPSPEED_LION, "DeepSpeed's fused GPU Lion has no CPU build: deepspeed.ops.lion.DeepSpeedCPULion"),
    },
    kernels=Kernels("CPU"),
    overrides={
        # torch.cpu has these, but they do nothing: a migrated script is cleaner without them.
        "torch.cuda.synchronize": noop("torch.cuda.synchronize", "CPU work is synchronous"),
        "torch.cuda.set_device": noop("torch.cuda.set_device", "there is one CPU device"),
        "torch.cuda.current_device": noop("torch.cuda.current_device", "there is one CPU device", "0"),
        # torch.cpu.device_count() is 1: a script launched with one process per GPU needs one per process
        "torch.cuda.device_count": noop("torch.cuda.device_count", "one CPU device per process the launcher "
                                        "started (LOCAL_WORLD_SIZE), 1 outside a launcher", HOST_DEVICE_COUNT),
        # torch.cpu has current_stream and Stream, but its streams lack synchronize() and query()
        **host_stream_verdicts(),
        # torch.cpu has no get_rng_state_all / set_rng_state_all: the one generator's state, in a list of one
        **host_rng_state_verdicts(),
        # torch.cuda.FloatTensor is torch.FloatTensor's CUDA twin: as constructor, in x.type(T), in isinstance
        **{f"torch.cuda.{n}": same(f"torch.cuda.{n}", f"torch.{n}") for n in legacy_tensor_types(CUDA_NAMES)},
    },
)
