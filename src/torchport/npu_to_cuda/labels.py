"""int32 class labels, an Ascend habit (`target = target.to(torch.int32)`, `criterion(out, target.int())`):
torch's losses that read class indices want int64 off the NPU, so an int32 cast whose value
reaches such a loss (apis/losses.py) becomes an int64 one.

A loss is a call of F.cross_entropy / F.nll_loss, or of a name the file binds to one of the loss
classes (`criterion = nn.CrossEntropyLoss().to(loc)`, `self.criterion = ...`; a function's parameter
of that name, as ModelZoo's `train(loader, model, criterion, ...)` receives it). Its target is read
where the call gives it: the cast itself, or a name whose assignments in the same scope are casts
(`images, target = images.to(loc), target.to(loc).to(torch.int32)` included).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ScopeProvider

from torchport.apis import losses
from torchport.findings import Operation
from torchport.npu_to_cuda import changes, names
from torchport.npu_to_cuda.edits import code
from torchport.targets.devices import HOST_DEVICE_TYPE

# criterion = nn.CrossEntropyLoss().to(loc), .npu(), .cuda(), .cpu()
MOVES = ("to", names.METHOD, names.CUDA_METHOD, HOST_DEVICE_TYPE)


def loss_binding(walk, node: cst.Assign) -> list[str]:
    """The names (`criterion`, `self.criterion`) that `node` binds to a loss reading class indices."""
    value = node.value
    while (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
           and value.func.attr.value in MOVES):
        value = value.func.value
    if not (isinstance(value, cst.Call) and _is_loss_class(walk, value.func)):
        return []
    return [code(target.target) for target in node.targets if isinstance(target.target, (cst.Name, cst.Attribute))]


def _is_loss_class(walk, func: cst.BaseExpression) -> bool:
    qualified = walk.imported(func)
    if qualified in losses.LONG_TARGET_CLASSES:
        return True
    name = (qualified or code(func)).rpartition(".")[2]
    return name.endswith(losses.LONG_TARGET_SUFFIXES)


def convert(walk, calls: list[cst.Call], loss_names: set[str]) -> None:
    """Turn the int32 casts that reach the losses among `calls` into int64 ones."""
    parameters = _loss_parameters(walk, calls, loss_names)
    for call in calls:
        if not (_is_loss(walk, call, loss_names) or _is_loss_parameter(walk, call, parameters)):
            continue
        target = _target(call)
        if target is None:
            continue
        for cast in _casts_reaching(walk, target):
            _to_int64(walk, cast, call)


def _loss_parameters(walk, calls: list[cst.Call], loss_names: set[str]) -> set[tuple[cst.FunctionDef, str]]:
    """(function, parameter) where a call of the file's own function passes it a loss:
    `validate(model, loader, validate_loss_fn, args)` makes `loss_fn` of `def validate(model, loader, loss_fn, ...)` one."""
    found = set()
    for call in calls:
        if not isinstance(call.func, cst.Name):
            continue
        definition = _defined_function(walk, call.func)
        if definition is None:
            continue
        names = [param.name.value for param in definition.params.params]
        for index, arg in enumerate(call.args):
            if arg.star or code(arg.value) not in loss_names:
                continue
            name = arg.keyword.value if arg.keyword is not None else (names[index] if index < len(names) else None)
            if name is not None:
                found.add((definition, name))
    return found


def _defined_function(walk, name: cst.Name) -> cst.FunctionDef | None:
    """The `def` in this file that `name` refers to."""
    scope = walk.get_metadata(ScopeProvider, name, None)
    if scope is None:
        return None
    for access in scope.accesses[name.value]:
        if access.node is not name:
            continue
        for assignment in access.referents:
            node = getattr(assignment, "node", None)
            if isinstance(node, cst.FunctionDef):
                return node
    return None


def _is_loss_parameter(walk, call: cst.Call, parameters) -> bool:
    if not isinstance(call.func, cst.Name) or not parameters:
        return False
    node = walk.parent(call)
    while node is not None and not isinstance(node, cst.FunctionDef):
        node = walk.parent(node)
    return node is not None and (node, call.func.value) in parameters


def _is_loss(walk, call: cst.Call, loss_names: set[str]) -> bool:
    func = call.func
    if walk.imported(func) in losses.LONG_TARGET_FUNCTIONS:
        return True
    return isinstance(func, (cst.Name, cst.Attribute)) and code(func) in loss_names


def _target(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == losses.TARGET_ARGUMENT:
            return arg.value
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[losses.TARGET_POSITION].value if len(positional) > losses.TARGET_POSITION else None


def _casts_reaching(walk, target: cst.BaseExpression) -> list[cst.Call]:
    if _int32_cast(walk, target) is not None:
        return [target]
    if not isinstance(target, cst.Name):
        return []
    scope = walk.get_metadata(ScopeProvider, target, None)
    if scope is None:
        return []
    found = []
    for assignment in scope.assignments[target.value]:
        value = _assigned_value(walk, getattr(assignment, "node", None))
        if value is not None and _int32_cast(walk, value) is not None:
            found.append(value)
    return found


def _assigned_value(walk, name: cst.CSTNode | None) -> cst.BaseExpression | None:
    """The expression assigned to `name` by `name = value` or `a, name = x, value`."""
    parent = walk.parent(name) if name is not None else None
    if isinstance(parent, cst.AssignTarget) and parent.target is name:
        return walk.parent(parent).value
    if isinstance(parent, cst.Element):
        targets = walk.parent(parent)
        holder = walk.parent(targets)
        if isinstance(targets, cst.Tuple) and isinstance(holder, cst.AssignTarget):
            value = walk.parent(holder).value
            if isinstance(value, cst.Tuple) and len(value.elements) == len(targets.elements):
                return value.elements[list(targets.elements).index(parent)].value
    return None


def _int32_cast(walk, node: cst.BaseExpression):
    """How `node` casts to int32: ("method", None) for x.int(), ("dtype", the dtype's Arg) for
    x.to(torch.int32) / x.type(torch.int32) / x.to(dtype=torch.int32); None if it does not."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return None
    attr = node.func.attr.value
    if attr == losses.INT32_METHOD and not node.args:
        return "method", None
    if attr in losses.CAST_METHODS:
        for arg in node.args:
            if (arg.keyword is None or arg.keyword.value == losses.DTYPE_ARGUMENT) and \
                    walk.imported(arg.value) in losses.INT32_DTYPES:
                return "dtype", arg
    return None


def _to_int64(walk, cast: cst.Call, loss: cst.Call) -> None:
    how, arg = _int32_cast(walk, cast)
    where = f"line {walk.line(loss)}'s {code(loss.func)}"
    if how == "method":
        walk.change(cast.func.attr, lambda _: cst.Name(losses.INT64_METHOD), cast, changes.LABELS,
                    f".{losses.INT32_METHOD}() -> .{losses.INT64_METHOD}(): {where} reads class indices, "
                    "int64 off the NPU", "torch.Tensor.int")
        return
    spelled = walk.imported(arg.value)
    new = losses.INT32_DTYPES[spelled]
    walk.change(arg.value, lambda _: cst.parse_expression(new), cast, changes.LABELS,
                f"{spelled} -> {new}: {where} reads class indices, int64 off the NPU", spelled)
