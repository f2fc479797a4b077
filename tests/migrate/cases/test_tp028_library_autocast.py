"""TP028, another library's autocast whose device type defaults to "cuda" (ultralytics', which YOLOv5
calls as smart_amp_autocast): a call without the device keyword gets the target's; on the CPU it is kept
with a NOTE; a re-export the file never calls gets a PRECISION row."""

import pytest

from _fixture_cases import TORCH, TORCH_NPU, UNCHANGED, assert_migrates, assert_rows, per_target
from torchport import targets

CODE = "TP028"

ULTRALYTICS = "from ultralytics.utils.torch_utils import autocast\n"
CALL = "with autocast(amp):\n    y = model(x)\n"
ACCELERATOR = targets.get("accelerator").definitions
ACCELERATOR_HEAD = "\n".join(ACCELERATOR[name] for name in ("DEVICE_TYPE", "CPU_BF16", "AUTOCAST_OK")) + "\n"


def _with(call: str) -> str:
    return f"with {call}:\n    y = model(x)\n"


CASES = [
    pytest.param(
        TORCH + ULTRALYTICS + CALL,
        {
            "npu": TORCH_NPU + ULTRALYTICS + _with('autocast(amp, device="npu")'),
            "xpu": TORCH + ULTRALYTICS + _with('autocast(amp, device="xpu")'),
            "mps": TORCH + ULTRALYTICS + _with('autocast(amp, device="mps")'),
            "cpu": UNCHANGED,  # (float32, as the script runs on a CPU host: a NOTE)
            "accelerator": TORCH + ULTRALYTICS + ACCELERATOR_HEAD + _with("autocast(amp and AUTOCAST_OK, device=DEVICE_TYPE)"),
        },
        id="ultralytics' autocast(amp) without a device",
    ),
    pytest.param(
        TORCH + "from ultralytics.utils.torch_utils import autocast as amp_autocast\n"
        "with amp_autocast(torch.bfloat16):\n    y = model(x)\n",
        {
            "npu": TORCH_NPU + "from ultralytics.utils.torch_utils import autocast as amp_autocast\n"
            + _with('amp_autocast(torch.bfloat16, device="npu")'),
            "accelerator": TORCH + "from ultralytics.utils.torch_utils import autocast as amp_autocast\n"
            + ACCELERATOR["DEVICE_TYPE"] + "\n" + _with("amp_autocast(torch.bfloat16, device=DEVICE_TYPE)"),
            "xpu": TORCH + "from ultralytics.utils.torch_utils import autocast as amp_autocast\n"
            + _with('amp_autocast(torch.bfloat16, device="xpu")'),
            "mps": TORCH + "from ultralytics.utils.torch_utils import autocast as amp_autocast\n"
            + _with('amp_autocast(torch.bfloat16, device="mps")'),
            "cpu": UNCHANGED,
        },
        id="under an alias, a dtype as enabled: the device added, the dtype not gated",
    ),
    pytest.param(
        TORCH + "import contextlib\n\ndef autocast(enabled):\n    return contextlib.nullcontext()\n\n" + CALL,
        {"default": UNCHANGED},
        id="the script's own autocast is not the library's",
    ),
]

ROWS = [
    pytest.param(
        TORCH + "from ultralytics.utils.torch_utils import (  # noqa: F401\n    autocast as smart_amp_autocast,\n)\n",
        {"cpu": [], "default": [("TP028", 2, "PRECISION")]},
        id="a re-export the file never calls (YOLOv5's utils/torch_utils.py)",
    ),
    pytest.param(
        TORCH + ULTRALYTICS + CALL,
        {"cpu": [("TP028", 3, "NOTE")], "default": [("TP028", 3, "MODIFY")]},
        id="a call: changed, or a NOTE on the CPU",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_a_library_autocast_gets_the_targets_device(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_a_library_autocast_is_reported(source, target, rows):
    assert_rows(source, target, rows, CODE)
