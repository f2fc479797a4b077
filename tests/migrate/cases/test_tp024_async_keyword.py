"""TP024, `async=`: PyTorch before 0.4 spelled `non_blocking=` so; it is not valid Python since 3.7,
so it is renamed on the tokens, before the parse, and the rest of the file is migrated."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, UNCHANGED, assert_migrates, per_target

CODE = "TP024"

CASES = [
    pytest.param(
        TORCH + "x = x.cuda(async=True)\n",
        {
            "npu": TORCH_NPU + "x = x.npu(non_blocking=True)\n",
            "xpu": TORCH + "x = x.xpu(non_blocking=True)\n",
            "mps": TORCH + 'x = x.to("mps", non_blocking=True)\n',
            "cpu": TORCH + "x = x.cpu()\n",
            "accelerator": TORCH_DEVICE_TYPE + "x = x.to(DEVICE_TYPE, non_blocking=True)\n",
        },
        id=".cuda(async=True), then migrated as .cuda(non_blocking=True)",
    ),
    pytest.param(
        TORCH + (
            "y = y.to(device, async=True)\n"
            "z = torch.ones(2).pin_memory(async=True)\n"
        ),
        {
            "npu": TORCH + (
                "y = y.to(device, non_blocking=True)\n"
                "z = torch.ones(2).pin_memory(non_blocking=True)\n"
            ),
            "xpu": TORCH + (
                "y = y.to(device, non_blocking=True)\n"
                "z = torch.ones(2).pin_memory(non_blocking=True)\n"
            ),
            "mps": TORCH + (
                "y = y.to(device, non_blocking=True)\n"
                "z = torch.ones(2).pin_memory(non_blocking=True)\n"
            ),
            "cpu": TORCH + (
                "y = y.to(device, non_blocking=True)\n"
                "z = torch.ones(2).pin_memory(non_blocking=True)\n"
            ),
            "accelerator": TORCH + (
                "y = y.to(device, non_blocking=True)\n"
                "z = torch.ones(2).pin_memory(non_blocking=True)\n"
            ),
        },
        id=".to() and .pin_memory() with async=",
    ),
    pytest.param(
        TORCH + (
            "async def main():\n"
            '    await run("async=True")\n'
        ),
        {
            "default": UNCHANGED,
        },
        id="async def, await and a string that says async= stay",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_async_arguments_become_non_blocking(source, target, expected):
    assert_migrates(source, target, expected)
