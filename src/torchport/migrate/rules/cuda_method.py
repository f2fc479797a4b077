"""TP003: `x.cuda()` on tensors and modules."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from torchport.apis.cuda_module import DEVICE_MODULE, MOVE_METHOD
from torchport.findings import Operation
from torchport.migrate.rules.base.device_exprs import device_expression, is_device_value
from torchport.migrate.rules.base.nodes import (
    call_argument,
    keyword_argument,
    parse_expression,
    source_of,
    with_arguments,
)
from torchport.migrate.rules.base.rule import Rule
from torchport.targets.devices import any_device_source, indexed_device_source


class CudaMethodRule(Rule):
    """Rewrite `x.cuda()`, `x.cuda(i)`, `x.cuda(non_blocking=True)` to the target's idiom.

    With a device method (`.npu()`, `.xpu()`) the call is renamed and keeps its arguments;
    `.cpu()` takes none. Elsewhere it becomes `x.to(<device>)`, keeping `non_blocking`.

    A `.cuda` method called through a conditional (`(x.cuda if c else x.cpu)()`) is renamed the
    same way, or bound to the device (`functools.partial(x.to, <device>)`) where it becomes `.to`.

    `.cuda(d)` takes an index, None (the current device), a device or its name, and means the
    CUDA device that `d` names: the rewrite keeps that meaning for every kind `d` may be. A `d`
    known to be an index becomes `torch.device(type, d)`; one known to be a device (or its name)
    moves as it is; one the rewrite cannot tell goes through the target's device function.

    The storage of a `map_location=lambda storage, location: storage.cuda()` gets the target's
    storage method (`.cpu()`, `.npu()`), else `.to(device=<device>)`.
    """

    code = "TP003"
    order = 50
    mentions = rb"\.cuda\b"
    reads = ("torch.cuda",)
    title = ".cuda() calls"
    readme = """`x.cuda(...)` → `.npu()`, `.xpu()`, `.cpu()` or `.to(<device>)`; on accelerator `x.cuda(d)` keeps its
    meaning for every kind `d` holds: `.to(d)` for a device or its name, `torch.device(DEVICE_TYPE, d)` for
    an index, `accelerator_device(d)` (a helper written once into the file) where the file does not say"""
    sample = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == MOVE_METHOD):
            return
        if self.qualified_name(func) == "torch.cuda":  # the module itself, not a method
            return
        storage = self._is_storage(node, func.value)
        method = self.target.storage_method if storage else self.target.tensor_method
        if method is not None and not self.target.has_device:  # (`.cpu()` takes no device)
            self.change(node, _renamed(method, keep_args=False), f"replace .cuda() with .{method}()")
        elif method is not None:
            arguments = "(...)" if node.args else "()"  # (the message shows the call as written)
            self.change(node, _renamed(method, keep_args=True), f"replace .cuda{arguments} with .{method}{arguments}")
        else:
            argument = call_argument(node, "device", position=0)
            if argument is None:
                device = device_expression(self.target, None)
                self.change(node, _moved_to(lambda _: device, storage), f"replace .cuda() with .to({device})", needs=device)
                return
            spelling = self._spelling_for(argument.value)
            shown = spelling(source_of(argument.value))
            # (what the new code needs: the target's names, not the script's)
            needs = spelling("0") if spelling("0") != "0" else ""
            self.change(node, _moved_to(spelling, storage), f"replace .cuda() with .to({shown})", needs=needs)

    def _is_storage(self, call: cst.Call, receiver: cst.BaseExpression) -> bool:
        """Whether `receiver` (of `call`) is the storage a `map_location=lambda storage, location: ...`
        is given (a storage's `.to` takes the device by name only, and has no `.xpu()`)."""
        if not isinstance(receiver, cst.Name):
            return False
        node = self.parent(call)
        while node is not None and not isinstance(node, (cst.Lambda, cst.BaseStatement, cst.BaseSmallStatement)):
            node = self.parent(node)
        if not (isinstance(node, cst.Lambda) and node.params.params and node.params.params[0].name.value == receiver.value):
            return False
        argument = self.parent(node)
        return isinstance(argument, cst.Arg) and argument.keyword is not None and argument.keyword.value == "map_location"

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        """`(x.cuda if c else y.cpu)()`: a `.cuda` method called through a conditional."""
        if node.attr.value != MOVE_METHOD or self.qualified_name(node) == DEVICE_MODULE:
            return
        call = self._called_through_conditional(node)
        if call is None:
            return
        method = self.target.tensor_method
        positional = any(a.keyword is None for a in call.args)
        if method is not None and (self.target.has_device or not call.args):
            self.change(node, lambda updated: updated.with_changes(attr=cst.Name(method)),
                        f"replace .cuda with .{method} (called through a conditional)")
        elif method is None and not positional:
            device = device_expression(self.target, None)
            new = f"functools.partial({source_of(node.value)}.to, {device})"
            self.change(node, lambda updated: parse_expression(f"functools.partial({source_of(updated.value)}.to, {device})"),
                        f"replace .cuda with {new} (called through a conditional)", needs=f"functools.partial {device}")
        else:
            self.report(node, Operation.UNSUPPORTED, "a .cuda method called through a conditional with arguments "
                        f"that .{method or 'to'} reads otherwise: port this call by hand", api="torch.Tensor.cuda")

    def _called_through_conditional(self, node: cst.Attribute) -> cst.Call | None:
        """The call whose callee is a conditional expression with `node` as one of its values."""
        child, parent = node, self.parent(node)
        if not isinstance(parent, cst.IfExp):
            return None
        while isinstance(parent, cst.IfExp) and parent.test is not child:
            child, parent = parent, self.parent(parent)
        return parent if isinstance(parent, cst.Call) and parent.func is child else None

    def _spelling_for(self, value: cst.BaseExpression) -> Callable[[str], str]:
        """How to spell the target's device for `.cuda(value)`, given the value's source: as it
        is where it is a device already (its own spelling is the other rules' to port)."""
        target, text = self.target, source_of(value)
        if isinstance(value, cst.Integer) or text == "None" or text in self.context.device_index_names:
            return lambda source: indexed_device_source(target, source)
        if is_device_value(value) or text in self.context.device_names:
            return lambda source: source
        return lambda source: any_device_source(target, source)


def _renamed(method: str, *, keep_args: bool):
    def fix(updated: cst.Call) -> cst.Call:
        renamed = updated.with_changes(func=updated.func.with_changes(attr=cst.Name(method)))
        return renamed if keep_args else renamed.with_changes(args=[])

    return fix


def _moved_to(spelling: Callable[[str], str], by_name: bool = False):
    """`x.cuda(i, non_blocking=True)` -> `x.to(<device>, non_blocking=True)`, the device spelled
    from the call's own device argument as the other rules left it (`device=<device>` where
    `by_name`: a storage's `.to` takes it so)."""

    def fix(updated: cst.Call) -> cst.Call:
        argument = call_argument(updated, "device", position=0)
        keywords = [a for a in updated.args if a.keyword is not None and a.keyword.value != "device"]
        to = updated.with_changes(func=updated.func.with_changes(attr=cst.Name("to")), args=keywords)
        device = parse_expression(spelling("" if argument is None else source_of(argument.value)))
        return with_arguments(to, before=[keyword_argument("device", device) if by_name else cst.Arg(device)])

    return fix
