"""TP030: flash-attn's flash_attn_func on torch_npu's fused attention."""

from __future__ import annotations

import libcst as cst

from torchport.apis.kernels_llm import (FLASH_ATTN_FUNC, FLASH_ATTN_FUNC_PARAMETERS, NPU_BOTTOM_RIGHT_CAUSAL,
                                        NPU_COMPRESSED_MASK, NPU_FUSION_ATTENTION, NPU_LAYOUT)
from torchport.findings import Operation
from torchport.migrate.rules.base.nodes import dotted_name, parse_expression, source_of
from torchport.migrate.rules.base.rule import Rule

_ATTENTION = "attention"


class FlashAttnNpuRule(Rule):
    """`flash_attn_func(q, k, v, dropout_p, softmax_scale, causal)` becomes the NPU's own fused
    attention, `torch_npu.npu_fusion_attention(q, k, v, heads, "BSND", scale=..., keep_prob=...,
    atten_mask=..., sparse_mode=3)[0]`: the same layout, flash-attn's default scale written out
    (torch_npu's is 1.0), its bottom-right causal mask as sparse_mode 3 with the compressed mask
    torch_npu takes. A call with other arguments (window_size, alibi_slopes, return_attn_probs),
    or whose q is not a plain name (read twice: for the heads and the scale), stays on the
    stand-in (TP029), with a row saying why."""

    code = "TP030"
    order = 290
    mentions = rb"\bflash_attn_func\b"
    reads = ("flash_attn.",)
    title = "flash-attn on the NPU's fused attention"
    readme = """npu: `flash_attn_func(q, k, v, dropout_p, softmax_scale, causal=True)` →
    `torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", scale=..., atten_mask=..., sparse_mode=3)[0]`"""
    sample = ("import torch\nfrom flash_attn import flash_attn_func\n\n\n"
              "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n")

    @classmethod
    def applies_to(cls, target) -> bool:
        return any(a.name == _ATTENTION and a.replacement == NPU_FUSION_ATTENTION for a in target.advice.affinity)

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if self.imported_name(node.func) not in FLASH_ATTN_FUNC:
            return
        given = _bound(node)
        if given is None:
            self.report(node, Operation.NOTE, "flash_attn_func with arguments torch_npu's fused attention does not "
                                              "take here: left on torchport's stand-in (SDPA)")
            return
        if dotted_name(given["q"]) is None:
            self.report(node, Operation.NOTE, "flash_attn_func(q, ...) with q an expression: left on torchport's "
                                              "stand-in (SDPA); name q first to get torch_npu's fused attention")
            return
        self.change(node, lambda updated: parse_expression(_npu_call(_bound(updated))),
                    f"flash_attn_func -> {NPU_FUSION_ATTENTION} (layout {NPU_LAYOUT}; causal: sparse_mode "
                    f"{NPU_BOTTOM_RIGHT_CAUSAL}, aligned bottom-right as flash-attn's)", api="flash_attn_func")



def _bound(call: cst.Call) -> dict[str, cst.BaseExpression] | None:
    """flash_attn_func's arguments by parameter name; None where one is not among those mapped."""
    given: dict[str, cst.BaseExpression] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        name = arg.keyword.value if arg.keyword is not None else (
            FLASH_ATTN_FUNC_PARAMETERS[index] if index < len(FLASH_ATTN_FUNC_PARAMETERS) else None)
        if name not in FLASH_ATTN_FUNC_PARAMETERS or name in given:
            return None
        given[name] = arg.value
    return given if {"q", "k", "v"} <= set(given) else None


def _npu_call(given: dict[str, cst.BaseExpression]) -> str:
    q, k, v = (source_of(given[name]) for name in ("q", "k", "v"))
    scale = given.get("softmax_scale")
    scale = source_of(scale) if scale is not None and not _is(scale, "None") else f"{q}.shape[-1] ** -0.5"
    keywords = [f"scale={scale}"]
    dropout = given.get("dropout_p")
    if dropout is not None and not _is(dropout, "0", "0.0", "0.", "None"):
        text = source_of(dropout)
        keywords.append(f"keep_prob=1.0 - {text if dotted_name(dropout) or isinstance(dropout, (cst.Float, cst.Integer)) else f'({text})'}")
    causal = given.get("causal")
    if causal is not None and not _is(causal, "False", "None"):
        mask = (f"torch.ones({NPU_COMPRESSED_MASK}, {NPU_COMPRESSED_MASK}, dtype=torch.bool, "
                f"device={q}.device).triu(diagonal=1)")
        if _is(causal, "True"):
            keywords += [f"atten_mask={mask}", f"sparse_mode={NPU_BOTTOM_RIGHT_CAUSAL}"]
        else:
            condition = source_of(causal)
            keywords += [f"atten_mask={mask} if {condition} else None",
                         f"sparse_mode={NPU_BOTTOM_RIGHT_CAUSAL} if {condition} else 0"]
    return f'{NPU_FUSION_ATTENTION}({q}, {k}, {v}, {q}.shape[2], "{NPU_LAYOUT}", {", ".join(keywords)})[0]'


def _is(node: cst.BaseExpression, *texts: str) -> bool:
    return source_of(node) in texts
