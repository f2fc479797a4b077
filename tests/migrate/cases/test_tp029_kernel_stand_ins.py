"""TP029, CUDA-only kernel packages (flash-attn, xformers, bitsandbytes): on every target but cuda
their imports become torchport's stand-ins (on accelerator, tried after the package itself); an
import inside the script's own `except ImportError` fallback, and a part no stand-in covers, stay."""

import pytest

from _fixture_cases import TORCH, TORCH_NPU, UNCHANGED, assert_migrates, assert_rows, per_target

CODE = "TP029"

FLASH = "from flash_attn import flash_attn_func\n"
STAND_IN = "from torchport.compat.flash_attn import flash_attn_func\n"


def _on_every_plain_target(before: str, after: str) -> dict:
    return {"npu": TORCH_NPU + after, "xpu": TORCH + after, "mps": TORCH + after, "cpu": TORCH + after}


CASES = [
    pytest.param(
        TORCH + FLASH,
        {**_on_every_plain_target(FLASH, STAND_IN),
         "accelerator": TORCH + "try:\n    " + FLASH + "except ImportError:\n    " + STAND_IN,
         "cuda": UNCHANGED},
        id="from flash_attn import: the stand-in, tried after the package on accelerator",
    ),
    pytest.param(
        TORCH + "import bitsandbytes as bnb\nimport xformers.ops as xops\n",
        {**_on_every_plain_target("", "import torchport.compat.bitsandbytes as bnb\n"
                                      "import torchport.compat.xformers.ops as xops\n"),
         "accelerator": TORCH + "try:\n    import bitsandbytes as bnb\nexcept ImportError:\n"
                        "    import torchport.compat.bitsandbytes as bnb\n"
                        "try:\n    import xformers.ops as xops\nexcept ImportError:\n"
                        "    import torchport.compat.xformers.ops as xops\n",
         "cuda": UNCHANGED},
        id="import ... as: the alias kept",
    ),
    pytest.param(
        TORCH + "if torch.cuda.is_available(): import flash_attn\n",
        {"cpu": TORCH + "if torch.cpu.is_available(): import torchport.compat.flash_attn as flash_attn\n",
         "accelerator": TORCH + "if torch.accelerator.is_available(): import torchport.compat.flash_attn as flash_attn\n",
         "npu": TORCH_NPU + "if torch.npu.is_available(): import torchport.compat.flash_attn as flash_attn\n",
         "xpu": TORCH + "if torch.xpu.is_available(): import torchport.compat.flash_attn as flash_attn\n",
         "mps": TORCH + "if torch.backends.mps.is_available(): import torchport.compat.flash_attn as flash_attn\n",
         "cuda": UNCHANGED},
        id="in a one-line suite: the plain stand-in on every target",
    ),
    pytest.param(
        TORCH + "try:\n    " + FLASH + "except ImportError:\n    flash_attn_func = None\n",
        {"default": UNCHANGED},
        id="the script's own fallback is left to it",
    ),
    pytest.param(
        TORCH + "try:\n    import bitsandbytes as bnb\nexcept ImportError:\n"
                "    raise ImportError(\"pip install bitsandbytes\")\n",
        {**_on_every_plain_target("", "try:\n    import torchport.compat.bitsandbytes as bnb\nexcept ImportError:\n"
                                      "    raise ImportError(\"pip install bitsandbytes\")\n"),
         "accelerator": TORCH + "try:\n    try:\n        import bitsandbytes as bnb\n    except ImportError:\n"
                        "        import torchport.compat.bitsandbytes as bnb\nexcept ImportError:\n"
                        "    raise ImportError(\"pip install bitsandbytes\")\n",
         "cuda": UNCHANGED},
        id="an except that only raises again is no fallback: the stand-in (diffusers' --use_8bit_adam)",
    ),
    pytest.param(
        TORCH + "from flash_attn.bert_padding import unpad_input\n",
        {"default": UNCHANGED},
        id="a module no stand-in covers stays",
    ),
]

ROWS = [
    pytest.param(TORCH + FLASH, {"cuda": [], "default": [(CODE, 2, "MODIFY")]}, id="a change"),
    pytest.param(TORCH + "from flash_attn.bert_padding import unpad_input\n",
                 {"cuda": [], "default": [(CODE, 2, "UNSUPPORTED")]}, id="no stand-in: unsupported, with the way out"),
    pytest.param(TORCH + "from flash_attn import flash_attn_func, no_such_function\n",
                 {"cuda": [], "default": [(CODE, 2, "UNSUPPORTED")]}, id="a name the stand-in lacks"),
    pytest.param(TORCH + "try:\n    " + FLASH + "except (ImportError, OSError):\n    pass\n",
                 {"cuda": [], "default": [(CODE, 3, "NOTE")]}, id="its own fallback: a NOTE"),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES, cuda_takes_default=True))
def test_cuda_only_kernel_packages_become_the_stand_ins(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS, cuda_takes_default=True))
def test_cuda_only_kernel_packages_are_reported(source, target, rows):
    assert_rows(source, target, rows, CODE)
