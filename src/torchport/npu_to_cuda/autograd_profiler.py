"""torch_npu's keyword of torch's own autograd profiler: `torch.autograd.profiler.profile(use_npu=True)`
-> `use_device="cuda"` (torch's spelling; its use_cuda= is deprecated), in the call or in a dict
literal the file passes to that profiler as `**kwargs` (`kwargs = {'use_npu': True}`)."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ScopeProvider

from torchport.apis.profiler import AUTOGRAD_PROFILE, DEVICE_KEYWORD
from torchport.findings import Operation
from torchport.npu_to_cuda import changes, names, strings
from torchport.npu_to_cuda.edits import code
from torchport.targets import npu as npu_facts

KEYWORD = npu_facts.AUTOGRAD_PROFILER_KEYWORD


def device_value(value: cst.BaseExpression, quote: str = '"') -> str:
    """What use_device= takes for what use_npu= was given."""
    device = f"{quote}{names.CUDA_TYPE}{quote}"
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return device if value.value == "True" else "None"
    return f"{device} if {code(value)} else None"


def visit_call(walk, node: cst.Call, func: str) -> None:
    """`profile(use_npu=x)`."""
    if func != AUTOGRAD_PROFILE:
        return
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == KEYWORD:
            new = device_value(arg.value)
            walk.skipped.add(arg)

            def fix(updated: cst.Arg, new=new) -> cst.Arg:
                return updated.with_changes(keyword=cst.Name(DEVICE_KEYWORD), value=cst.parse_expression(new))

            walk.change(arg, fix, arg, changes.PROFILER, f"{KEYWORD}= of {func} -> {DEVICE_KEYWORD}={new}", KEYWORD)


def visit_dict_element(walk, node: cst.DictElement) -> None:
    """`{'use_npu': True}`: converted where the dict is bound to a name the file passes to the
    profiler as **kwargs; else listed (what it is passed to is not known here)."""
    if not isinstance(node.key, cst.SimpleString) or strings.string_value(node.key) != KEYWORD:
        return
    if _passed_to_the_profiler(walk, walk.parent(node)):
        quote = node.key.quote
        new = device_value(node.value, quote)
        walk.skipped.add(node)

        def fix(updated: cst.DictElement, new=new) -> cst.DictElement:
            key = strings.quoted(updated.key, DEVICE_KEYWORD)
            return updated.with_changes(key=key, value=cst.parse_expression(new))

        walk.change(node, fix, node, changes.PROFILER,
                    f"{KEYWORD!r} of the **kwargs of {AUTOGRAD_PROFILE} -> {DEVICE_KEYWORD!r}: {new}", KEYWORD)
        return
    walk.edits.row(walk.line(node), changes.PROFILER, Operation.UNSUPPORTED,
                   f"{KEYWORD!r}: torch_npu's keyword of {AUTOGRAD_PROFILE}; where this dict is passed to it, "
                   f"write {DEVICE_KEYWORD}={names.CUDA_TYPE!r} (not found in this file)", KEYWORD)


def _passed_to_the_profiler(walk, literal: cst.CSTNode | None) -> bool:
    """Whether `literal` (a dict) is assigned to a name, and every read of that name is `**name`
    in a call of the autograd profiler."""
    assign = walk.parent(literal)
    if not (isinstance(literal, cst.Dict) and isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)):
        return False
    scope = walk.get_metadata(ScopeProvider, assign, None)
    if scope is None:
        return False
    target = assign.targets[0].target
    accesses = [access for assignment in scope.assignments[target.value] if assignment.node is target
                for access in assignment.references]
    return bool(accesses) and all(_is_profiler_kwargs(walk, access.node) for access in accesses)


def _is_profiler_kwargs(walk, node: cst.CSTNode) -> bool:
    arg = walk.parent(node)
    call = walk.parent(arg) if isinstance(arg, cst.Arg) else None
    return isinstance(call, cst.Call) and arg.star == "**" and walk.imported(call.func) == AUTOGRAD_PROFILE
