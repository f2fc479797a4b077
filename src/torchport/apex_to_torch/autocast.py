"""The forward pass under autocast: in the block where the loss is computed (before the
`amp.scale_loss` it is scaled at, or the helper call it is passed to), the statements from the
first that calls the model through the last that assigns the loss go into
`with torch.amp.autocast("cuda", dtype=torch.float16):`. O1 patches torch's functions and O2 casts
the model; autocast is what both become natively (NVIDIA's own migration note)."""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from torchport.apis import amp, apex
from torchport.apex_to_torch import initialize, scale_loss
from torchport.apex_to_torch.changes import AMP_INITIALIZE, Unconvertible
from torchport.apex_to_torch.references import uses
from torchport.apex_to_torch.reading import read
from torchport.distribute.changes import Change
from torchport.distribute.edits import Edits, Read, assigned_targets, calls, code, walk
from torchport.findings import Operation

AUTOCAST = 'torch.amp.autocast("cuda", dtype=torch.float16'  # (CUDA's dialect: the migration names the target's)


class Region(NamedTuple):
    block: cst.CSTNode
    start: cst.BaseStatement
    end: cst.BaseStatement


def regions(found: Read, models: tuple[str, ...]) -> list[Region]:
    """Each forward pass to run under autocast, once (two losses of one forward share it)."""
    found_regions: list[Region] = []
    for site in scale_loss.sites(found):
        own, callers = scale_loss.contexts(found, site)
        found_own = region(found, own.anchor, own.loss, models)
        chosen = [found_own] if found_own is not None else [region(found, c.anchor, c.loss, models) for c in callers]
        if not chosen or None in chosen:
            raise Unconvertible(found.line(site.call), f"the statement computing {code(site.loss)} is not found "
                                                       "before amp.scale_loss: the forward pass to run under autocast "
                                                       "is not known")
        found_regions += chosen
    return _merged(found_regions)


def _merged(found_regions: list[Region]) -> list[Region]:
    """Regions of one block that overlap made one (two losses of one forward pass)."""
    result: list[Region] = []
    for r in found_regions:
        body = list(r.block.body)
        for i, other in enumerate(result):
            if other.block is r.block and not (body.index(other.end) < body.index(r.start)
                                               or body.index(r.end) < body.index(other.start)):
                start = min(r.start, other.start, key=body.index)
                end = max(r.end, other.end, key=body.index)
                result[i] = Region(r.block, start, end)
                break
        else:
            result.append(r)
    return result


def region(found: Read, anchor: cst.BaseStatement, loss: cst.BaseExpression, models: tuple[str, ...]) -> Region | None:
    names = scale_loss.base_names(loss)
    for block, holder in found.enclosing_blocks(anchor):
        body = list(block.body)
        index = body.index(holder)
        assigning = [j for j in range(index) if _assigns(body[j], names)]
        if not assigning:
            continue
        last = assigning[-1]
        floor = max((j + 1 for j in range(last) if _trains(body[j])), default=0)
        start = next((j for j in range(floor, last + 1) if _calls_model(body[j], models)), last)
        return Region(block, body[start], body[last])
    return None


def _assigns(statement: cst.CSTNode, names: set[str]) -> bool:
    for node in walk(statement, into_scopes=False):
        targets = assigned_targets(node, loops=True)
        if any(scale_loss.base_names(t) & names for t in targets if isinstance(t, (cst.Name, cst.Tuple, cst.List))):
            return True
    return False


def _trains(statement: cst.CSTNode) -> bool:
    """A backward or a step: what ends the previous iteration's forward pass."""
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value in ("backward", "step")
               for c in calls(statement, into_scopes=False))


def _calls_model(statement: cst.CSTNode, models: tuple[str, ...]) -> bool:
    wanted = {*models, *(f"{m}.forward" for m in models)}
    return any(code(c.func) in wanted for c in calls(statement, into_scopes=False))


def _is_autocast(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.With) and any(
        isinstance(item.item, cst.Call) and code(item.item.func).split(".")[-1] == amp.AUTOCAST
        for item in statement.items)


def enabled(found: Read, block: cst.CSTNode, plan, home: cst.CSTNode | None) -> str:
    """`, enabled=<condition>` when amp is on under one: the condition itself where initialize's
    function is, the scaler's state elsewhere (the condition's names may not be seen there)."""
    if plan.condition is None:
        return ""
    scope = block if isinstance(block, cst.Module) else found.scope_of(block)
    if scope is home:
        return f", enabled={plan.condition}"
    return f", enabled={plan.scaler}.is_enabled()"


def wrap_forward(text: str, plan) -> tuple[str, list[Change]]:
    if not plan.autocast:
        return text, []
    found = read(text)
    init = initialize.find(found, uses(found))
    home = found.scope_of(init.call) if init is not None else None
    edits, changes = Edits(), []
    for r in regions(found, plan.models):
        if r.start is r.end and _is_autocast(r.start):
            continue  # (the loss is computed under an autocast already)
        body = list(r.block.body)
        inside = body[body.index(r.start):body.index(r.end) + 1]
        context = f"{AUTOCAST}{enabled(found, r.block, plan, home)})"
        moved = [inside[0].with_changes(leading_lines=[]), *inside[1:]]
        wrapped = cst.With(items=[cst.WithItem(cst.parse_expression(context))], body=cst.IndentedBlock(body=moved),
                           leading_lines=inside[0].leading_lines)
        edits.replace(inside[0], wrapped)
        for statement in inside[1:]:
            edits.remove(statement)
        start, end = found.line(r.start), found.end_line(r.end)
        changes.append(Change(start, end, AMP_INITIALIZE.code, Operation.INSERT,
                              f"the forward pass under {context}: what amp's opt level did to it", apex.INITIALIZE))
    return edits.apply(found), changes
