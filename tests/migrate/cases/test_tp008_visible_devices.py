"""TP008, `CUDA_VISIBLE_DEVICES` becomes the target's own variable (ASCEND_RT_VISIBLE_DEVICES,
ZE_AFFINITY_MASK); where the target has none it is left, and noted as having no effect."""

import pytest

from _fixture_cases import UNCHANGED, assert_migrates, assert_rows, per_target

CODE = "TP008"

CASES = [
    pytest.param(
        "import os\n"
        'os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n',
        {
            "npu": (
                "import os\n"
                "\n"
                "import torch_npu\n"
                'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"\n'
            ),
            "xpu": (
                "import os\n"
                'os.environ["ZE_AFFINITY_MASK"] = "0,1"\n'
            ),
            "default": UNCHANGED,
        },
        id="set in os.environ",
    ),
    pytest.param(
        "import os\n"
        'visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")\n',
        {
            "npu": (
                "import os\n"
                "\n"
                "import torch_npu\n"
                'visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "")\n'
            ),
            "xpu": (
                "import os\n"
                'visible = os.environ.get("ZE_AFFINITY_MASK", "")\n'
            ),
            "default": UNCHANGED,
        },
        id="read with os.environ.get",
    ),
]

ROWS = [
    pytest.param(
        "import os\n"
        'os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n',
        {
            "npu": [("TP008", 2, "MODIFY")],
            "xpu": [("TP008", 2, "MODIFY")],
            "default": [("TP008", 2, "NOTE")],
        },
        id="a NOTE where the target has no such variable",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_visible_devices_name_the_targets_variable(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_a_variable_without_effect_is_noted(source, target, rows):
    assert_rows(source, target, rows, CODE)
