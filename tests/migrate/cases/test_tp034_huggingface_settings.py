"""TP034, Hugging Face settings that ask for CUDA's kernels or devices: flash-attn's attention
becomes torch's SDPA, diffusers' xformers switch goes, and on the CPU a device-map index is "cpu"."""

import pytest

from _fixture_cases import UNCHANGED, assert_migrates, assert_rows, per_target

CODE = "TP034"

SDPA = (
    "from transformers import AutoModelForCausalLM\n"
    'model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="sdpa")\n'
    'kwargs = {"attn_implementation": "sdpa", "use_cache": False}\n'
    'model.config._attn_implementation = "sdpa"\n'
    'if model.config._attn_implementation == "flash_attention_2":\n'
    "    pack = True\n"
)

CASES = [
    pytest.param(
        "from transformers import AutoModelForCausalLM\n"
        'model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="flash_attention_2")\n'
        'kwargs = {"attn_implementation": "flash_attention_3", "use_cache": False}\n'
        'model.config._attn_implementation = "flash_attention_2"\n'
        'if model.config._attn_implementation == "flash_attention_2":\n'
        "    pack = True\n",
        {
            "npu": "import torch_npu\n" + SDPA,  # (torch_npu imported: what transformers needs to find the NPU)
            "default": SDPA,
        },
        id="flash-attn's attention asked for as a keyword, a model argument, a config attribute; a test of it kept",
    ),
    pytest.param(
        "unet = UNet2DConditionModel.from_pretrained(path)\n"
        "if args.enable_xformers_memory_efficient_attention:\n"
        "    unet.enable_xformers_memory_efficient_attention()\n"
        "pipe.enable_xformers_memory_efficient_attention(); pipe.set_progress_bar_config(disable=True)\n",
        {
            "npu": (
                "import torch_npu\n"
                "\n"
                "unet = UNet2DConditionModel.from_pretrained(path)\n"
                "pipe.enable_xformers_memory_efficient_attention(); pipe.set_progress_bar_config(disable=True)\n"
            ),
            "default": (
                "unet = UNet2DConditionModel.from_pretrained(path)\n"
                "pipe.enable_xformers_memory_efficient_attention(); pipe.set_progress_bar_config(disable=True)\n"
            ),
        },
        id="diffusers' xformers switch dropped where it is a statement alone (its if goes with it)",
    ),
    pytest.param(
        'model = AutoModelForCausalLM.from_pretrained(path, device_map={"": local_rank}, torch_dtype=torch.bfloat16)\n'
        "model = AutoModelForCausalLM.from_pretrained(path, device_map=0)\n"
        'model = AutoModelForCausalLM.from_pretrained(path, device_map="auto")\n',
        {
            "cpu": (
                'model = AutoModelForCausalLM.from_pretrained(path, device_map={"": "cpu"}, torch_dtype=torch.bfloat16)\n'
                'model = AutoModelForCausalLM.from_pretrained(path, device_map="cpu")\n'
                'model = AutoModelForCausalLM.from_pretrained(path, device_map="auto")\n'
            ),
            "default": UNCHANGED,
        },
        id="a device-map index on the CPU names the CPU; elsewhere the index is the device's",
    ),
    pytest.param(
        "def main(args, unet):\n"
        "    if args.enable_xformers_memory_efficient_attention:\n"
        "        if is_xformers_available():\n"
        "            import xformers\n"
        "\n"
        "            if version.parse(xformers.__version__) == version.parse(\"0.0.16\"):\n"
        "                logger.warning(\"xFormers 0.0.16 cannot be used for training in some GPUs.\")\n"
        "            unet.enable_xformers_memory_efficient_attention()\n"
        "        else:\n"
        "            raise ValueError(\"xformers is not available. Make sure it is installed correctly\")\n"
        "    unet.train()\n",
        {
            "npu": "import torch_npu\n\ndef main(args, unet):\n    unet.train()\n",
            "default": "def main(args, unet):\n    unet.train()\n",
        },
        id="diffusers' examples: the block the flag switches goes whole, its version check and its raise with it",
    ),
    pytest.param(
        "unet.train()\n"
        "# attention through xformers when asked for\n"
        "if args.enable_xformers_memory_efficient_attention:\n"
        "    unet.enable_xformers_memory_efficient_attention()\n"
        "optimizer = make(unet)\n",
        {
            "npu": "import torch_npu\n\nunet.train()\n# attention through xformers when asked for\noptimizer = make(unet)\n",
            "default": "unet.train()\n# attention through xformers when asked for\noptimizer = make(unet)\n",
        },
        id="a comment above the dropped block stays, on the statement that follows (was an internal error)",
    ),
]

ROWS = [
    pytest.param(
        "pipe.enable_xformers_memory_efficient_attention(); pipe.set_progress_bar_config(disable=True)\n"
        "ok = pipe.enable_xformers_memory_efficient_attention() is None\n",
        {"default": [("TP034", 1, "NOTE"), ("TP034", 2, "NOTE")]},
        id="the switch beside another statement, or its value used: noted, left",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_hugging_face_settings_ask_for_what_the_target_runs(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_a_switch_that_cannot_go_is_noted(source, target, rows):
    assert_rows(source, target, rows, CODE)
