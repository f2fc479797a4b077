"""TP110-TP116: faster APIs the target has for what a line does (`affinity_api_call.csv`).

The table is data in targets/advice.py; these rules find where a script uses what a row names.
Only the optimizer swap is ever applied (`migrate --apply-affinity`): the fused optimizers take
the same arguments, compute the same update and load the same state_dict. The others change
numerics or need the tensors in another layout, so a person decides.
"""

from __future__ import annotations

import libcst as cst

from torchport.findings import Operation
from torchport.migrate.rules.base import Rule, dotted_name, parse_expression, source_of
from torchport.targets.advice import FUNCTION, OPTIMIZER, PATTERN, Affinity

CLIP = {"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_"}
SOFTMAX = {"torch.softmax", "torch.nn.functional.softmax", "torch.special.softmax"}
MATMUL = {"matmul", "bmm", "einsum"}
SILU = {"torch.nn.functional.silu"}
RSQRT = {"torch.rsqrt"}
TANH = {"torch.tanh", "torch.nn.functional.tanh"}


class _AffinityRule(Rule):
    category: str = ""  # the rows of the target's table this rule looks at
    row_name: str = ""  # the name of its row ("" for every row of its category)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.row = self.affinity(self.row_name) if self.row_name else None  # (looked up once a file, not once a node)

    @classmethod
    def applies_to(cls, target) -> bool:
        return any(r.category == cls.category and cls.row_name in ("", r.name) for r in target.advice.affinity)

    def affinity(self, name: str) -> Affinity | None:
        rows = self.target.advice.affinity
        return next((row for row in rows if row.name == name and row.category == self.category), None)

    def advise(self, node: cst.CSTNode, row: Affinity, api: str) -> None:
        message = f"{row.replacement}: {row.note}" if row.note else row.replacement
        self.report(node, Operation.AFFINITY, message, api=api, replacement=row.replacement, category=row.category)

    def called(self, node: cst.Call) -> str | None:
        """The qualified name of what `node` calls, torch's or another library's."""
        name = self.qualified_name(node.func)
        dotted = dotted_name(node.func) if name is None and self.context.imports is not None else None
        if dotted is not None and not self.is_bound_here(node.func):
            name = self.context.imports.qualified_name(dotted)
        return name


class OptimizerAffinity(_AffinityRule):
    """A torch (or timm, or BERT) optimizer that has a fused twin: every parameter updated in a
    few kernel launches instead of several per parameter. Ascend's published ports all made this
    swap by hand. With --apply-affinity the constructor is swapped, its arguments kept."""

    code = "TP110"
    reads = ("torch.optim",)
    category = OPTIMIZER
    mentions = rb"\b(?:SGD|Adam|AdamW|Adadelta|RMSprop|Lamb|AdamP|RMSpropTF|BertAdam)\("
    title = "affinity: fused optimizers"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        name = self.called(node)
        if name is None:
            return
        name = _canonical_optimizer(name)
        row = self.affinity(name)
        if row is None:
            return
        self.advise(node, row, name)
        if row.safe and self.context.apply_affinity:
            replacement = row.replacement

            def swap(updated: cst.Call) -> cst.Call:
                return updated.with_changes(func=parse_expression(replacement))

            self.change(node, swap, f"use {replacement} (--apply-affinity: same arguments and state_dict)",
                        needs=replacement)


def _canonical_optimizer(name: str) -> str:
    """`torch.optim.adam.Adam` -> `torch.optim.Adam`, `timm.optim.lamb.Lamb` -> `timm.optim.Lamb`."""
    for package in ("torch.optim.", "timm.optim."):
        if name.startswith(package):
            return package + name.rsplit(".", 1)[-1]
    return name


