"""Which names in a file hold a device (or a device's name), as opposed to an index or None.

`.cuda(x)` and `torch.cuda.device(x)` take all four kinds. Where the target's device type is known only at run time, the
rewrite must know which kind `x` is to write what a person would (`x.to(device)` for a device,
`torch.device(DEVICE_TYPE, gpu)` for an index), and falls back to the target's `device_function`,
which takes any kind, when it cannot tell. A name holds a device when every binding of it in the
file is one:
  - a string (`"cuda:0"`, an f-string), a `torch.device(...)` call, a conditional of these;
  - a `<x>.device` attribute that the file never assigns (a tensor's or a module's device), other
    than an argparse option declared `type=int`;
  - a copy of a name that holds a device (`self.device = device`).
A parameter, a loop variable or any other binding of the same name makes it unknown.
Names are compared as dotted source text (`self.device`, `args.device`), file-wide.
"""

from __future__ import annotations

import ast

from torchport.pyast import dotted_name

UNKNOWN = None  # a binding whose value is not read


def device_names(tree: ast.Module) -> frozenset[str]:
    """The dotted names that hold a device or a device's name wherever they are bound."""
    found = DeviceNames()
    found.add(tree)
    return found.names()


class DeviceNames:
    """`device_names` of a file read in parts (each part's tree `add`ed in turn)."""

    def __init__(self) -> None:
        self.bindings: dict[str, list[ast.expr | None]] = {}
        self.device_attributes: set[str] = set()  # `<x>.device` as read
        self.int_options: set[str] = set()  # argparse options declared type=int

    def _bind(self, target: ast.expr, value: ast.expr | None) -> None:
        name = dotted_name(target)
        if name is not None:
            self.bindings.setdefault(name, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind(element.value if isinstance(element, ast.Starred) else element, UNKNOWN)

    def add(self, tree: ast.Module) -> None:
        bind, bindings = self._bind, self.bindings
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                bind(node.target, node.value if not isinstance(node, ast.AugAssign) else UNKNOWN)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                bind(node.target, UNKNOWN)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                bind(node.optional_vars, UNKNOWN)
            elif isinstance(node, ast.arg):
                bindings.setdefault(node.arg, []).append(UNKNOWN)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    bindings.setdefault((alias.asname or alias.name).split(".")[0], []).append(UNKNOWN)
            elif isinstance(node, ast.Attribute) and node.attr == "device" and isinstance(node.ctx, ast.Load):
                name = dotted_name(node)
                if name is not None and name != "torch.device":
                    self.device_attributes.add(name)
            elif isinstance(node, ast.Call) and _is_int_option(node):
                self.int_options.update(_option_names(node))

    def names(self) -> frozenset[str]:
        bindings = self.bindings
        known = {n for n in self.device_attributes if n not in bindings and not _is_option(n, self.int_options)}
        candidates = {name for name, values in bindings.items() if all(v is not UNKNOWN for v in values)}
        while True:  # drop the names bound from something not (or no longer) known to be a device
            holding = known | candidates
            dropped = {name for name in candidates if not all(_is_device(v, holding) for v in bindings[name])}
            if not dropped:
                return frozenset(known | candidates)
            candidates -= dropped


def _is_device(value: ast.expr, holding: set[str]) -> bool:
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str)
    if isinstance(value, ast.JoinedStr):
        return True
    if isinstance(value, ast.IfExp):
        return _is_device(value.body, holding) and _is_device(value.orelse, holding)
    if isinstance(value, ast.Call):
        return dotted_name(value.func) in ("torch.device", "device")
    name = dotted_name(value)
    return name is not None and name in holding


def _is_int_option(call: ast.Call) -> bool:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "add_argument"):
        return False
    return any(k.arg == "type" and isinstance(k.value, ast.Name) and k.value.id == "int" for k in call.keywords)


def _option_names(call: ast.Call) -> set[str]:
    return {
        arg.value.lstrip("-").replace("-", "_")
        for arg in call.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    }


def _is_option(name: str, options: set[str]) -> bool:
    holder, _, attribute = name.rpartition(".")
    return "." not in holder and attribute in options
