"""TP017, `ProfilerActivity.CUDA` in profiler activities: the target's own activity (XPU, NPU), dropped
on cpu and mps (nothing to record), `torch.profiler.supported_activities()` for a CPU and CUDA list on accelerator."""

import pytest

from _fixture_cases import TORCH, TORCH_NPU, UNCHANGED, assert_migrates, per_target

CODE = "TP017"

CASES = [
    pytest.param(
        TORCH + "with torch.autograd.profiler.profile(use_cuda=True) as prof:\n    step()\n"
        'with torch.autograd.profiler.profile(enabled=on, use_device="cuda", record_shapes=True):\n    step()\n',
        {
            "cpu": TORCH + "with torch.autograd.profiler.profile() as prof:\n    step()\n"
            "with torch.autograd.profiler.profile(enabled=on, record_shapes=True):\n    step()\n",
            "mps": TORCH + "with torch.autograd.profiler.profile() as prof:\n    step()\n"
            "with torch.autograd.profiler.profile(enabled=on, record_shapes=True):\n    step()\n",
            "npu": TORCH_NPU + "with torch.autograd.profiler.profile(use_cuda=True) as prof:\n    step()\n"
            'with torch.autograd.profiler.profile(enabled=on, use_device="npu", record_shapes=True):\n    step()\n',
            "xpu": TORCH + "with torch.autograd.profiler.profile(use_cuda=True) as prof:\n    step()\n"
            'with torch.autograd.profiler.profile(enabled=on, use_device="xpu", record_shapes=True):\n    step()\n',
            "accelerator": TORCH + 'DEVICE_TYPE = torch.accelerator.current_accelerator().type if '
            'torch.accelerator.is_available() else "cpu"\n'
            "with torch.autograd.profiler.profile(use_cuda=True) as prof:\n    step()\n"
            "with torch.autograd.profiler.profile(enabled=on, use_device=DEVICE_TYPE, record_shapes=True):\n    step()\n",
        },
        id="the autograd profiler's device keyword goes where there is no device work (torch warns, records the CPU)",
    ),
    pytest.param(
        TORCH + (
            "activities = [torch.profiler.ProfilerActivity.CPU]\n"
            "if use_gpu:\n"
            "    activities.append(torch.profiler.ProfilerActivity.CUDA)\n"
        ),
        {
            "npu": "import torch\nimport torch_npu\nimport torch_npu.profiler\n" + (
                "activities = [torch_npu.profiler.ProfilerActivity.CPU]\n"
                "if use_gpu:\n"
                "    activities.append(torch_npu.profiler.ProfilerActivity.NPU)\n"
            ),
            "xpu": TORCH + (
                "activities = [torch.profiler.ProfilerActivity.CPU]\n"
                "if use_gpu:\n"
                "    activities.append(torch.profiler.ProfilerActivity.XPU)\n"
            ),
            "default": UNCHANGED,
        },
        id="the CUDA activity appended (torchtitan): the target's own where it has one (torch_npu's has no CUDA)",
    ),
    pytest.param(
        TORCH + (
            "from torch.profiler import ProfilerActivity, profile\n"
            "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:\n"
            "    y = model(x)\n"
        ),
        {
            "npu": TORCH_NPU + (
                "from torch_npu.profiler import ProfilerActivity, profile\n"
                "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU], record_shapes=True) as prof:\n"
                "    y = model(x)\n"
            ),
            "xpu": TORCH + (
                "from torch.profiler import ProfilerActivity, profile\n"
                "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.XPU], record_shapes=True) as prof:\n"
                "    y = model(x)\n"
            ),
            "mps": TORCH + (
                "from torch.profiler import ProfilerActivity, profile\n"
                "with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:\n"
                "    y = model(x)\n"
            ),
            "cpu": TORCH + (
                "from torch.profiler import ProfilerActivity, profile\n"
                "with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:\n"
                "    y = model(x)\n"
            ),
            "accelerator": TORCH + (
                "from torch.profiler import ProfilerActivity, profile\n"
                "with profile(activities=torch.profiler.supported_activities(), record_shapes=True) as prof:\n"
                "    y = model(x)\n"
            ),
        },
        id="a CPU and CUDA list, imported names",
    ),
    pytest.param(
        TORCH + (
            "with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:\n"
            "    pass\n"
        ),
        {
            "npu": TORCH_NPU + (
                "import torch_npu.profiler\n"
                "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.NPU]) as prof:\n"
                "    pass\n"
            ),
            "xpu": TORCH + (
                "with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.XPU]) as prof:\n"
                "    pass\n"
            ),
            "default": UNCHANGED,
        },
        id="a CUDA-only list, full names",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_cuda_activity_becomes_the_targets(source, target, expected):
    assert_migrates(source, target, expected)
