"""NVIDIA GPUs through torch.cuda itself: the reverse port (`migrate --from npu --target cuda`
takes code written for the Ascend NPU back to CUDA). CUDA code runs here as written, so the rules
have nothing to move (`Target.runs_cuda_code`); what this target adds is the way back from the
NPU dialect (npu_to_cuda) and `--target auto` on a machine with a CUDA GPU."""

from torchport.targets.base import Target
from torchport.targets.fallbacks import NVTX, NVTX_ACTIONS, NVTX_CONTEXTS
from torchport.targets.kernels import CUDA
from torchport.targets.launch import Launch
from torchport.targets.surface import TORCH_SURFACE, names, version
from torchport.targets.verdict import same

TARGET = Target(
    name="cuda",
    rank=0,  # listed first (where the code comes from), and tried first by `--target auto`
    auto=True,
    summary="NVIDIA GPU (torch.cuda): CUDA code as written, nccl, CUDA_VISIBLE_DEVICES; the way back from the NPU",
    device_module="torch.cuda",
    surface=names(TORCH_SURFACE, "torch.cuda"),
    amp_surface=names(TORCH_SURFACE, "torch.cuda.amp"),
    surface_version=f"torch {version(TORCH_SURFACE)}",
    memory_history="torch.cuda.memory",
    device_type="cuda",
    tensor_method="cuda",
    storage_method="cuda",
    dist_backend='"nccl"',
    collective_settings=None,  # (its own)
    visible_devices_env="CUDA_VISIBLE_DEVICES",
    launch=Launch(count="torch.cuda.device_count()"),
    profiler_activity="CUDA",
    data_parallel=None,  # torch's own DataParallel: it splits the batch over the GPUs
    data_parallel_apply="torch.nn.parallel.data_parallel",
    kernels=CUDA,
    # (the annotations are recorded here: what other targets drop, CUDA keeps)
    overrides={f"{NVTX}{name}": same(f"{NVTX}{name}", f"{NVTX}{name}") for name in (*NVTX_ACTIONS, *NVTX_CONTEXTS)},
)
