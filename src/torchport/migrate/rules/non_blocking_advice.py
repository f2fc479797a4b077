"""TP106: host-to-device copies in a training loop that make the host wait. Advice changes nothing: each row names the line it is about (never a row per file "just in case")."""

from __future__ import annotations

import ast

import libcst as cst

from torchport.apis.cuda_module import DEVICE_MOVES, MOVE_METHOD
from torchport.findings import Operation
from torchport.migrate.rules.base.nodes import call_argument, source_of
from torchport.migrate.rules.base.rule import Rule
from torchport.migrate.rules.base.training_step import TRAINING_STEP
from torchport.pyast import parse_quietly


class NonBlockingAdvice(Rule):
    """A host-to-device copy inside a loop (`x.to(device)`, `x.cuda()`) without
    `non_blocking=True` makes the host wait for every batch. Looked for where a file trains
    (a backward and an optimizer step): copies in the training loop are the ones that count."""

    code = "TP106"
    order = 1060
    reads = ()
    mentions = TRAINING_STEP  # (the copies that matter are those of a training loop)
    title = "advice: copies in loops"
    readme = """advice (device targets): `x.to(device)` / `x.cuda()` in a loop without `non_blocking=True`"""
    sample = (
        "import torch\n"
        "\n"
        "\n"
        "def train(model, loader, optimizer, device):\n"
        "    for batch in loader:\n"
        "        model(batch.to(device)).sum().backward()\n"
        "        optimizer.step()\n"
    )

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.advice.has_device

    def __init__(self, context) -> None:
        super().__init__(context)
        self.loops = 0  # loops around the current node, in the current function
        self.outer: list[int] = []  # the same count for each function the current one is in
        self.pins: bool | None = None  # whether the file pins its loaders' memory already (read on first need)

    def visit_For(self, node: cst.For) -> None:  # noqa: N802
        self.loops += 1

    def leave_For(self, original_node: cst.For) -> None:  # noqa: N802
        self.loops -= 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:  # noqa: N802
        self.outer.append(self.loops)
        self.loops = 0

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:  # noqa: N802
        self.loops = self.outer.pop()

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if not self.loops or not self.target.advice.has_device or not _is_device_copy(node):
            return
        if call_argument(node, "non_blocking") is None:
            if self.pins is None:
                self.pins = passes_pin_memory(self.context.whole_source)
            pinned = " (its loader pins memory already)" if self.pins else " (and pin_memory=True to the DataLoader)"
            self.report(node, Operation.PERFORMANCE,
                        f"a copy to the device in a loop: pass non_blocking=True{pinned} so that it overlaps the compute",
                        api=f".{node.func.attr.value}()")


def passes_pin_memory(source: bytes) -> bool:
    """Whether a call in `source` passes `pin_memory` (as anything but False): the whole file, as
    read, since the rules may walk it with functions that never mention CUDA set aside."""
    if b"pin_memory" not in source:
        return False
    tree = parse_quietly(source)
    if tree is None:
        return False
    return any(keyword.arg == "pin_memory" and not (isinstance(keyword.value, ast.Constant) and keyword.value.value is False)
               for node in ast.walk(tree) if isinstance(node, ast.Call) for keyword in node.keywords)


def _is_device_copy(node: cst.Call) -> bool:
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in DEVICE_MOVES:
        return False
    if func.attr.value == MOVE_METHOD:
        return True
    if call_argument(node, "device") is not None:
        return True
    first = node.args[0].value if node.args and node.args[0].keyword is None else None
    text = source_of(first).lower() if first is not None else ""
    return any(word in text for word in ("device", "cuda", "gpu", "rank"))
