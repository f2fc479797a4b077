"""TP001: CUDA device values written as strings."""

from __future__ import annotations

import re

import libcst as cst

from torchport.migrate.rules.base.device_exprs import cuda_literal_index, device_expression, quoted, string_value
from torchport.migrate.rules.base.nodes import call_argument, parse_expression
from torchport.migrate.rules.base.rule import Rule
from torchport.migrate.rules.framework_settings import is_lightning_accelerator
from torchport.migrate.rules.device_comparisons import (device_call_literal, device_comparison, listed_device_literals,
                                                        prefix_test_literal)
from torchport.string_literals import is_key_argument

# "cuda:%d" % i, "cuda:{}".format(i): a prefix filled in at run time.
FORMAT_PREFIX = re.compile(r"cuda:(%[dis]|\{\w*\})")




_CUDA_WORD = re.compile(r"\bcuda\b", re.IGNORECASE)


def naming_the_device(text: str, device: str) -> str:
    """`text` (an option's help) with the word "cuda" as `device` ("CUDA" as "NPU"), and the
    device named once where it now stands beside itself ("cpu or cpu", "cpu/cpu", "cpu, cpu")."""
    named = _CUDA_WORD.sub(lambda word: device.upper() if word.group().isupper() else device, text)
    return re.sub(rf"\b({re.escape(device)})\b(?:\s*(?:,|/|\||\bor\b)\s*\1\b)+", r"\1", named, flags=re.IGNORECASE)


def _escape_braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


