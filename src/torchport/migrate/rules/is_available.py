"""TP011: availability tests whose answer the target knows."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from torchport.findings import Operation
from torchport.migrate.rules.base.device_exprs import cuda_literal_index, string_value
from torchport.migrate.rules.base.nodes import dotted_name
from torchport.migrate.rules.base.rule import Rule
from torchport.apis.devices import names_a_build
from torchport.targets.devices import is_device_string, is_host

AVAILABLE = "torch.cuda.is_available"
KEPT_FOR_SOFTWARE = "kept: the answer picks a CUDA build of other software"  # (run reads these rows too)
EXITS = {"exit", "quit", "sys.exit", "os._exit"}  # what a script calls to refuse a run


def _device_string(rule: Rule, node: cst.BaseExpression) -> cst.BaseExpression:
    """The string inside `torch.device("...")`, or the node itself."""
    if isinstance(node, cst.Call) and rule.qualified_name(node.func) == "torch.device" and len(node.args) == 1:
        return node.args[0].value
    return node


class IsAvailableRule(Rule):
    """`"cuda" if torch.cuda.is_available() else "cpu"` (also inside `torch.device(...)`) where the
    answer is known: the CPU branch on the CPU target; on the device-agnostic target the device
    type already falls back to the CPU, so the test would be made twice.

    An answer that only picks between names of other software (`"onnxruntime-gpu" if cuda else
    "onnxruntime"`) is kept as torch.cuda's, with a NOTE: see `asks_for_cuda_software`.

    A script's own demand for a GPU (`assert torch.cuda.is_available()`, `if not
    torch.cuda.is_available(): raise ...` or `sys.exit(...)`, `if args.cuda and not ...`) is never
    dropped: it asks about the target's device as every availability test does (the accelerator
    on `accelerator`, so it refuses a run where there is none, as `torchport run` does). On the
    CPU, the CPU is the device: the test is `torch.cpu.is_available()`, which is true, and a NOTE
    says that the demand always passes there."""

    code = "TP011"
    order = 150
    mentions = rb"\bcuda\b"
    reads = ("torch.device", AVAILABLE)
    title = "availability tests with a known answer"
    readme = """`"cuda" if torch.cuda.is_available() else "cpu"` where the answer is known; a script's demand for a GPU
    (`assert torch.cuda.is_available()`, `if not ...: raise` / `sys.exit`) is kept, with a NOTE on cpu that
    it always passes there; an answer that picks a package's CUDA build (`"onnxruntime-gpu" if
    torch.cuda.is_available() else "onnxruntime"`) is kept as it is, with a NOTE"""
    sample = 'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'

    def visit_Assert(self, node: cst.Assert) -> None:  # noqa: N802
        if self._asks_available(node.test):
            self._note_always_passes(node, "asserts")

    def visit_If(self, node: cst.If) -> None:  # noqa: N802
        if self._asks_unavailable(node.test) and _refuses(node.body):
            self._note_always_passes(node, "refuses a run without")

    def _note_always_passes(self, node: cst.CSTNode, demand: str) -> None:
        if self.target.has_device:
            return
        self.report(node, Operation.NOTE, f"the script {demand} a CUDA device: on cpu the CPU is the device, so "
                    "this always passes (kept; remove it if the script should refuse nothing)", api=AVAILABLE)

    def _asks_available(self, test: cst.BaseExpression) -> bool:
        return isinstance(test, cst.Call) and not test.args and self.qualified_name(test.func) == AVAILABLE

    def _asks_unavailable(self, test: cst.BaseExpression) -> bool:
        """`not torch.cuda.is_available()`, alone or as one side of an `and` (`args.cuda and not ...`)."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._asks_unavailable(test.left) or self._asks_unavailable(test.right)
        return isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and self._asks_available(test.expression)

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if node.args or self.qualified_name(node.func) != AVAILABLE or not asks_for_cuda_software(self, node):
            return
        self.report(node, Operation.NOTE, f"{KEPT_FOR_SOFTWARE} (a package name), "
                    f"not a device; torch.cuda.is_available() answers that honestly on {self.target.name} "
                    "(False without a CUDA GPU)", api=AVAILABLE)

    def visit_IfExp(self, node: cst.IfExp) -> None:  # noqa: N802
        if not self.target.device_chosen_at_run_time and self.target.has_device:
            return
        test = node.test
        if not (isinstance(test, cst.Call) and self.qualified_name(test.func) == AVAILABLE):
            return
        body, orelse = _device_string(self, node.body), _device_string(self, node.orelse)
        if cuda_literal_index(body)[0] and is_host(string_value(orelse)):
            if not self.target.has_device:
                self.change(node, lambda updated: updated.orelse, "keep only the CPU branch of the availability test")
            else:
                self.change(node, lambda updated: updated.body, "the device type already falls back to the CPU")


def asks_for_cuda_software(rule: Rule, call: cst.Call) -> bool:
    """Whether the answer of `torch.cuda.is_available()` (the `call`) only picks between names
    of other software, not devices: `"onnxruntime-gpu" if cuda else "onnxruntime"` after
    `cuda = torch.cuda.is_available()`, `f"tensorflow{'' if torch.cuda.is_available() else '-cpu'}"`
    (YOLOv5's export.py). Such a question is about a CUDA GPU for that software's CUDA build,
    which the target's device is not: torch's own answer is the honest one there (False on
    the CPU, where the target's module would say True), so the call is kept."""
    test = _outermost_test(rule, call)
    parent = rule.parent(test)
    if isinstance(parent, cst.IfExp) and parent.test is test:
        return _names_software(parent)
    held = test is call or (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And))
    if isinstance(parent, cst.Assign) and held and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return _held_only_for_software(rule, parent, parent.targets[0].target.value)
    return False


def _outermost_test(rule: Rule, node: cst.BaseExpression) -> cst.BaseExpression:
    """`node`, or the `not` / `and` / `or` around it that makes the whole test."""
    parent = rule.parent(node)
    while isinstance(parent, cst.BooleanOperation) or (
            isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)):
        node, parent = parent, rule.parent(parent)
    return node


def _names_software(choice: cst.IfExp) -> bool:
    """Its branches are strings (or such choices in turn), none names a device, and one names a
    build of some software ("onnxruntime-gpu", "-cpu"): not a dtype's name, say."""
    values = _branch_strings(choice)
    return values is not None and not any(is_device_string(v) for v in values) and any(
        names_a_build(v) for v in values)


def _branch_strings(choice: cst.IfExp) -> list[str] | None:
    """The plain strings a choice gives, through nested choices (None: a branch is something else)."""
    values = []
    for branch in (choice.body, choice.orelse):
        if isinstance(branch, (cst.List, cst.Tuple)):  # (onnxruntime's providers: ["CUDAExecutionProvider", ...])
            value = [string_value(e.value) for e in branch.elements]
            value = None if None in value else value
        else:
            value = _branch_strings(branch) if isinstance(branch, cst.IfExp) else string_value(branch)
        if value is None:
            return None
        values += value if isinstance(value, list) else [value]
    return values


def _held_only_for_software(rule: Rule, assign: cst.Assign, name: str) -> bool:
    """Whether every read of `name` in the function (or module) that assigns it is the test of a
    choice between names of software."""
    scope = assign
    while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
        scope = rule.parent(scope)
    if scope is None:
        return False
    uses = {id(n) for n in m.findall(scope, m.Name(name))}
    uses -= {id(t.target) for t in m.findall(scope, m.AssignTarget(target=m.Name(name)))}
    uses -= {id(a.attr) for a in m.findall(scope, m.Attribute(attr=m.Name(name)))}  # (`torch.cuda`'s `cuda`)
    uses -= {id(a.keyword) for a in m.findall(scope, m.Arg(keyword=m.Name(name)))}
    tests = {id(c.test) for c in m.findall(scope, m.IfExp(test=m.Name(name))) if _names_software(c)}
    tests |= {id(c.test) for c in m.findall(scope, m.If(test=m.Name(name))) if _asks_other_software_for_its_gpu(c.body)}
    return bool(uses) and uses <= tests


def _asks_other_software_for_its_gpu(block: cst.BaseSuite) -> bool:
    """`if cuda: config.enable_use_gpu(...)` (YOLOv5's PaddlePaddle path): a block of calls, one
    that names the GPU, and none to torch."""
    calls = m.findall(block, m.Call())
    names = [dotted_name(call.func) or "" for call in calls]
    return (bool(calls) and not m.findall(block, m.Name("torch"))
            and any(names_a_build(name.rpartition(".")[2]) for name in names))


def _refuses(block: cst.BaseSuite) -> bool:
    """Whether a block ends the run: it raises, or calls `sys.exit` and its kin (after a message)."""
    if isinstance(block, cst.SimpleStatementSuite):  # (`if ...: raise SystemExit(...)` on one line)
        statements = block.body
    else:
        statements = [s for line in block.body if isinstance(line, cst.SimpleStatementLine) for s in line.body]
    return any(
        isinstance(s, cst.Raise) or (isinstance(s, cst.Expr) and isinstance(s.value, cst.Call) and dotted_name(s.value.func) in EXITS)
        for s in statements
    )
