"""Huawei Ascend NPU through torch_npu (surface read from the torch-npu 2.14.0 wheel)."""

from torchport.apis.apex import ASCEND_APEX
from torchport.apis.frameworks import BITSANDBYTES_CONFIGS, DEEPSPEED_LAMB, DEEPSPEED_LION, DEEPSPEED_ZERO_PP, lacking
from torchport.targets import advice
from torchport.targets.base import Target
from torchport.targets.fallbacks import CAPABILITY, NO_CAPABILITY
from torchport.targets.verdict import adapted
from torchport.targets.launch import Launch, Setting
from torchport.targets.kernels import Kernels
from functools import lru_cache

from torchport.targets.surface import NPU_SURFACE, TORCH_SURFACE, load, names, version
from torchport.apis import kernel_paths

NPU_KERNELS = "kernels-torch_npu-2.14.0.json"  # the kernels torch_npu registers (tools/gen_kernels.py npu)

TARGET = Target(
    name="npu",
    kernel_paths=kernel_paths.NPU,
    rank=1,
    auto=True,
    summary="Huawei Ascend NPU (torch_npu): torch.npu, hccl, ASCEND_RT_VISIBLE_DEVICES",
    device_module="torch.npu",
    surface=names(NPU_SURFACE, "torch.npu"),
    # torch_npu's GradScaler also reads the overflow flag of chips that compute no inf/nan.
    amp_surface=names(NPU_SURFACE, "torch.npu.amp"),
    apex_build=ASCEND_APEX,  # Ascend ships its own apex build: amp, combine tensors, the NpuFused optimizers
    surface_version=f"torch-npu {version(NPU_SURFACE)}",
    memory_history="torch.npu.memory",
    # torch_npu's device properties have a multi_processor_count that nothing sets (0): its count of
    # compute units is the AI cores, cube_core_num (torch_npu/csrc/npu/Module.cpp, initDeviceProperty)
    processor_count="cube_core_num",
    lightning_built_in=False,  # (Lightning's own accelerators: cpu, cuda, mps, tpu)
    # DeepSpeed's NPU accelerator builds FusedAdam, not FusedLamb, FusedLion nor ZeRO++'s quantizers (DeepSpeed#8626);
    # bitsandbytes' releases have no NPU backend (NF4 only in its multi-backend preview)
    missing_builds={
        **lacking(DEEPSPEED_LAMB, "DeepSpeed builds no FusedLamb for the NPU (DeepSpeed#8626): "
                  "torch_npu.optim.NpuFusedLamb, or FusedAdam, which it builds"),
        **lacking(DEEPSPEED_LION, "DeepSpeed builds no FusedLion for the NPU (DeepSpeed#8626): "
                  "its FusedAdam, or a Lion written with torch"),
        DEEPSPEED_ZERO_PP: "its quantizer kernels are not built for the NPU (DeepSpeed#8626): ZeRO-3 without "
                           "quantized weights and gradients",
        **lacking(BITSANDBYTES_CONFIGS, "bitsandbytes has no NPU backend in its releases (NF4 only in its "
                  "multi-backend preview): load the weights in bfloat16"),
    },
    device_type="npu",
    tensor_method="npu",
    storage_method="npu",
    setup_import="torch_npu",
    dist_backend='"hccl"',
    visible_devices_env="ASCEND_RT_VISIBLE_DEVICES",
    # NCCL's settings with an HCCL twin of the same meaning and values: torch_npu's environment variable
    # reference (docs/zh/environment_variable_reference: HCCL_ASYNC_ERROR_HANDLING, HCCL_DESYNC_DEBUG),
    # its ProcessGroupHCCL.hpp (HCCL_BLOCKING_WAIT), CANN's (HCCL_SOCKET_IFNAME). NCCL_DEBUG, the P2P,
    # InfiniBand and shared-memory switches and the buffer size (bytes there, MB in HCCL) have none.
    collective_settings={
        "TORCH_NCCL_ASYNC_ERROR_HANDLING": "HCCL_ASYNC_ERROR_HANDLING",
        "NCCL_ASYNC_ERROR_HANDLING": "HCCL_ASYNC_ERROR_HANDLING",
        "TORCH_NCCL_BLOCKING_WAIT": "HCCL_BLOCKING_WAIT",
        "NCCL_BLOCKING_WAIT": "HCCL_BLOCKING_WAIT",
        "TORCH_NCCL_DESYNC_DEBUG": "HCCL_DESYNC_DEBUG",
        "NCCL_DESYNC_DEBUG": "HCCL_DESYNC_DEBUG",
        "NCCL_SOCKET_IFNAME": "HCCL_SOCKET_IFNAME",
    },
    # as ModelZoo's test/train_full_8p.sh launchers set them
    launch=Launch(
        count="torch.npu.device_count()",
        settings=(Setting("TASK_QUEUE_ENABLE", "1", "torch_npu's operator queue: 0 off, 1 on, 2 two-level "
                          "(faster where the host is the bottleneck, more device memory)"),),
        bind_cores=True,
    ),
    # TF32's twins: HF32, torch_npu's reduced-precision float32 for matmul and convolution (Ascend's docs;
    # torch.npu.matmul and torch.npu.conv are in the surface)
    backend_flags={"torch.backends.cuda.matmul.allow_tf32": "torch.npu.matmul.allow_hf32",
                   "torch.backends.cudnn.allow_tf32": "torch.npu.conv.allow_hf32"},
    overrides={
        f"torch.cuda.{CAPABILITY}": adapted(f"torch.cuda.{CAPABILITY}", f"torch.npu.{CAPABILITY}",
                                            "torch_npu answers None unless TORCH_NPU_DEVICE_CAPABILITY is set: "
                                            f"{NO_CAPABILITY} then, CUDA's pre-Ampere path", or_value=NO_CAPABILITY),
    },
    advice=advice.NPU,
    # torch.profiler records no NPU work: torch_npu's profiler, with torch's API, does
    profiler_module="torch_npu.profiler",
    profiler_names=names(NPU_SURFACE, "torch_npu.profiler"),
    profiler_activity="NPU",
    kernels=Kernels("NPU", own_data=NPU_KERNELS, namespace="npu",
                    without_kernel="torch_npu runs it on the CPU, with a warning (slow)"),
)

