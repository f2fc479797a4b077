"""The profiler: `ProfilerActivity.CUDA`, and a target's own profiler.

`activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]` asks torch's profiler for CUDA work.
A target records its device work under an activity of its own (`Target.profiler_activity`:
XPU), or through a profiler of its own (`Target.profiler_module`: torch_npu's); where it has
neither (the CPU, MPS) nothing records the device, so the CUDA activity goes.
"""

from __future__ import annotations

ACTIVITY = "torch.profiler.ProfilerActivity"
# (the same enum, as torch.autograd and the C extension name it)
ACTIVITY_NAMES = (ACTIVITY, "torch.autograd.ProfilerActivity", "torch._C._profiler.ProfilerActivity")
CPU_ACTIVITY, CUDA_ACTIVITY = "CPU", "CUDA"
# torch.autograd's profiler asks for a device's work with use_device="cuda" (torch 2.13; use_cuda=True is deprecated)
AUTOGRAD_PROFILE = "torch.autograd.profiler.profile"
DEVICE_KEYWORD = "use_device"
DEVICE_KEYWORDS = (DEVICE_KEYWORD, "use_cuda")  # (and its deprecated spelling)


def drops_cuda_activity(target) -> bool:
    """Whether `ProfilerActivity.CUDA` goes on `target`: its device type is known (not the
    device-agnostic target, whose device is found at run time) and nothing records its work."""
    return not target.device_chosen_at_run_time and target.profiler_activity is None and target.profiler_module is None
