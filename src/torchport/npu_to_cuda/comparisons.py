"""`opt.device == 'npu'`: a value compared with the NPU's device type often comes from the command
line (`--device npu` in ModelZoo's test/train_full_1p.sh and READMEs, which the conversion does not
rewrite), while the option's `default="npu"` becomes CUDA's. The test then accepts both spellings,
`opt.device in ("cuda", "npu")` (`not in` for `!=`), so that it holds for the new default and for
the command lines written for the NPU alike."""

from __future__ import annotations

import libcst as cst

from torchport.npu_to_cuda import changes, names
from torchport.string_literals import quoted

DEVICE_TYPE_ATTRIBUTE = "type"  # torch.device(...).type


def accept_both(walk, node: cst.SimpleString, value: str) -> bool:
    """Rewrite the comparison `node` (the "npu" literal) is an operand of; whether it did (or
    whether `node` is already one of the spellings such a test accepts: converting twice changes nothing)."""
    if value != names.DEVICE_TYPE:
        return False
    if _accepted_spelling(walk, node):
        return True
    parent = walk.parent(node)
    comparison = walk.parent(parent) if isinstance(parent, cst.ComparisonTarget) else parent
    if not isinstance(comparison, cst.Comparison) or len(comparison.comparisons) != 1:
        return False
    (target,) = comparison.comparisons
    if not isinstance(target.operator, (cst.Equal, cst.NotEqual)):
        return False
    literal_left = comparison.left is node
    if not literal_left and target.comparator is not node:
        return False
    other = comparison.left if not literal_left else target.comparator
    if isinstance(other, (cst.SimpleString, cst.FormattedString)):
        return False  # ("npu" == "npu": nothing read from outside)
    if isinstance(other, cst.Attribute) and other.attr.value == DEVICE_TYPE_ATTRIBUTE:
        return False  # (x.device.type: torch's answer, never the command line's)
    negated = isinstance(target.operator, cst.NotEqual)
    spelled = f"({quoted(node, names.CUDA_TYPE).value}, {node.value})"
    operator = "not in" if negated else "in"

    def fix(updated: cst.Comparison) -> cst.Comparison:
        other = updated.comparisons[0].comparator if literal_left else updated.left
        new = cst.parse_expression(f"_ {operator} {spelled}")
        return new.with_changes(left=other, lpar=updated.lpar, rpar=updated.rpar)

    walk.skipped.add(node)
    walk.change(comparison, fix, node, changes.DEVICES,
                f"== {value!r} -> {operator} {spelled}: the option's default becomes {names.CUDA_TYPE!r}, "
                f"while command lines written for the NPU still say {value!r}", value)
    return True


def _accepted_spelling(walk, node: cst.SimpleString) -> bool:
    """`x in (new, "npu")`, as accept_both writes it: the NPU's spelling, second of the pair."""
    element = walk.parent(node)
    pair = walk.parent(element) if isinstance(element, cst.Element) else None
    if not (isinstance(pair, cst.Tuple) and len(pair.elements) == 2 and pair.elements[1] is element):
        return False
    target = walk.parent(pair)
    return isinstance(target, cst.ComparisonTarget) and isinstance(target.operator, (cst.In, cst.NotIn))
