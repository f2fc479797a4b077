"""`with amp.scale_loss(loss, optimizer) as scaled_loss: scaled_loss.backward()` ->
`scaler.scale(loss).backward()`, and the matching `optimizer.step()` -> `scaler.step(optimizer)`
then `scaler.update()` (once, after the last step of the block, with several optimizers)."""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from torchport.apis import apex
from torchport.apis.amp import GRADIENT_CLIPS
from torchport.apex_to_torch import arguments
from torchport.apex_to_torch.changes import LOSS_SCALING, Unconvertible
from torchport.apex_to_torch.references import Use, uses
from torchport.apex_to_torch.reading import read
from torchport.distribute.changes import Change
from torchport.distribute.edits import Edits, Read, calls, code, statements, walk
from torchport.findings import Operation

DROPPED = apex.SCALE_LOSS_NATIVE_ALREADY


class Site(NamedTuple):
    statement: cst.With
    call: cst.Call
    loss: cst.BaseExpression
    optimizers: list[cst.BaseExpression]
    scaled: str  # the name bound by `as`
    dropped: list[tuple[str, cst.Arg]]


def sites(found: Read, used: list[Use] | None = None) -> list[Site]:
    result = []
    for use in used if used is not None else uses(found):
        if use.api != apex.SCALE_LOSS:
            continue
        line = found.line(use.call)
        item = found.parent(use.call)
        statement = found.parent(item)
        if not isinstance(statement, cst.With) or len(statement.items) != 1 or statement.asynchronous:
            raise Unconvertible(line, "amp.scale_loss beside other contexts in one with statement")
        if not isinstance(item.asname, cst.AsName) or not isinstance(item.asname.name, cst.Name):
            raise Unconvertible(line, "amp.scale_loss's scaled loss is not bound to a name")
        bound = arguments.bind(found, use.call, apex.SCALE_LOSS_PARAMETERS)
        if "loss" not in bound or "optimizers" not in bound:
            raise Unconvertible(line, "amp.scale_loss without a loss and an optimizer")
        optimizers = arguments.elements(bound["optimizers"].value)
        if not all(arguments.is_reference(o) for o in optimizers):
            raise Unconvertible(line, "amp.scale_loss's optimizers are not plain names")
        result.append(Site(statement, use.call, bound["loss"].value, optimizers, item.asname.name.value,
                           [(n, a) for n, a in bound.items() if n in DROPPED]))
    return result


def check_branches(found: Read, site: Site, condition: str | None) -> None:
    """`if args.fp16: <scale_loss> else: loss.backward()`: the scaler's steps serve both branches
    only when the scaler is on exactly when the `if` takes the apex branch."""
    node = site.statement
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module)):
        parent = found.parent(node)
        if isinstance(parent, cst.If):
            taken = code(parent.test) if node is parent.body else f"not {code(parent.test)}"
            other = parent.orelse if node is parent.body else parent.body
            if other is not None and _backward_in(other) and taken != condition:
                raise Unconvertible(found.line(site.call),
                                    f"amp.scale_loss under `if {code(parent.test)}:` beside a plain backward, and amp "
                                    f"on {'always' if condition is None else f'under `{condition}`'}: the scaler "
                                    "would not follow the branch taken")
        node = parent


def _backward_in(node: cst.CSTNode) -> bool:
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward" for c in calls(node))


class Context(NamedTuple):
    """Where a site's loss is computed and its optimizer stepped: the site itself, or, for a helper
    (`def amp_backward(loss, optimizer): with amp.scale_loss(...)`), each call of it."""

    anchor: cst.BaseStatement  # the statement the loss is scaled at (the with, or the helper's call)
    loss: cst.BaseExpression
    optimizers: list[cst.BaseExpression]


