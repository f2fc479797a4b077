"""`--distributed-batch per-rank`: each process keeps the script's batch, so the global batch grows
WORLD_SIZE times and the optimizer's learning rate is scaled by WORLD_SIZE with it (the linear
scaling rule). Only the value given to a torch.optim optimizer is scaled; what else sets a
learning rate (a scheduler's own values, per-group values, `param_group["lr"] = ...`) is left as
written, with a row saying where.
"""

from __future__ import annotations

import libcst as cst

from torchport.distribute.changes import BATCH_SIZE, Change
from torchport.distribute.names import WORLD_SIZE
from torchport.findings import Operation

_OPTIM, _SCHEDULERS = "torch.optim.", "torch.optim.lr_scheduler."
_NOT_OPTIMIZERS = ("Optimizer",)
# A scheduler's keywords that hold a learning rate of its own.
_SCHEDULER_RATES = ("max_lr", "base_lr", "eta_min", "min_lr", "initial_lr")
_EMPTY = cst.Module([])


def scale(facts, edits) -> None:
    """Plan `lr=x` -> `lr=x * WORLD_SIZE` on each torch.optim optimizer in `edits`, rows for the rest."""
    optimizers = 0
    for call in facts.calls:
        names = facts.qualified_names(call)
        if any(_is_optimizer(n) for n in names):
            optimizers += 1
            _scale_one(call, facts, edits)
        elif any(n.startswith(_SCHEDULERS) for n in names):
            _scheduler_row(call, facts, edits)
    for assign in facts.assigns:
        if any(_sets_lr(t.target) for t in assign.targets):
            edits.row(facts, assign, BATCH_SIZE.code, Operation.NOTE,
                      f"the learning rate set here ({_source(assign.value)}) is not scaled: multiply it by {WORLD_SIZE} "
                      f"to match the scaled optimizer (--distributed-batch per-rank)", "")
    if not optimizers:
        edits.changes.append(_module_row(facts))


def _is_optimizer(name: str) -> bool:
    if not name.startswith(_OPTIM) or name.startswith(_SCHEDULERS) or ".swa_utils." in name:
        return False
    last = name.rsplit(".", 1)[-1]
    return last[:1].isupper() and last not in _NOT_OPTIMIZERS


def _scale_one(call: cst.Call, facts, edits) -> None:
    lr = _lr_argument(call)
    optimizer = _source(call.func)
    if lr is None:
        edits.row(facts, call, BATCH_SIZE.code, Operation.NOTE,
                  f"{optimizer} takes its default learning rate: give lr=<its default> * {WORLD_SIZE} to match the per-process "
                  f"batch (--distributed-batch per-rank)", "")
        return
    text = _source(lr.value)
    operand = text if isinstance(lr.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)) else f"({text})"
    edits.calls[call] = call.with_changes(args=[
        a.with_changes(value=cst.parse_expression(f"{operand} * {WORLD_SIZE}")) if a is lr else a for a in call.args])
    groups = _per_group_rates(call)
    also = f"; the per-group rates in its parameter groups are not ({', '.join(groups)})" if groups else ""
    edits.row(facts, call, BATCH_SIZE.code, Operation.MODIFY,
              f"{optimizer}: lr {text} -> {operand} * {WORLD_SIZE}: each process keeps its batch (--distributed-batch "
              f"per-rank), so the global batch is {WORLD_SIZE} times the script's and the learning rate grows with it{also}", "")


def _lr_argument(call: cst.Call) -> cst.Arg | None:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keyword = next((a for a in call.args if a.keyword is not None and a.keyword.value == "lr"), None)
    return keyword or (positional[1] if len(positional) > 1 else None)


def _per_group_rates(call: cst.Call) -> list[str]:
    first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
    rates = []
    if isinstance(first, (cst.List, cst.Tuple)):
        for element in first.elements:
            if isinstance(element.value, cst.Dict):
                rates += [_source(e.value) for e in element.value.elements
                          if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == "lr"]
    return rates


def _scheduler_row(call: cst.Call, facts, edits) -> None:
    own = [a for a in call.args if a.keyword is not None and a.keyword.value in _SCHEDULER_RATES]
    if own:
        values = ", ".join(f"{a.keyword.value}={_source(a.value)}" for a in own)
        edits.row(facts, call, BATCH_SIZE.code, Operation.NOTE,
                  f"{_source(call.func)} keeps its own rates ({values}), not scaled by {WORLD_SIZE} as the optimizer's lr was: "
                  f"scale them too for the larger global batch", "")


def _sets_lr(target: cst.BaseExpression) -> bool:
    if not isinstance(target, cst.Subscript) or len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return False
    key = target.slice[0].slice.value
    return isinstance(key, cst.SimpleString) and key.evaluated_value == "lr"


def _module_row(facts) -> Change:
    return Change(1, 1, BATCH_SIZE.code, Operation.NOTE,
                  f"no torch.optim optimizer made in this file: scale its learning rate by {WORLD_SIZE} where it is made "
                  f"(--distributed-batch per-rank keeps each process's batch, so the global batch is {WORLD_SIZE} times larger)")


def _source(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)
