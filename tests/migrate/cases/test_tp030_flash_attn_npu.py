"""TP030, flash_attn_func on the NPU's own fused attention (npu only): the layout, flash-attn's
default scale written out, its bottom-right causal mask as sparse_mode 3; other calls stay on the
stand-in with a NOTE. What the rewritten call computes is checked against attention written out,
through torchport's torch_npu stand-in (the documented semantics of npu_fusion_attention), with
query and key lengths apart and grouped heads; its keywords against that stand-in's signature and
its name against the torch_npu wheel's operator list."""

import ast
import inspect
import json
from pathlib import Path

import pytest
import torch

from _fixture_cases import TORCH, TORCH_NPU, assert_migrates, assert_rows, migrated, per_target

CODE = "TP030"

FLASH = "from flash_attn import flash_attn_func\n"
NPU_HEAD = TORCH_NPU + "from torchport.compat.flash_attn import flash_attn_func\n"
MASK = "torch.ones(2048, 2048, dtype=torch.bool, device=q.device).triu(diagonal=1)"


def _body(call: str) -> str:
    return f"\n\ndef attend(q, k, v, p, causal):\n    return {call}\n"


CASES = [
    pytest.param(
        TORCH + FLASH + _body("flash_attn_func(q, k, v, dropout_p=0.0, causal=True)"),
        {"npu": NPU_HEAD + _body(f'torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", scale=q.shape[-1] ** -0.5, '
                                 f'atten_mask={MASK}, sparse_mode=3)[0]'),
         },
        id="causal, no dropout",
    ),
    pytest.param(
        TORCH + FLASH + _body("flash_attn_func(q, k, v, p, 0.125, causal)"),
        {"npu": NPU_HEAD + _body(f'torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", scale=0.125, '
                                 f'keep_prob=1.0 - p, atten_mask={MASK} if causal else None, '
                                 f'sparse_mode=3 if causal else 0)[0]'),
         },
        id="positional, a dropout, a scale, causal as a variable",
    ),
    pytest.param(
        TORCH + FLASH + _body("flash_attn_func(q, k, v, causal=True, window_size=(8, 0))"),
        {"npu": NPU_HEAD + _body("flash_attn_func(q, k, v, causal=True, window_size=(8, 0))") },
        id="a sliding window: left on the stand-in",
    ),
]


ROWS = [
    pytest.param(TORCH + FLASH + _body("flash_attn_func(q, k, v, causal=True)"),
                 {"npu": [(CODE, 6, "MODIFY")], "default": []}, id="a change on npu alone"),
    pytest.param(TORCH + FLASH + _body("flash_attn_func(q.float(), k, v)"),
                 {"npu": [(CODE, 6, "NOTE")], "default": []}, id="q an expression: a NOTE"),
    pytest.param(TORCH + FLASH + _body("flash_attn_func(q, k, v, return_attn_probs=True)"),
                 {"npu": [(CODE, 6, "NOTE")], "default": []}, id="an argument it does not take: a NOTE"),
]


@pytest.mark.parametrize(("source", "expected"), [pytest.param(c.values[0], c.values[1]["npu"], id=c.id) for c in CASES])
def test_flash_attn_func_becomes_npu_fusion_attention(source, expected):
    """(the other targets: TP030 writes no row there, below; the import is TP029's)"""
    assert_migrates(source, "npu", expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS, cuda_takes_default=True))
def test_flash_attn_func_rows(source, target, rows):
    assert_rows(source, target, rows, CODE)


def _attend_on_npu_stand_in(call: str):
    from torchport.compat.torch_npu import ops

    source = migrated(TORCH + FLASH + _body(call), "npu").source.decode()
    namespace = {"torch": torch, "torch_npu": ops}
    exec(source.replace("import torch_npu\n", "").replace(FLASH.replace("flash_attn", "torchport.compat.flash_attn"), ""),
         namespace)
    return namespace["attend"]


@pytest.mark.parametrize("causal", [True, False])
def test_the_npu_call_computes_flash_attn_semantics(causal):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "compat"))
    import _attention_reference as reference

    generator = torch.Generator().manual_seed(0)
    q = torch.randn(2, 5, 4, 8, generator=generator)  # Sq 5 against Sk 9: bottom-right alignment shows
    k, v = (torch.randn(2, 9, 2, 8, generator=generator) for _ in range(2))  # grouped heads: 4 on 2
    attend = _attend_on_npu_stand_in("flash_attn_func(q, k, v, dropout_p=0.0, causal=causal)")
    expected = reference.attention(q, k, v, allowed=reference.mask(5, 9, causal, bottom_right=True))
    torch.testing.assert_close(attend(q, k, v, 0.0, causal).double(), expected, rtol=1e-5, atol=1e-6)


def test_the_npu_call_takes_the_documented_parameters_of_an_operator_the_wheel_has():
    from torchport.compat.torch_npu.ops import npu_fusion_attention

    call = migrated(TORCH + FLASH + _body("flash_attn_func(q, k, v, p, 0.1, causal)"), "npu").source.decode()
    fused = next(node for node in ast.walk(ast.parse(call)) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Attribute) and node.func.attr == "npu_fusion_attention")
    used = {keyword.arg for keyword in fused.keywords}
    assert len(fused.args) == 5  # query, key, value, head_num, input_layout
    assert used == {"scale", "keep_prob", "atten_mask", "sparse_mode"}
    assert used <= set(inspect.signature(npu_fusion_attention).parameters)
    wheel = json.loads((Path(__file__).resolve().parents[3] / "src/torchport/targets/data/kernels-torch_npu-2.14.0.json").read_text())
    assert "npu_fusion_attention" in wheel["custom"]
