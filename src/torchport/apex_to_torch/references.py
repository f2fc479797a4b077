"""Where a file names apex: each use (outside its imports) by the qualified name it resolves to,
and what each use is (a call of a known API, a context, a decorator) or why it is not understood."""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from torchport.apis import apex
from torchport.apex_to_torch.changes import Unconvertible
from torchport.distribute.edits import Read, code, walk

REPLACEMENTS = {**apex.OPTIMIZERS, **apex.PARALLEL, **apex.NORMALIZATION}
# The amp calls the conversion rewrites, each only as a call (`amp.scale_loss` only as a `with`'s context).
AMP_CALLS = frozenset({apex.INITIALIZE, apex.SCALE_LOSS, apex.MASTER_PARAMS, apex.STATE_DICT,
                       apex.LOAD_STATE_DICT, apex.DISABLE_CASTS, *apex.REGISTRATIONS})
NEEDS_SCALER = frozenset({apex.SCALE_LOSS, apex.MASTER_PARAMS, apex.STATE_DICT, apex.LOAD_STATE_DICT})


class Use(NamedTuple):
    node: cst.BaseExpression  # the outermost name or attribute chain that resolves into apex
    api: str  # its qualified name, e.g. "apex.amp.scale_loss"
    call: cst.Call | None  # the call it is the function of, if it is one


def is_apex(name: str) -> bool:
    return name == apex.APEX or name.startswith(apex.APEX + ".")


def uses(found: Read) -> list[Use]:
    """Every use of an apex name in the file, in the order of the file (imports are not uses)."""
    result = []
    for node in found.walk(found.module):
        if not isinstance(node, (cst.Name, cst.Attribute)) or _in_import(found, node):
            continue
        api = _apex_name(found, node)
        if api is None or _apex_name(found, found.parent(node)) is not None and _is_receiver(found, node):
            continue  # (the `amp` of `amp.initialize`: its chain is the use)
        parent = found.parent(node)
        call = parent if isinstance(parent, cst.Call) and parent.func is node else None
        result.append(Use(node, api, call))
    return result


def check(found: Read, used: list[Use]) -> None:
    """Raise Unconvertible at the first use the conversion does not rewrite."""
    for use in used:
        line = found.line(use.node)
        if use.api == apex.FP16_UTILS or use.api.startswith(apex.FP16_UTILS + "."):
            raise Unconvertible(line, f"{code(use.node)} (apex.fp16_utils) has no one-to-one native form",
                                notes=((line, apex.FP16_UTILS_RECIPE),))
        if use.api in REPLACEMENTS and use.call is not None:
            continue
        if use.api in AMP_CALLS and use.call is not None and _in_place(found, use):
            continue
        if use.api in apex.REGISTRATIONS and isinstance(found.parent(use.node), cst.Decorator):
            continue
        raise Unconvertible(line, f"{code(use.node)} is used in a form the conversion does not rewrite "
                                  f"({_form(found, use)})")


def _in_place(found: Read, use: Use) -> bool:
    """Where each amp call must sit to be rewritten: scale_loss and disable_casts as a `with`'s
    context, a registration as a statement of its own or a decorator."""
    parent = found.parent(use.call)
    if use.api in (apex.SCALE_LOSS, apex.DISABLE_CASTS):
        return isinstance(parent, cst.WithItem)
    if use.api in apex.REGISTRATIONS:
        return isinstance(parent, (cst.Expr, cst.Decorator))
    return True


def _form(found: Read, use: Use) -> str:
    if use.call is None:
        return "passed or kept as a value, not called"
    if use.api in (apex.SCALE_LOSS, apex.DISABLE_CASTS):
        return "not the context of a with statement"
    if use.api in apex.REGISTRATIONS:
        return "a registration whose result is used"
    return "an apex name with no native replacement"


def _apex_name(found: Read, node: cst.CSTNode | None) -> str | None:
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return None
    names = sorted(q for q in found.qualified(node) if is_apex(q))
    return max(names, key=len) if names else None


def _is_receiver(found: Read, node: cst.CSTNode) -> bool:
    parent = found.parent(node)
    return isinstance(parent, cst.Attribute) and parent.value is node


def _in_import(found: Read, node: cst.CSTNode) -> bool:
    while node is not None and not isinstance(node, cst.BaseStatement):
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            return True
        node = found.parent(node)
    return False
