"""Whether code other than the training loader reads the batch size it is given: then splitting
it (`batch // WORLD_SIZE` in the loader) would leave that code believing in a batch no process
sees (SimCLR builds its contrastive labels from `args.batch_size`: IndexError), so the batch is
kept per process and the learning rate scaled instead, as `--distributed-batch per-rank` does.

Read elsewhere: the same name (`batch_size`), or the same attribute of the same object
(`args.batch_size`), outside the loader and outside printing and logging; or the object that holds
it (`args`) handed whole to a callable this file does not define (its body is not here to read),
or to one it defines that reads that attribute.
"""

from __future__ import annotations

import libcst as cst

from torchport.distribute.edits import calls, code, dotted, nodes, walk

# Calls whose arguments only show a value: a batch size read there changes nothing.
_SHOWS = ("print", "write", "format", "info", "debug", "warning", "log", "set_description", "set_postfix", "add_scalar")
# Callables that take a namespace without reading its batch size.
_PLAIN = frozenset({"print", "vars", "str", "repr", "len", "dict", "getattr", "setattr", "hasattr", "isinstance",
                    "type", "id", "pprint", "json.dumps"})


def read_elsewhere(module: cst.Module, loader: cst.Call, batch: cst.BaseExpression) -> str:
    """Where code other than `loader` reads `batch` (words for a row), "" where nothing does."""
    if isinstance(batch, cst.Name):
        name, holder, attr = batch.value, None, None
    elif isinstance(batch, cst.Attribute) and isinstance(batch.value, cst.Name):
        name, holder, attr = None, batch.value.value, batch.attr.value
    else:
        return ""  # (a literal, an expression: nothing else can read it)
    inside_loader = {id(n) for n in walk(loader)}
    shown = {id(n) for call in calls(module) if _shows(call) for n in walk(call)}
    defined = {s.name.value: s for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    not_reads = _not_reads(module) if name is not None else set()
    assigned = {id(t.target) for t in nodes(module, cst.AssignTarget)}  # (args.batch_size = ...)
    for node in nodes(module, cst.Name, cst.Attribute, cst.Call):
        if id(node) in inside_loader or id(node) in shown:
            continue
        if name is not None and isinstance(node, cst.Name) and node.value == name and id(node) not in not_reads:
            return f"{name} is read elsewhere in the file"
        if attr is not None and isinstance(node, cst.Attribute) and node.attr.value == attr \
                and id(node) not in assigned:
            return f"{code(node)} reads the batch size elsewhere in the file"
        if attr is not None and isinstance(node, cst.Call) and _hands(node, holder):
            callee = dotted(node.func) or ""
            if callee in _PLAIN:
                continue
            body = defined.get(callee)
            if body is None:
                return f"{holder} is handed to {callee or code(node.func)}, whose code is not in this file and may read {attr}"
            if any(isinstance(n, cst.Attribute) and n.attr.value == attr for n in walk(body)):
                return f"{holder} is handed to {callee}, which reads its {attr}"
    return ""


def _shows(call: cst.Call) -> bool:
    name = dotted(call.func) or (call.func.attr.value if isinstance(call.func, cst.Attribute) else "")
    return bool(name) and name.rsplit(".", 1)[-1] in _SHOWS


def _hands(call: cst.Call, holder: str) -> bool:
    return any(isinstance(a.value, cst.Name) and a.value.value == holder and not a.star for a in call.args)


def _bound(target: cst.BaseExpression):
    """The names a target binds: itself, or the elements of a tuple or list (`a, b = ...`)."""
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _bound(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _bound(target.value)


def _not_reads(module: cst.Module) -> set[int]:
    """The names that are not reads: assignment targets, keywords (`f(batch_size=...)`),
    parameters, attribute names (`x.batch_size`'s `batch_size`)."""
    out = set()
    for node in nodes(module, cst.AssignTarget, cst.AnnAssign, cst.For, cst.CompFor, cst.Arg, cst.Param, cst.Attribute):
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.For, cst.CompFor)):
            out.update(id(n) for n in _bound(node.target))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            out.add(id(node.keyword))
        elif isinstance(node, cst.Param):
            out.add(id(node.name))
        elif isinstance(node, cst.Attribute):
            out.add(id(node.attr))
    return out