def contexts(found: Read, site: Site) -> tuple[Context, list[Context]]:
    """(the site's own context, those of the calls of the helper it is in, if its loss or an
    optimizer is a parameter of that function)."""
    own = Context(site.statement, site.loss, site.optimizers)
    function = found.scope_of(site.statement)
    if not isinstance(function, cst.FunctionDef):
        return own, []
    parameters = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    passed = {n for e in (site.loss, *site.optimizers) for n in base_names(e)} & set(parameters)
    if not passed:
        return own, []
    method = isinstance(found.parent(found.parent(function)), cst.ClassDef)
    callers = []
    for call in found.calls(found.module):
        if code(call.func) != (f"{parameters[0]}.{function.name.value}" if method and parameters
                               else function.name.value):  # (a method is followed through self.name(...) only)
            continue
        given = _arguments_by_parameter(found, call, parameters[1:] if method else parameters)
        try:
            loss = _substituted(site.loss, given)
            optimizers = [_substituted(o, given) for o in site.optimizers]
        except KeyError as missing:
            raise Unconvertible(found.line(call), f"{code(call.func)}(...) does not pass {missing}") from None
        callers.append(Context(found.statement_of(call), loss, optimizers))
    return own, callers


def _arguments_by_parameter(found: Read, call: cst.Call, parameters: list[str]) -> dict[str, cst.BaseExpression]:
    given = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            raise Unconvertible(found.line(call), f"{code(call.func)}(*...): the arguments are not known")
        if arg.keyword is not None:
            given[arg.keyword.value] = arg.value
        elif index < len(parameters):
            given[parameters[index]] = arg.value
    return given


def _substituted(expression: cst.BaseExpression, given: dict[str, cst.BaseExpression]) -> cst.BaseExpression:
    """The expression as the caller spells it (a plain parameter becomes the argument passed)."""
    if isinstance(expression, cst.Name) and expression.value in given:
        return given[expression.value]
    names = base_names(expression)
    if names & set(given):
        raise KeyError(sorted(names & set(given))[0])  # (an expression over a parameter: not followed)
    return expression


def base_names(expression: cst.BaseExpression) -> set[str]:
    """The names an expression reads (`outputs.loss / n` -> {outputs, n}; not attribute names)."""
    found, stack = set(), [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            found.add(node.value)
        elif isinstance(node, cst.Attribute):
            stack.append(node.value)
        else:
            stack.extend(node.children)
    return found


def step_statements(found: Read, site: Site) -> list[cst.SimpleStatementLine]:
    """The `optimizer.step()` statements of the site's optimizers: in the function the loss is
    scaled in, else (a helper) in the functions that call it."""
    own, callers = contexts(found, site)
    steps, missing = _steps_in(found, found.scope_of(own.anchor), own.optimizers)
    if missing and callers:
        steps = []
        for context in callers:
            more, missing = _steps_in(found, found.scope_of(context.anchor), context.optimizers)
            if missing:
                break
            steps += more
    if missing:
        raise Unconvertible(found.line(site.call), f"{sorted(missing)[0]}.step() is not in the function where its "
                                                   "loss is scaled")
    return steps


def _steps_in(found: Read, scope: cst.CSTNode, optimizers) -> tuple[list[cst.SimpleStatementLine], set[str]]:
    wanted = {code(o) for o in optimizers}
    steps, seen = [], set()
    for call in found.calls(scope, into_scopes=False):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "step" and code(call.func.value) in wanted:
            statement = found.statement_of(call)
            if call.args or not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                                 and isinstance(statement.body[0], cst.Expr) and statement.body[0].value is call):
                raise Unconvertible(found.line(call), f"{code(call)}: a step the GradScaler cannot take as it is")
            seen.add(code(call.func.value))
            steps.append(statement)
    return steps, wanted - seen


