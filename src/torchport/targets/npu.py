"""Huawei Ascend NPU through torch_npu (surface read from the torch-npu 2.14.0 wheel)."""

from torchport.targets import advice
from torchport.targets.base import Target
from torchport.targets.launch import Launch, Setting
from torchport.targets.kernels import Kernels
from torchport.targets.surface import NPU_SURFACE, names, version

NPU_KERNELS = "kernels-torch_npu-2.14.0.json"  # the kernels torch_npu registers (tools/gen_kernels.py npu)

TARGET = Target(
    name="npu",
    rank=1,
    auto=True,
    summary="Huawei Ascend NPU (torch_npu): torch.npu, hccl, ASCEND_RT_VISIBLE_DEVICES",
    device_module="torch.npu",
    surface=names(NPU_SURFACE, "torch.npu"),
    # torch_npu's GradScaler also reads the overflow flag of chips that compute no inf/nan.
    amp_surface=names(NPU_SURFACE, "torch.npu.amp"),
    keeps_apex=True,  # Ascend ships its own apex build (amp with combine_grad, the NpuFused optimizers)
    surface_version=f"torch-npu {version(NPU_SURFACE)}",
    device_type="npu",
    tensor_method="npu",
    storage_method="npu",
    setup_import="torch_npu",
    dist_backend='"hccl"',
    visible_devices_env="ASCEND_RT_VISIBLE_DEVICES",
    # as ModelZoo's test/train_full_8p.sh launchers set them
    launch=Launch(
        count="torch.npu.device_count()",
        settings=(Setting("TASK_QUEUE_ENABLE", "1", "torch_npu's operator queue: 0 off, 1 on, 2 two-level "
                          "(faster where the host is the bottleneck, more device memory)"),),
        bind_cores=True,
    ),
    advice=advice.NPU,
    # torch.profiler records no NPU work: torch_npu's profiler, with torch's API, does
    profiler_module="torch_npu.profiler",
    profiler_names=names(NPU_SURFACE, "torch_npu.profiler"),
    profiler_activity="NPU",
    kernels=Kernels("NPU", own_data=NPU_KERNELS, namespace="npu",
                    without_kernel="torch_npu runs it on the CPU, with a warning (slow)"),
)
