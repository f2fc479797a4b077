"""TP023: `torch.load(path)` and `torch.jit.load(path)` without a `map_location`."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.device_exprs import device_expression
from torchport.migrate.rules.base.nodes import keyword_argument, parse_expression
from torchport.migrate.rules.base.rule import Rule

# The loaders that restore each storage on the device it was saved from, unless told otherwise;
# `map_location` is their second parameter.
LOADERS = ("torch.load", "torch.serialization.load", "torch.jit.load", "torch.jit._serialization.load")
MAP_LOCATION = "map_location"


class CheckpointLocationRule(Rule):
    """Load checkpoints onto the target's device.

    Without a `map_location`, `torch.load` puts every storage back on the device it was saved
    from: a checkpoint saved on a GPU fails to load where there is no CUDA ("Attempting to
    deserialize object on a CUDA device"), which is where a migrated trainer resumes from one.
    `torch.load(path)` and `torch.load(path, map_location=None)` get `map_location=<device>`
    ("npu", "cpu", DEVICE_TYPE), as does `torch.jit.load`. A `map_location` that names CUDA is
    the device-string rules' (TP001-TP003); one that names anything else, `weights_only` and
    the other arguments stay as written. A call that passes `*args` or `**kwargs` is left alone:
    they may hold a location.
    """

    code = "TP023"
    order = 60
    # (`torch.load(`, `torch.jit.load(`, or `load` imported: not every json.load or pickle.load)
    mentions = rb"\b(?:torch|jit|serialization)\.load\b|\bimport\b[^\n]*\bload\b"
    reads = LOADERS
    title = "checkpoints loaded onto the device"
    readme = """`torch.load(path)` and `torch.jit.load(path)` without a `map_location` (or with `map_location=None`) →
    `map_location=` the target's device (`"cpu"`, `"npu"`, `DEVICE_TYPE`): torch restores each storage where
    it was saved, so a checkpoint saved on a GPU needs CUDA; on `accelerator` a `map_location` computed from
    a CUDA index (`f"cuda:{rank}"`) becomes `DEVICE_TYPE` (torch.load restores nothing on `"cpu:0"`)"""
    sample = 'import torch\nstate = torch.load("last.pt")\n'

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if any(arg.star for arg in node.args) or self.qualified_name(node.func) not in LOADERS:
            return
        location = self._map_location(node)
        device = device_expression(self.target, None, like=self._quote_template(node))
        message = (f"map_location={device}: torch restores each storage where it was saved, "
                   f"and a checkpoint saved on CUDA needs CUDA to load")
        if location is None:
            self.change(node, lambda updated: _with_map_location(updated, device), f"add {message}", needs=device)
        elif isinstance(location.value, cst.Name) and location.value.value == "None":
            self.change(location, lambda updated: updated.with_changes(value=parse_expression(device)),
                        f"None -> {message}", needs=device)

    def _map_location(self, call: cst.Call) -> cst.Arg | None:
        positional = [arg for arg in call.args if arg.keyword is None]
        named = [arg for arg in call.args if arg.keyword is not None and arg.keyword.value == MAP_LOCATION]
        return named[0] if named else (positional[1] if len(positional) > 1 else None)

    def _quote_template(self, call: cst.Call) -> cst.SimpleString | None:
        """The path's string literal, if it is one: the device is written in its quotes."""
        first = call.args[0].value if call.args else None
        return first if isinstance(first, cst.SimpleString) else None


def _with_map_location(call: cst.Call, device: str) -> cst.Call:
    """`call` with `map_location=<device>` after its positional arguments (before its keywords),
    on a line of its own where the arguments are one a line."""
    args = list(call.args)
    at = next((i for i, arg in enumerate(args) if arg.keyword is not None), len(args))
    new = keyword_argument(MAP_LOCATION, parse_expression(device))
    if at == 0:
        args.insert(0, new.with_changes(comma=_SEPARATOR) if args else new)
        return call.with_changes(args=args)
    before = args[at - 1]
    indent = args[at - 2].comma.whitespace_after if at > 1 else call.whitespace_before_args
    if isinstance(before.comma, cst.Comma) and isinstance(before.comma.whitespace_after, cst.ParenthesizedWhitespace):
        # (one a line: the new argument takes the previous one's comma and line break, and the
        # previous one the break that comes before it)
        args[at - 1] = before.with_changes(comma=before.comma.with_changes(whitespace_after=indent))
        new = new.with_changes(comma=before.comma)
    elif at == len(args) and isinstance(before.whitespace_after_arg, cst.ParenthesizedWhitespace):
        # (`path` on its line, the parenthesis on the next: so the new argument)
        args[at - 1] = before.with_changes(comma=cst.Comma(whitespace_after=indent),
                                           whitespace_after_arg=cst.SimpleWhitespace(""))
        new = new.with_changes(whitespace_after_arg=before.whitespace_after_arg)
    else:
        args[at - 1] = before.with_changes(comma=_SEPARATOR)
        if at < len(args):
            new = new.with_changes(comma=_SEPARATOR)
    args.insert(at, new)
    return call.with_changes(args=args)


_SEPARATOR = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
