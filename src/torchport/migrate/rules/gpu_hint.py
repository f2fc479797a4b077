"""TP019: a script's hint that a CUDA device goes unused, on a target that has none."""

from __future__ import annotations

import re

import libcst as cst

from torchport.findings import Operation
from torchport.migrate.rules.base.fixes import remove_statement
from torchport.migrate.rules.base.nodes import source_of
from torchport.migrate.rules.base.rule import Rule

AVAILABLE = "torch.cuda.is_available"
MESSAGE_FUNCTIONS = {"print", "warn", "warning", "info"}  # print, warnings.warn, logger.warning, logging.info
ABOUT_THE_GPU = re.compile(r"(?i)cuda|gpu")


class UnusedGpuHintRule(Rule):
    """Where there is no device (the cpu target), a message that a script prints when
    `torch.cuda.is_available()` is true and its own GPU switch is off ("WARNING: You have a
    CUDA device, so you should probably run with --cuda") would tell the user something false:
    it is dropped, and so is the `if` around it when nothing else is left in it. The test that
    chose the message is kept where it guards other code."""

    code = "TP019"
    order = 230
    mentions = rb"is_available"
    reads = (AVAILABLE,)
    title = "hints to use an unused GPU (cpu)"
    readme = """on cpu, a script's hint that a CUDA device goes unused (`if torch.cuda.is_available() and not args.cuda:
    print("WARNING: You have a CUDA device...")`) is dropped, with an `if` left empty; the test is kept
    where it guards other code"""
    sample = (
        "import torch\n"
        "\n"
        "\n"
        "def warn(args):\n"
        "    if torch.cuda.is_available() and not args.cuda:\n"
        '        print("WARNING: You have a CUDA device, so you should probably run with --cuda")\n'
    )

    @classmethod
    def applies_to(cls, target) -> bool:
        return not target.advice.has_device

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:  # noqa: N802
        if len(node.body) != 1 or not isinstance(node.body[0], cst.Expr):
            return
        call = node.body[0].value
        if not (isinstance(call, cst.Call) and call.args and _is_message(call.func)):
            return
        if not ABOUT_THE_GPU.search(source_of(call.args[0].value)) or not self._only_when_available(node):
            return
        self.change(node, remove_statement, f"there is no CUDA device on {self.target.name}: the script's hint "
                    "to use one is dropped", operation=Operation.DELETE, api=AVAILABLE)

    def _only_when_available(self, line: cst.SimpleStatementLine) -> bool:
        """Whether `line` runs only when an enclosing `if` found `torch.cuda.is_available()` true."""
        child, parent = line, self.parent(line)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            if isinstance(parent, cst.If) and child is parent.body and self._requires_available(parent.test):
                return True
            child, parent = parent, self.parent(parent)
        return False

    def _requires_available(self, test: cst.BaseExpression) -> bool:
        """`torch.cuda.is_available()`, alone or as one side of an `and`."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._requires_available(test.left) or self._requires_available(test.right)
        return isinstance(test, cst.Call) and not test.args and self.qualified_name(test.func) == AVAILABLE


def _is_message(func: cst.BaseExpression) -> bool:
    name = func.attr if isinstance(func, cst.Attribute) else func
    return isinstance(name, cst.Name) and name.value in MESSAGE_FUNCTIONS
