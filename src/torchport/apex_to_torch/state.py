"""amp's state read through the optimizer and the scaler: `amp.master_params(optimizer)` -> the
optimizer's own parameters (under autocast the model's float32 weights are the master weights),
unscaled first (`scaler.unscale_(optimizer)`) where it follows the backward, as before clipping;
`amp.state_dict()` / `amp.load_state_dict(x)` -> the scaler's."""

from __future__ import annotations

import libcst as cst

from torchport.apis import apex
from torchport.apex_to_torch import scale_loss
from torchport.apex_to_torch.changes import CHECKPOINT_STATE, Unconvertible
from torchport.apex_to_torch.references import uses
from torchport.apex_to_torch.reading import read
from torchport.distribute.changes import Change
from torchport.distribute.edits import Edits, Read, code, statements, walk
from torchport.findings import Operation



def parameters_of(optimizer: str) -> str:
    return f'[p for group in {optimizer}.param_groups for p in group["params"]]'


def rewrite_master_params(text: str, plan) -> tuple[str, list[Change]]:
    found = read(text)
    used = uses(found)
    edits, changes = Edits(), []
    scaled_at = _scaled_at(found)
    unscaled: set[tuple[int, str]] = set()  # (block, optimizer) already unscaled before
    for use in used:
        if use.api != apex.MASTER_PARAMS:
            continue
        line = found.line(use.call)
        if len(use.call.args) != 1 or use.call.args[0].keyword is not None or \
                scale_loss.base_names(use.call.args[0].value) != {_root(use.call.args[0].value)}:
            raise Unconvertible(line, "amp.master_params of something other than one optimizer")
        optimizer = code(use.call.args[0].value)
        edits.replace(use.call, cst.parse_expression(parameters_of(optimizer)))
        statement = found.statement_of(use.call)
        after_backward = any(scope is found.scope_of(statement) and at < line and optimizer in names
                             for scope, at, names in scaled_at)
        if not after_backward and _reads_gradients(statement):
            raise Unconvertible(line, f"amp.master_params({optimizer}) reads gradients away from the backward that "
                                      "scaled them: where to unscale them is not known")
        if after_backward and not _step_follows(found, statement, optimizer):
            raise Unconvertible(line, f"amp.master_params({optimizer}) is read where {optimizer} does not step next "
                                      "(gradient accumulation): unscaled there, its gradients would be unscaled twice "
                                      "before a step")
        key = (id(found.parent(statement)), optimizer)
        if after_backward and key not in unscaled:
            unscaled.add(key)
            edits.insert_before(statement, statements(f"{plan.scaler}.unscale_({optimizer})\n"))
            changes.append(Change(line, line, CHECKPOINT_STATE.code, Operation.INSERT,
                                  f"{plan.scaler}.unscale_({optimizer}) first: the gradients are read unscaled, as "
                                  "apex's master gradients are", apex.MASTER_PARAMS))
        changes.append(Change(line, line, CHECKPOINT_STATE.code, Operation.MODIFY,
                              f"amp.master_params({optimizer}) -> the optimizer's own parameters: under autocast the "
                              "model's float32 weights are the master weights", apex.MASTER_PARAMS))
    return edits.apply(found), changes


def _scaled_at(found: Read) -> list[tuple[cst.CSTNode, int, set[str]]]:
    """(function, line, optimizers) of each backward through the scaler: each scale_loss, and
    each call of a helper that holds one."""
    result = []
    for site in scale_loss.sites(found):
        own, callers = scale_loss.contexts(found, site)
        for context in (own, *callers):
            result.append((found.scope_of(context.anchor), found.line(context.anchor),
                           {code(o) for o in context.optimizers}))
    return result


def _step_follows(found: Read, statement: cst.BaseStatement, optimizer: str) -> bool:
    """Whether `optimizer.step()` comes after the statement in its block, or in a block holding
    the `if` (`else`, `with`) it sits in: the gradients are unscaled once per step."""
    node = statement
    while True:
        block = found.parent(node)
        body = list(block.body)
        if any(_is_step(s, optimizer) for s in body[body.index(node) + 1:]):
            return True
        holder = found.parent(block)
        if isinstance(holder, cst.Else):
            holder = found.parent(holder)
        if not isinstance(holder, (cst.If, cst.With)):  # (a block that runs once each time it is reached)
            return False
        while isinstance(found.parent(holder), cst.If):  # (an elif: its if's block is the one to read)
            holder = found.parent(holder)
        node = holder


def _is_step(statement: cst.BaseStatement, optimizer: str) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and code(statement.body[0].value) == f"{optimizer}.step()")


def _reads_gradients(statement: cst.CSTNode) -> bool:
    """`p.grad`, or a call named for gradients (clip_grad_norm_, get_grad_norm)."""
    return any(isinstance(n, cst.Attribute) and n.attr.value == "grad"
               or isinstance(n, cst.Call) and "grad" in (code(n.func).rsplit(".", 1)[-1])
               for n in walk(statement))


def _root(node: cst.BaseExpression) -> str | None:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def rewrite_state(text: str, plan) -> tuple[str, list[Change]]:
    found = read(text)
    edits, changes = Edits(), []
    for use in uses(found):
        if use.api not in (apex.STATE_DICT, apex.LOAD_STATE_DICT):
            continue
        name = use.api.rsplit(".", 1)[1]
        edits.replace(use.node, cst.parse_expression(f"{plan.scaler}.{name}"))
        line = found.line(use.node)
        changes.append(Change(line, line, CHECKPOINT_STATE.code, Operation.MODIFY,
                              f"amp.{name} -> {plan.scaler}.{name} (a checkpoint written by apex holds apex's keys: "
                              "start from one written after the conversion)", use.api))
    return edits.apply(found), changes
