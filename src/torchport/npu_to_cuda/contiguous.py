"""A view of a comparison's result, which holds on the NPU alone: ModelZoo's accuracy() (91 of its
files) takes `correct = pred.eq(target.view(1, -1).expand_as(pred))` after `pred = pred.t()`,
then `correct[:k].view(-1)`. The NPU's kernels write their outputs contiguous, so the view works
there; torch elsewhere gives `eq` the transposed strides of its input, and the view raises "view
size is not compatible with input tensor's size and stride". It becomes `reshape`, which views
where it can and copies where it must: the same values on every device."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from torchport.npu_to_cuda import changes
from torchport.npu_to_cuda.edits import code

VIEW, RESHAPE = "view", "reshape"
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


def visit_view(walk, node: cst.Call, func: cst.Attribute) -> None:
    """`name[...].view(...)` where the function (or module) binds `name` to a comparison."""
    part = func.value
    if func.attr.value != VIEW or not isinstance(part, cst.Subscript) or not isinstance(part.value, cst.Name):
        return
    if not _bound_to_a_comparison(walk, node, part.value.value):
        return
    walk.change(func, lambda updated: updated.with_changes(attr=cst.Name(RESHAPE)), node, changes.CONTIGUOUS,
                f"{code(part)}.{VIEW}() -> .{RESHAPE}(): a comparison's result is contiguous on the NPU, not "
                f"elsewhere (it keeps its input's strides, a transposed one here), where {VIEW}() refuses it",
                f"torch.Tensor.{VIEW}")


def _bound_to_a_comparison(walk, node: cst.CSTNode, name: str) -> bool:
    scope = node
    while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
        scope = walk.parent(scope)
    if scope is None:
        return False
    comparison = m.Call(func=m.Attribute(attr=m.OneOf(*(m.Name(c) for c in COMPARISONS))))
    return bool(m.findall(scope, m.Assign(targets=[m.AssignTarget(target=m.Name(name))], value=comparison)))