class ClipGradAffinity(_AffinityRule):
    """`clip_grad_norm_` walks every gradient; a fused optimizer clips its flat buffer at once."""

    code = "TP111"
    reads = tuple(CLIP)
    category = FUNCTION
    row_name = "torch.nn.utils.clip_grad_norm_"
    mentions = rb"clip_grad_norm_"
    title = "affinity: fused clipping"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        name = self.qualified_name(node.func)
        row = self.row if name in CLIP else None
        if row is not None:
            self.advise(node, row, name)


class AttentionAffinity(_AffinityRule):
    """Attention by hand, `softmax(q @ k.transpose(-2, -1) / scale) @ v`: the softmax of a
    matrix product is the tell. One fused kernel does it without keeping the L x L scores."""

    code = "TP112"
    reads = tuple(SOFTMAX)
    category = PATTERN
    row_name = "attention"
    mentions = rb"softmax\([^\n]*(?:@|matmul|bmm|einsum)|\)\.softmax\("
    title = "affinity: attention"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        func = node.func
        is_softmax = self.qualified_name(func) in SOFTMAX or (isinstance(func, cst.Attribute) and func.attr.value == "softmax")
        row = self.row
        if row is None or not is_softmax or not node.args:
            return
        scores = func.value if isinstance(func, cst.Attribute) and self.qualified_name(func) is None else node.args[0].value
        if _contains_matmul(scores):
            self.advise(node, row, "softmax(q @ k^T)")


def _contains_matmul(node: cst.CSTNode) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def visit_BinaryOperation(self, op: cst.BinaryOperation) -> None:  # noqa: N802
            if isinstance(op.operator, cst.MatrixMultiply):
                found.append(op)

        def visit_Call(self, call: cst.Call) -> None:  # noqa: N802
            func = call.func
            name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            if name in MATMUL:
                found.append(call)

    node.visit(Finder())
    return bool(found)


class RmsNormAffinity(_AffinityRule):
    """RMSNorm by hand, `x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)`."""

    code = "TP113"
    reads = tuple(RSQRT)
    category = PATTERN
    row_name = "rms_norm"
    mentions = rb"rsqrt\([^\n]*mean\("
    title = "affinity: RMSNorm"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        row = self.row
        if row is None or self.qualified_name(node.func) not in RSQRT or not node.args:
            return
        inner = source_of(node.args[0].value)
        if ".mean(" in inner and (".pow(2)" in inner or "**2" in inner.replace(" ", "")):
            self.advise(node, row, "x * rsqrt(mean(x^2) + eps)")


class RotaryEmbeddingAffinity(_AffinityRule):
    """Rotary position embedding by hand: the `rotate_half` helper that every RoPE copy defines."""

    code = "TP114"
    reads = ()
    category = PATTERN
    row_name = "rotary_embedding"
    mentions = rb"rotate_half"
    title = "affinity: rotary embedding"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:  # noqa: N802
        row = self.row
        if row is not None and node.name.value == "rotate_half":
            self.advise(node, row, "rotate_half")


class SwigluAffinity(_AffinityRule):
    """SwiGLU by hand, `F.silu(gate) * up`."""

    code = "TP115"
    reads = tuple(SILU)
    category = PATTERN
    row_name = "swiglu"
    mentions = rb"silu\([^\n]*\)\s*\*|\*\s*[\w.]*silu\("
    title = "affinity: SwiGLU"

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:  # noqa: N802
        row = self.row
        if row is None or not isinstance(node.operator, cst.Multiply):
            return
        for side in (node.left, node.right):
            if isinstance(side, cst.Call) and self.qualified_name(side.func) in SILU:
                self.advise(node, row, "silu(a) * b")
                return


class GeluTanhAffinity(_AffinityRule):
    """GELU's tanh approximation by hand, `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))`."""

    code = "TP116"
    reads = tuple(TANH)
    category = PATTERN
    row_name = "gelu_tanh"
    mentions = rb"0\.044715"
    title = "affinity: GELU"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        row = self.row
        if row is not None and self.qualified_name(node.func) in TANH and node.args:
            if "0.044715" in source_of(node.args[0].value):
                self.advise(node, row, "0.5 * x * (1 + tanh(...))")
