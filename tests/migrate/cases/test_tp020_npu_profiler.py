"""TP020, npu: torch's profiler records no NPU work, so `torch.profiler.*` becomes `torch_npu.profiler.*`,
and `from torch.profiler import ...` too where torch_npu's profiler has every name imported."""

import pytest

from _fixture_cases import TORCH, TORCH_NPU, UNCHANGED, assert_migrates, per_target

CODE = "TP020"

CASES = [
    pytest.param(
        TORCH + (
            "prof = torch.profiler.profile(\n"
            "    schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),\n"
            '    on_trace_ready=torch.profiler.tensorboard_trace_handler("./log"),\n'
            ")\n"
        ),
        {
            "npu": TORCH_NPU + (
                "import torch_npu.profiler\n"
                "prof = torch_npu.profiler.profile(\n"
                "    schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=3),\n"
                '    on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./log"),\n'
                ")\n"
            ),
            "default": UNCHANGED,
        },
        id="profile, schedule and tensorboard_trace_handler by their full names",
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
        id="from torch.profiler import ProfilerActivity, profile (TP017 names the NPU activity)",
    ),
    pytest.param(
        TORCH + (
            "from torch.profiler import profile, record_function\n"
            "with profile() as prof:\n"
            '    with record_function("step"):\n'
            "        pass\n"
        ),
        {
            "default": UNCHANGED,
        },
        id="an import that only records labels stays",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_torch_profiler_becomes_torch_npus(source, target, expected):
    assert_migrates(source, target, expected)
