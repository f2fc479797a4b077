"""TP033, CUDA's multiprocessor count read from a device's properties: the target's own count of
compute units (XPU's subslices, the NPU's AI cores), a function of the properties on accelerator;
left where the properties are the host's (cpu, mps: `host_properties()` has the field)."""

import pytest

from _fixture_cases import TORCH, TORCH_NPU, assert_migrates, assert_rows, per_target

from torchport.targets.fallbacks import HOST_PROPERTIES_FUNCTION

CODE = "TP033"

PROCESSOR_COUNT_FUNCTION = (
    "def device_processor_count(properties):\n"
    '    """CUDA\'s multi_processor_count as DEVICE_TYPE names it: XPU\'s subslices, the NPU\'s AI cores."""\n'
    '    return getattr(properties, {"xpu": "gpu_subslice_count", "npu": "cube_core_num"}.get(DEVICE_TYPE, '
    '"multi_processor_count"))\n'
)

HOST_GRID = (  # cpu and mps: the host's properties, which have CUDA's field (the CPU's cores)
    "import os\nimport platform\nimport types\n\nimport torch\n\n\n" + HOST_PROPERTIES_FUNCTION + "\n\n\n"
    "def grid(x):\n"
    "    props = host_properties()\n"
    "    return props.multi_processor_count * 4\n"
)

CASES = [
    pytest.param(
        TORCH + (
            "def grid(x):\n"
            "    props = torch.cuda.get_device_properties(x.device)\n"
            "    return props.multi_processor_count * 4\n"
        ),
        {
            "npu": TORCH_NPU + (
                "def grid(x):\n"
                "    props = torch.npu.get_device_properties(x.device)\n"
                "    return props.cube_core_num * 4\n"
            ),
            "xpu": TORCH + (
                "def grid(x):\n"
                "    props = torch.xpu.get_device_properties(x.device)\n"
                "    return props.gpu_subslice_count * 4\n"
            ),
            "accelerator": (
                "import os\n"
                "import platform\n"
                "import types\n"
                "\n"
                "import torch\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "\n"
                "\n"
                + PROCESSOR_COUNT_FUNCTION
                + "\n\n" + HOST_PROPERTIES_FUNCTION + "\n\n\n"
                "def grid(x):\n"
                "    props = (torch.get_device_module(DEVICE_TYPE).get_device_properties(x.device) "
                "if torch.accelerator.is_available() else host_properties())\n"
                "    return device_processor_count(props) * 4\n"
            ),
            "cpu": HOST_GRID,
            "mps": HOST_GRID,
        },
        id="a name assigned the properties (left on cpu and mps: the host's properties have the field)",
    ),
]

ROWS = [
    pytest.param(
        TORCH + (
            "sms = torch.cuda.get_device_properties(0).multi_processor_count\n"
            "blocks = config.multi_processor_count\n"
        ),
        {
            "npu": [("TP033", 2, "MODIFY"), ("TP033", 3, "NOTE")],
            "xpu": [("TP033", 2, "MODIFY"), ("TP033", 3, "NOTE")],
            "accelerator": [("TP033", 2, "MODIFY"), ("TP033", 3, "NOTE")],
            "default": [],
        },
        id="the properties call itself rewritten; a count from elsewhere noted",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_the_count_is_read_as_the_target_names_it(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_a_count_from_elsewhere_is_noted(source, target, rows):
    assert_rows(source, target, rows, CODE)
