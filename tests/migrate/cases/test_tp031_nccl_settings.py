"""TP031, NCCL's environment settings: renamed to their HCCL twins on npu, noted where nothing reads
them (the CPU, mps, xpu, and npu's settings without a twin), left alone on accelerator, where NCCL
is the collective library on a GPU."""

import pytest

from _fixture_cases import UNCHANGED, assert_migrates, assert_rows, per_target

CODE = "TP031"

CASES = [
    pytest.param(
        "import os\n"
        'os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"\n'
        "os.environ.setdefault('NCCL_SOCKET_IFNAME', 'eth0')\n",
        {
            "npu": (
                "import os\n"
                "\n"
                "import torch_npu\n"
                'os.environ["HCCL_ASYNC_ERROR_HANDLING"] = "1"\n'
                "os.environ.setdefault('HCCL_SOCKET_IFNAME', 'eth0')\n"
            ),
            "default": UNCHANGED,
        },
        id="settings with a twin, set and defaulted",
    ),
    pytest.param(
        "import os\n"
        'os.environ["NCCL_P2P_DISABLE"] = "1"\n'
        'debug = os.getenv("NCCL_DEBUG", "WARN")\n'
        'print("NCCL_DEBUG is the level")\n',
        {"default": UNCHANGED},
        id="settings without a twin, and a sentence that names one, stay",
    ),
]

ROWS = [
    pytest.param(
        "import os\n"
        'os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"\n'
        'os.environ["NCCL_P2P_DISABLE"] = "1"\n',
        {
            "npu": [("TP031", 2, "MODIFY"), ("TP031", 3, "NOTE")],
            "accelerator": [],
            "default": [("TP031", 2, "NOTE"), ("TP031", 3, "NOTE")],
        },
        id="a twin renamed, the others noted; none on accelerator",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_nccl_settings_take_the_twin_the_target_has(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_a_setting_nothing_reads_is_noted(source, target, rows):
    assert_rows(source, target, rows, CODE)
