"""TP036, other libraries' APIs built for CUDA and not for the target: a row with what to use
instead, nothing rewritten."""

import pytest

from _fixture_cases import UNCHANGED, assert_migrates, assert_rows, per_target

CODE = "TP036"

SOURCE = (
    "import deepspeed\n"
    "from deepspeed.ops.lamb import FusedLamb\n"
    "from transformers import BitsAndBytesConfig\n"
    "optimizer = FusedLamb(model.parameters(), lr=1e-3)\n"
    "adam = deepspeed.ops.adam.FusedAdam(model.parameters())\n"
    "quantization = BitsAndBytesConfig(load_in_4bit=True)\n"
    'ds_config = {"zero_optimization": {"stage": 3, "zero_quantized_weights": True, "zero_quantized_gradients": False}}\n'
)

CASES = [pytest.param(SOURCE, {"default": UNCHANGED}, id="nothing rewritten")]

ROWS = [
    pytest.param(
        SOURCE,
        {
            "npu": [("TP036", 4, "UNSUPPORTED"), ("TP036", 6, "UNSUPPORTED"), ("TP036", 7, "UNSUPPORTED")],
            "cpu": [("TP036", 4, "UNSUPPORTED"), ("TP036", 5, "UNSUPPORTED")],
            "default": [],
        },
        id="DeepSpeed's FusedLamb, ZeRO++ switched on, bitsandbytes on npu; DeepSpeed's fused GPU optimizers on cpu",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_nothing_is_rewritten(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_an_api_without_a_build_for_the_target_is_reported(source, target, rows):
    assert_rows(source, target, rows, CODE)
