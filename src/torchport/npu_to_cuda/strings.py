"""The NPU's values written as strings: devices ("npu", "npu:0", f"npu:{rank}", "npu:%d" % i,
"npu:{}".format(i), "npu:" + str(i)), the collective backend ("hccl") and the visible devices'
variable, in CUDA's spelling; the NPU stack's other settings, where they are read, get a note.

Only whole values are touched, as migrate's TP001 touches CUDA's: never a docstring, a comment,
a message that mentions the NPU, a dict key, a subscript (`args["npu"]`) or an attribute name
(`getattr(args, "npu")`); an option's `help=` names the device its `default=` becomes.
"""

from __future__ import annotations

import libcst as cst

from torchport.apis.legacy_types import is_legacy_type
from torchport.findings import Operation
from torchport.npu_to_cuda import changes, comparisons, names
from torchport.string_literals import is_key_argument, quoted, string_value

ENV_READERS = ("os.getenv", "os.environ.get", "os.environ.pop", "os.environ.setdefault")
ENVIRON = "os.environ"


def visit(walk, node: cst.SimpleString) -> None:
    value = string_value(node)
    if value is None:
        return
    parent = walk.parent(node)
    if isinstance(parent, (cst.Expr, cst.ConcatenatedString)):  # (a docstring, a bare string, a message's part)
        return
    if value == names.VISIBLE_DEVICES:
        new = quoted(node, names.CUDA_VISIBLE_DEVICES)
        walk.change(node, lambda _: new, node, changes.VISIBLE, f"{value} -> {names.CUDA_VISIBLE_DEVICES}", value)
        return
    if names.is_npu_setting(value) or names.is_launch_setting(value):
        if _reads_env(walk, node, parent):
            what = ("set by Ascend's launch scripts" if names.is_launch_setting(value)
                    else "a setting of the NPU's software stack")
            walk.edits.row(walk.line(node), changes.NOTE, Operation.NOTE,
                           f"{value}: {what}, read here; nothing sets it elsewhere", value)
        return
    if _names_a_key(walk, node, parent) or comparisons.accept_both(walk, node, value):
        return
    match = names.DEVICE.fullmatch(value)
    if match is not None:
        new = quoted(node, names.CUDA_TYPE + (match.group(1) or ""))
        walk.change(node, lambda _: new, node, changes.DEVICES, f"device {value!r} -> {new.value}", value)
        _name_cuda_in_the_help(walk, node)
    elif value == names.BACKEND:
        new = quoted(node, names.CUDA_DIST_BACKEND)
        walk.change(node, lambda _: new, node, changes.BACKEND, f"backend {value!r} -> {new.value}", value)
    elif _is_legacy_type_name(value):  # torch.set_default_tensor_type("torch.npu.FloatTensor"), x.type(...)
        new = quoted(node, names.cuda_api(value))
        walk.change(node, lambda _: new, node, changes.DEVICE_API, f"type name {value!r} -> {new.value}", value)
    elif _is_device_prefix(node, value, parent):
        new = quoted(node, names.CUDA_TYPE + value[len(names.DEVICE_TYPE):])
        walk.change(node, lambda _: new, node, changes.DEVICES, f"device prefix {value!r} -> {new.value}", value)


def _is_legacy_type_name(value: str) -> bool:
    module, _, name = value.rpartition(".")
    return module in names.DEVICE_MODULE_NAMES and is_legacy_type(name) and names.cuda_api(value) is not None


def _is_device_prefix(node: cst.SimpleString, value: str, parent) -> bool:
    """"npu:" + str(i), "npu:%d" % i, "npu:{}".format(i)."""
    if isinstance(parent, cst.BinaryOperation) and parent.left is node:
        if isinstance(parent.operator, cst.Add):
            return value == names.PREFIX
        return isinstance(parent.operator, cst.Modulo) and names.FORMAT_PREFIX.fullmatch(value) is not None
    return (isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "format"
            and names.FORMAT_PREFIX.fullmatch(value) is not None)


def visit_formatted(walk, node: cst.FormattedString) -> None:
    """f"npu:{rank}"."""
    parts = node.parts
    if not (len(parts) == 2 and isinstance(parts[0], cst.FormattedStringText) and parts[0].value == names.PREFIX
            and isinstance(parts[1], cst.FormattedStringExpression)):
        return
    if isinstance(walk.parent(node), cst.Expr):
        return
    head = cst.FormattedStringText(f"{names.CUDA_TYPE}:")
    walk.change(node, lambda u: u.with_changes(parts=[head, *u.parts[1:]]), node, changes.DEVICES,
                f"device prefix {names.PREFIX!r} -> '{head.value}'", names.PREFIX)


def _names_a_key(walk, node: cst.SimpleString, parent) -> bool:
    """A dict key, a subscript, a key passed to .get/.pop/.setdefault, an attribute name passed
    to getattr and its kin."""
    if isinstance(parent, cst.DictElement):
        return parent.key is node
    if isinstance(parent, cst.Index):
        return True
    return is_key_argument(parent, walk.parent)


def _reads_env(walk, node: cst.SimpleString, parent) -> bool:
    """os.environ["X"] (read), os.getenv("X"), os.environ.get("X")."""
    if isinstance(parent, cst.Index):
        subscript = walk.parent(walk.parent(parent))
        return (isinstance(subscript, cst.Subscript) and walk.imported(subscript.value) == ENVIRON
                and walk.loaded(subscript))
    if isinstance(parent, cst.Arg) and parent.keyword is None:
        call = walk.parent(parent)
        return isinstance(call, cst.Call) and call.args[0] is parent and walk.imported(call.func) in ENV_READERS
    return False


def _name_cuda_in_the_help(walk, literal: cst.SimpleString) -> None:
    """`add_argument("--device", default="npu", help="device (npu or cpu)")`: the help names CUDA."""
    child, parent = literal, walk.parent(literal)
    while isinstance(parent, cst.IfExp) and child is not parent.test:
        child, parent = parent, walk.parent(parent)
    if not (isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value == "default"):
        return
    call = walk.parent(parent)
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"):
        return
    help_arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == "help"), None)
    text = help_arg.value if help_arg is not None else None
    if not isinstance(text, cst.SimpleString) or "b" in text.prefix.lower() or text in walk.edits.fixes:
        return
    start, end = len(text.prefix) + len(text.quote), len(text.value) - len(text.quote)
    body = text.value[start:end]
    named = names.DEVICE_WORD.sub(lambda w: names.CUDA_TYPE.upper() if w.group().isupper() else names.CUDA_TYPE, body)
    if named != body:
        new = cst.SimpleString(text.value[:start] + named + text.value[end:])
        walk.change(text, lambda _: new, text, changes.DEVICES, f"the option's help names its new default: {new.value}")