# -- what NPU code says that `migrate --from npu` reads back into CUDA's dialect --
DEVICE_MODULE_HOME = "torch_npu.npu"  # the module torch_npu installs as torch.npu
TRANSFER_TO_NPU = "torch_npu.contrib.transfer_to_npu"  # imported for its effect: CUDA code redirected at run time
# NPU-only tuning, as ModelZoo's scripts write it: no meaning off the NPU, so the statement goes.
TUNING_CALLS = tuple(f"{TARGET.device_module}.{name}" for name in (
    "set_compile_mode", "set_option", "set_aoe", "set_mm_bmm_format_nd", "set_op_timeout_ms",
    "init_dump", "set_dump", "finalize_dump"))
TUNING_FLAGS = tuple(f"{TARGET.device_module}.{name}" for name in (  # assigned: torch.npu.config.allow_internal_format = False
    "config.allow_internal_format", "matmul.allow_hf32", "conv.allow_hf32"))
TUNING_KEYWORDS = {"apex.amp.initialize": ("combine_grad",)}  # Ascend apex's: gradients unscaled in one fused buffer
TUNING_ENV = (*(setting.name for setting in TARGET.launch.settings), "COMBINED_ENABLE", "INF_NAN_MODE_ENABLE",
              "PYTORCH_NPU_ALLOC_CONF", "ACLNN_CACHE_LIMIT", "MULTI_STREAM_MEMORY_REUSE")
ENV_PREFIXES = ("ASCEND_", "HCCL_", "ACL_")  # CANN's own settings (read: a note; set: dropped)
PROFILER_CONFIG = f"{TARGET.profiler_module}._ExperimentalConfig"  # torch_npu profile's experimental_config=
PROFILER_CONFIG_KEYWORD = "experimental_config"
# torch_npu's keyword of torch.autograd.profiler.profile, which it patches: profile(use_npu=True)
AUTOGRAD_PROFILER_KEYWORD = f"use_{TARGET.device_type}"
# What ModelZoo's launch scripts (test/train_full_8p.sh) export for the script to read: a note where read.
LAUNCH_ENV = ("NPU_CALCULATE_DEVICE", "RANK_ID", "RANK_SIZE", "DEVICE_ID")
LEGACY_KERNEL_MODULE = "torch"  # torch_npu 1.x registered its kernels in torch itself: torch.npu_linear(...)
KERNEL_PREFIX = "npu_"  # (most of torch_npu's own operators; the others are bare_kernels())


@lru_cache(maxsize=None)
def bare_kernels() -> frozenset[str]:
    """torch_npu's own operators named without the npu_ prefix (fast_gelu, dropout_with_byte_mask),
    which torch_npu 1.x also put on torch (torch.fast_gelu): the public names of its operator list
    that torch itself lacks."""
    own = {kernel.split(".")[0] for kernel in load(NPU_KERNELS)["custom"]}
    return frozenset(name for name in own if not name.startswith(("_", KERNEL_PREFIX))) - names(TORCH_SURFACE, "torch")
# Ascend's adapters of other libraries, imported for their effect (`import deepspeed_npu`)
PLUGINS = ("deepspeed_npu", "mindspeed", "torchair")
# torch_npu 1.x's device-profiler context, gone from torch_npu 2.x: `with torch.npu.profile(path):` records
# CANN's trace for Ascend's own tools. CUDA's counterpart starts the device's profiler for its own tools
# (nsys, nvprof) and takes no arguments: the call becomes it, its arguments dropped.
LEGACY_PROFILER_CALLS = {f"{TARGET.device_module}.profile": "torch.cuda.profiler.profile"}
