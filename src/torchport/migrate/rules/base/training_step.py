"""What the advice about a training step shares (TP101, TP106, TP107): what a file that trains
says, and its first `.backward()` call, where a row about the whole step is anchored."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.rule import Rule


def _is_backward(node: cst.Call) -> bool:
    return isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward"


# A training step: a backward pass and an optimizer step in one file (a test that only
# differentiates is not one).
TRAINING_STEP = rb"(?s:\.backward\((?=.*\.step\()|\.step\((?=.*\.backward\())"


class TrainingStepRule(Rule):
    """A rule whose advice is about the training step: anchored at the file's first
    `.backward()` call, reported once the whole file has been seen."""

    # (a step that trains in float32 and sets no launch environment: what each of them advises on)
    sample = (
        "import torch\n"
        "\n"
        "\n"
        "def step(model, batch, optimizer):\n"
        "    model(batch).sum().backward()\n"
        "    optimizer.step()\n"
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self.first_backward: cst.Call | None = None

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if self.first_backward is None and _is_backward(node):
            self.first_backward = node