def rewrite_steps(text: str, plan) -> tuple[str, list[Change]]:
    found = read(text)
    edits, changes, done = Edits(), [], set()
    by_block: dict[int, list[cst.SimpleStatementLine]] = {}
    blocks = {}
    for site in sites(found):
        for statement in step_statements(found, site):
            if statement in done:
                continue
            done.add(statement)
            optimizer = code(statement.body[0].value.func.value)
            edits.replace(statement.body[0], cst.Expr(cst.parse_expression(f"{plan.scaler}.step({optimizer})")))
            changes += _unscaled_before_clipping(found, edits, site, statement, optimizer, plan.scaler)
            block = found.parent(statement)
            by_block.setdefault(id(block), []).append(statement)
            blocks[id(block)] = block
            line = found.line(statement)
            changes.append(Change(line, line, LOSS_SCALING.code, Operation.MODIFY,
                                  f"{optimizer}.step() -> {plan.scaler}.step({optimizer}) (skipped when the scaled "
                                  "gradients hold inf/nan, as apex skips it)", apex.SCALE_LOSS))
    for key, steps in by_block.items():
        body = list(blocks[key].body)
        last = max(steps, key=body.index)
        edits.insert_after(last, statements(f"{plan.scaler}.update()\n"))
        line = found.line(last)
        changes.append(Change(line, line, LOSS_SCALING.code, Operation.INSERT,
                              f"{plan.scaler}.update() after the step: the loss scale grows or backs off once per "
                              "iteration", apex.SCALE_LOSS))
    return edits.apply(found), changes


def _unscaled_before_clipping(found: Read, edits: Edits, site: Site, step: cst.SimpleStatementLine, optimizer: str,
                              scaler: str) -> list[Change]:
    """`scaler.unscale_(optimizer)` before the first gradient clipping between the scaled backward
    and the step: apex's scale_loss hands back unscaled gradients on leaving, a GradScaler keeps
    them scaled until its step, and a clip would read them scaled."""
    scope, line = found.scope_of(step), found.line(step)
    after = found.line(site.statement) if found.scope_of(site.statement) is scope else 0
    between = [c for c in found.calls(scope, into_scopes=False) if after < found.line(c) < line]
    clips = [c for c in between if (code(c.func) or "").rsplit(".", 1)[-1] in GRADIENT_CLIPS]
    if not clips or any(code(c.func) == f"{scaler}.unscale_" for c in between):  # (master_params' clip: unscaled already)
        return []
    clip = found.statement_of(min(clips, key=found.line))
    edits.insert_before(clip, statements(f"{scaler}.unscale_({optimizer})\n"))
    at = found.line(clip)
    return [Change(at, at, LOSS_SCALING.code, Operation.INSERT,
                   f"{scaler}.unscale_({optimizer}) before the gradients are clipped: apex's scale_loss hands them back "
                   "unscaled", apex.SCALE_LOSS)]


def rewrite_scale_loss(text: str, plan) -> tuple[str, list[Change]]:
    found = read(text)
    edits, changes = Edits(), []
    for site in sites(found):
        scaled = f"{plan.scaler}.scale({code(site.loss)})"
        body = list(site.statement.body.body)
        reads = [n for n in walk(site.statement.body) if isinstance(n, cst.Name) and n.value == site.scaled]
        first = body[0]
        if len(reads) == 1 and _is_backward_of(first, site.scaled):
            call = first.body[0].value
            new_first = first.with_changes(body=[cst.Expr(call.with_changes(
                func=call.func.with_changes(value=cst.parse_expression(scaled))))])
            new = [new_first, *body[1:]]
        else:
            new = [*statements(f"{site.scaled} = {scaled}\n"), *body]
        new[0] = new[0].with_changes(leading_lines=[*site.statement.leading_lines, *new[0].leading_lines])
        edits.insert_before(site.statement, new)
        edits.remove(site.statement)
        line = found.line(site.call)
        changes.append(Change(line, line, LOSS_SCALING.code, Operation.MODIFY,
                              f"with amp.scale_loss(...) as {site.scaled} -> {scaled}", apex.SCALE_LOSS))
        changes += [Change(found.line(a), found.line(a), LOSS_SCALING.code, Operation.DELETE,
                           f"amp.scale_loss({name}=...) dropped: {DROPPED[name]}", apex.SCALE_LOSS)
                    for name, a in site.dropped]
    return edits.apply(found), changes


def _is_backward_of(statement: cst.BaseStatement, name: str) -> bool:
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)):
        return False
    call = statement.body[0].value
    return (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"
            and isinstance(call.func.value, cst.Name) and call.func.value.value == name)