class DeviceLiteralRule(Rule):
    """Rewrite device strings: `"cuda"`, `"cuda:0"`, `f"cuda:{rank}"`, `"cuda:%d" % i`,
    `"cuda:{}".format(i)` and `"cuda:" + str(i)`.

    Only whole device values are touched: a string that merely mentions CUDA (a log message, a
    file name such as `cuda_best.pt`), a docstring or a comment is left alone, and so is a
    `"cuda"` that names a key or an attribute (`{'cuda': ...}`, `args['cuda']`,
    `getattr(args, 'cuda')`). Comparisons with `"cuda"` have a rule of their own (TP013).
    """

    code = "TP001"
    order = 20
    mentions = rb"\bcuda\b"
    reads = ("torch.device",)
    title = "device strings"
    readme = """device strings: `"cuda"`, `"cuda:0"`, `f"cuda:{rank}"`, `"cuda:%d" % i`, `"cuda:{}".format(i)`, `"cuda:"
    + str(i)`, in the file's quote style (never docstrings, comments, log messages, file names, dict keys or
    attribute names such as `args['cuda']`); an option's `help=` names the device its `default='cuda'`
    becomes (`'device to use (npu or cpu)'`, on the CPU `'(cpu)'`; kept on `accelerator`, where `cuda` is
    one of `DEVICE_TYPE`'s values)"""
    sample = 'import torch\nx = torch.zeros(3, device="cuda")\n'

    def visit_SimpleString(self, node: cst.SimpleString) -> None:  # noqa: N802
        parent = self.parent(node)
        if isinstance(parent, cst.Expr) or self._names_a_key(node, parent):  # (a docstring, a bare string)
            return
        is_device, index = cuda_literal_index(node)
        if is_device and self.target.device_chosen_at_run_time and self._is_map_location_value(node):
            index = None  # torch.load cannot map onto "cpu:0": where the device is not known, use its type
        if is_device:
            self._drop_device_index_argument(parent)
            self._name_the_device_in_the_help(node)
            new = device_expression(self.target, index, like=node)
            self.change(
                node, lambda _: parse_expression(new), f'replace device "{string_value(node)}" with {new}', needs=new
            )
            return
        value = string_value(node)
        if value is None:
            return
        if value == "cuda:" and isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add):
            self._rewrite_prefix(node, parent, value)
        elif FORMAT_PREFIX.fullmatch(value):
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Modulo):
                self._rewrite_prefix(node, parent, value)
            elif isinstance(parent, cst.Attribute) and parent.attr.value == "format":
                call = self.parent(parent)
                if isinstance(call, cst.Call):
                    self._rewrite_prefix(node, call, value)

    def _plain_f_string(self, node: cst.FormattedString) -> None:
        """`f"cuda"`, an f-string with nothing to format (llama-cookbook's `device = device or f"cuda"`):
        the device, as its plain string is."""
        if len(node.parts) != 1 or not isinstance(node.parts[0], cst.FormattedStringText) or "b" in node.prefix.lower():
            return
        plain = cst.SimpleString(f"{node.start[len(node.prefix):]}{node.parts[0].value}{node.end}")
        is_device, index = cuda_literal_index(plain)
        parent = self.parent(node)
        if not is_device or isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.Expr)):
            return
        new = device_expression(self.target, index, like=plain)
        self.change(node, lambda _: parse_expression(new), f'replace device f"{string_value(plain)}" with {new}', needs=new)

    def _names_a_key(self, node: cst.SimpleString, parent: cst.CSTNode | None) -> bool:
        """Whether `node` is a dict key, a subscript, a key passed to `.get/.pop/.setdefault`,
        an attribute name passed to `getattr` and its kin, or an operand of a TP013 comparison
        (a membership or prefix test included)."""
        if isinstance(parent, cst.DictElement):
            return parent.key is node
        if isinstance(parent, cst.Index):
            return True
        if isinstance(parent, cst.Arg) and device_call_literal(call := self.parent(parent)) is node:
            parent = self.parent(call)  # `torch.device("cuda")` compared: the comparison's literal
        if isinstance(parent, cst.Comparison) or isinstance(parent, cst.ComparisonTarget):
            comparison = parent if isinstance(parent, cst.Comparison) else self.parent(parent)
            return device_comparison(comparison) is not None
        if isinstance(parent, cst.Element):  # `x in ("cuda", "xpu")`: TP013's
            collection = self.parent(parent)
            comparison = self.parent(self.parent(collection)) if collection is not None else None  # (its ComparisonTarget's)
            if isinstance(comparison, cst.Comparison) and any(node is e for e in listed_device_literals(comparison)):
                return True
        if isinstance(parent, cst.Arg) and prefix_test_literal(self.parent(parent)) is node:  # `.startswith("cuda")`: TP013's
            return True
        if is_lightning_accelerator(self, node, parent):  # Trainer(accelerator="cuda"): TP035's
            return True
        return is_key_argument(parent, self.parent)

    def _name_the_device_in_the_help(self, literal: cst.SimpleString) -> None:
        """`add_argument("--device", default="cuda", help="device to use (cuda or cpu)")`: the
        option's help names the device its default becomes ("npu or cpu"; on the CPU "cpu", once).
        Only there: other strings that mention CUDA are the script's messages. Where the device
        is known only at run time (DEVICE_TYPE) the help stays: "cuda" is one of its values."""
        device = self.target.device_type
        if device is None:
            return
        child, parent = literal, self.parent(literal)
        while isinstance(parent, cst.IfExp) and child is not parent.test:  # (`"cuda" if ... else "cpu"`)
            child, parent = parent, self.parent(parent)
        if not (isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value == "default"):
            return
        call = self.parent(parent)
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"):
            return
        help_arg = call_argument(call, "help")
        text = help_arg.value if help_arg is not None else None
        if not isinstance(text, cst.SimpleString) or "b" in text.prefix.lower():
            return
        start, end = len(text.prefix) + len(text.quote), len(text.value) - len(text.quote)
        body = text.value[start:end]
        named = naming_the_device(body, device)
        if named != body:
            new = cst.SimpleString(text.value[:start] + named + text.value[end:])
            self.change(text, lambda _: new, f"the option's help names its new default: {new.value}")

    def _drop_device_index_argument(self, parent: cst.CSTNode | None) -> None:
        """`torch.device("cuda", i)` on a target without device indices: `torch.device("cpu")`;
        and in a `map_location` where the device is known only at run time (see above)."""
        if not isinstance(parent, cst.Arg):
            return
        call = self.parent(parent)
        if not (isinstance(call, cst.Call) and call.args and call.args[0] is parent and len(call.args) == 2):
            return
        indexless = self.target.device_chosen_at_run_time and self._is_map_location_value(call)
        if (self.target.keeps_device_index and not indexless) or self.qualified_name(call.func) != "torch.device":
            return

        def fix(updated: cst.Call) -> cst.Call:
            return updated.with_changes(args=[updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])

        why = "torch.load maps onto a device type, not the CPU's index" if indexless else f"{self.target.name} has one device"
        self.change(call, fix, f"drop the device index: {why}")

    def _replaced_by_indexless_device(self, whole: cst.CSTNode, literal: cst.SimpleString | cst.FormattedString) -> bool:
        """On a target without device indices, a device computed from an index is just the device
        (in the quote style of the literal that spelled it); so it is in a `map_location` where the
        device is known only at run time (torch.load restores no storage on "cpu:0")."""
        target = self.target
        if target.device_chosen_at_run_time and self._is_map_location_value(whole):
            new = target.device_type_expr
            self.change(whole, lambda _: parse_expression(new), f"replace the computed cuda device with {new}: "
                        "torch.load maps onto a device type, not the CPU's index", needs=new)
            return True
        if target.device_chosen_at_run_time or target.keeps_device_index:
            return False
        quote = literal.quote
        new = f"{quote}{target.device_type}{quote}"
        self.change(whole, lambda _: parse_expression(new), f"replace the computed cuda device with {new}")
        return True

    def _is_map_location(self, parent: cst.CSTNode | None) -> bool:
        return isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value == "map_location"

    def _is_map_location_value(self, node: cst.CSTNode) -> bool:
        """Whether `node` is what a `map_location=` maps onto: the argument, or a value of its dict."""
        parent = self.parent(node)
        if isinstance(parent, cst.DictElement) and parent.value is node:
            parent = self.parent(self.parent(parent))
        return self._is_map_location(parent)

    def _rewrite_prefix(self, node: cst.SimpleString, whole: cst.CSTNode, value: str) -> None:
        """The literal holds the "cuda:" prefix of a device built at run time."""
        rest = value[len("cuda") :]
        target = self.target
        if self._replaced_by_indexless_device(whole, node):
            return
        quote = node.quote  # (the script's own quote style)
        if target.device_chosen_at_run_time:
            new = f"f{quote}{{{target.device_type_expr}}}{_escape_braces(rest)}{quote}"
        else:
            new = quoted(node, f"{target.device_type}{rest}").value
        self.change(node, lambda _: parse_expression(new), f'replace device prefix "cuda:" with {new}', needs=new)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:  # noqa: N802
        self._plain_f_string(node)
        parts = node.parts
        if not (
            len(parts) == 2
            and isinstance(parts[0], cst.FormattedStringText)
            and parts[0].value == "cuda:"
            and isinstance(parts[1], cst.FormattedStringExpression)
        ):
            return
        target = self.target
        if self._replaced_by_indexless_device(node, node):
            return
        if target.device_chosen_at_run_time:
            head = [
                cst.FormattedStringExpression(expression=cst.Name(target.device_type_expr)),
                cst.FormattedStringText(":"),
            ]
            needs = target.device_type_expr
        else:
            head = [cst.FormattedStringText(f"{target.device_type}:")]
            needs = ""

        def fix(updated: cst.FormattedString) -> cst.FormattedString:
            return updated.with_changes(parts=[*head, *updated.parts[1:]])

        self.change(node, fix, f'replace device prefix "cuda:" with "{target.device_type or "{" + needs + "}"}:"', needs=needs)
