"""`amp.initialize` read (its models, optimizers, opt level, loss scale and the `if` it may sit
under) and rewritten: the statement becomes the GradScaler (O3: the models cast to half, as apex
casts them); the models and optimizers are the script's own, unchanged."""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from torchport.apis import apex
from torchport.apex_to_torch import arguments
from torchport.apex_to_torch.changes import AMP_INITIALIZE, Unconvertible
from torchport.apex_to_torch.imports import catches_import_error, only_apex
from torchport.apex_to_torch.references import Use, uses
from torchport.apex_to_torch.reading import read
from torchport.distribute.changes import Change
from torchport.distribute.edits import SCOPES, Edits, Read, code, first_code, statements, walk
from torchport.findings import Operation

GRAD_SCALER = 'torch.amp.GradScaler("cuda"'  # (CUDA's dialect: the migration names the target's device)
DROPPED = apex.INITIALIZE_NATIVE_ALREADY
APEX_ONLY = apex.INITIALIZE_APEX_ONLY


class Initialize(NamedTuple):
    call: cst.Call
    statement: cst.SimpleStatementLine
    models: list[cst.BaseExpression]  # what is passed
    optimizers: list[cst.BaseExpression]
    model_targets: list[cst.BaseExpression]  # what is bound
    optimizer_targets: list[cst.BaseExpression]
    guard: cst.If | None  # `if args.fp16:` the call sits under
    opt_level: str
    enabled: bool | cst.BaseExpression  # True / False, or the expression amp is enabled under
    loss_scale: str | float
    dropped: list[tuple[str, cst.Arg]]


def find(found: Read, used: list[Use]) -> Initialize | None:
    calls = [u for u in used if u.api == apex.INITIALIZE]
    if not calls:
        return None
    if len(calls) > 1:
        raise Unconvertible(found.line(calls[1].node), "amp.initialize is called more than once")
    return read_call(found, calls[0].call)


def read_call(found: Read, call: cst.Call) -> Initialize:
    line = found.line(call)
    statement = found.statement_of(call)
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and statement.body[0].value is call
            and len(statement.body[0].targets) == 1):
        raise Unconvertible(line, "amp.initialize's result is not assigned to the models (and optimizers)")
    bound = _bound(found, call, line)
    models, optimizers, model_targets, optimizer_targets = _pairs(statement.body[0].targets[0].target, bound, line)
    guard, enabled, opt_level = _guard(found, statement), _enabled(found, bound, line), _opt_level(found, bound, line)
    loss_scale = _loss_scale(found, bound, line)
    if guard is not None and not isinstance(enabled, bool):
        raise Unconvertible(line, f"amp.initialize(enabled={code(enabled)}) under `if {code(guard.test)}:`")
    if opt_level == "O3" and _scale(opt_level, enabled, loss_scale) is not None:
        raise Unconvertible(line, "O3 with a loss scale: GradScaler does not unscale float16 parameters' gradients")
    return Initialize(call, statement, models, optimizers, model_targets, optimizer_targets, guard, opt_level,
                      enabled, loss_scale, [(name, arg) for name, arg in bound.items() if name in DROPPED])


def _bound(found: Read, call: cst.Call, line: int) -> dict[str, cst.Arg]:
    bound = arguments.bind(found, call, apex.INITIALIZE_PARAMETERS + apex.ASCEND_INITIALIZE_PARAMETERS)
    if "models" not in bound:
        raise Unconvertible(line, "amp.initialize without models")
    for name in APEX_ONLY:
        if name in bound and arguments.literal(bound[name].value) is not None:
            raise Unconvertible(line, f"amp.initialize({name}=...) asks for apex's own casting")
    unknown = set(bound) - {"models", "optimizers", "enabled", "opt_level", "loss_scale", *APEX_ONLY, *DROPPED}
    if unknown:
        raise Unconvertible(line, f"amp.initialize({sorted(unknown)[0]}=...) is not an apex parameter")
    return bound


def _pairs(target: cst.BaseExpression, bound: dict[str, cst.Arg], line: int):
    """(models, optimizers, the names bound to the models, to the optimizers)."""
    models = arguments.elements(bound["models"].value)
    given = bound.get("optimizers")
    with_optimizers = given is not None and arguments.literal(given.value) is not None  # (None: a model for inference)
    optimizers = arguments.elements(given.value) if with_optimizers else []
    if with_optimizers:
        if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2):
            raise Unconvertible(line, "amp.initialize's models and optimizers are not assigned as a pair")
        model_target, optimizer_target = (e.value for e in target.elements)
        optimizer_targets = arguments.elements(optimizer_target)
    else:
        model_target, optimizer_targets = target, []
    model_targets = arguments.elements(model_target)
    if len(model_targets) != len(models) or len(optimizer_targets) != len(optimizers) or not all(
            arguments.is_reference(n) for n in (*models, *optimizers, *model_targets)):
        raise Unconvertible(line, "amp.initialize's models or optimizers are not plain names")
    return models, optimizers, model_targets, optimizer_targets


def _guard(found: Read, statement: cst.BaseStatement) -> cst.If | None:
    """The `if` the call sits directly under (`if args.fp16:`), when that `if` is a statement of
    the function (or module) itself; None when the call is such a statement."""
    block = found.parent(statement)
    if isinstance(block, cst.Module):
        return None
    holder = found.parent(block)
    if isinstance(holder, SCOPES):
        return None
    if isinstance(holder, cst.If) and holder.body is block and _in_scope_body(found, holder):
        if any(isinstance(n, (cst.Call, cst.NamedExpr, cst.Await, cst.Yield)) for n in walk(holder.test)):
            raise Unconvertible(found.line(statement), f"amp.initialize under `if {code(holder.test)}:`, a "
                                                       "condition that calls: the scaler cannot be made before it")
        return holder
    raise Unconvertible(found.line(statement), "amp.initialize is nested in a block the scaler cannot be made beside "
                                               "(a loop, a try, an else, or more than one if)")


def _in_scope_body(found: Read, statement: cst.BaseStatement) -> bool:
    block = found.parent(statement)
    return isinstance(block, cst.Module) or isinstance(block, cst.IndentedBlock) and isinstance(found.parent(block), SCOPES)


def _opt_level(found: Read, bound, line: int) -> str:
    if "opt_level" not in bound:
        return apex.DEFAULT_OPT_LEVEL
    value = arguments.literal(bound["opt_level"].value, found)
    if value not in apex.OPT_LEVELS:
        raise Unconvertible(line, f"amp.initialize(opt_level={code(bound['opt_level'].value)}): the opt level is "
                                  "not known before the script runs")
    return value


def _enabled(found: Read, bound, line: int) -> bool | cst.BaseExpression:
    if "enabled" not in bound:
        return True
    value = arguments.literal(bound["enabled"].value)
    if isinstance(value, bool):
        return value
    expression = bound["enabled"].value
    if any(isinstance(n, (cst.Call, cst.NamedExpr, cst.Await, cst.Yield)) for n in walk(expression)):
        raise Unconvertible(line, f"amp.initialize(enabled={code(expression)}): a condition that calls")
    return expression


def _loss_scale(found: Read, bound, line: int) -> str | float:
    if "loss_scale" not in bound:
        return "default"
    value = arguments.literal(bound["loss_scale"].value, found)
    if value == apex.DYNAMIC or isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return value
    raise Unconvertible(line, f"amp.initialize(loss_scale={code(bound['loss_scale'].value)}): not a number or "
                              "\"dynamic\" the conversion can read")


def condition(init: Initialize) -> cst.BaseExpression | None:
    """The expression amp is on under (the `if` around initialize, or its `enabled=`); None: always."""
    if init.guard is not None:
        return init.guard.test
    return None if isinstance(init.enabled, bool) else init.enabled


def scales(init: Initialize) -> str | float | None:
    """"dynamic", a static scale, or None where nothing is scaled (O0, O3's 1.0, enabled=False)."""
    return _scale(init.opt_level, init.enabled, init.loss_scale)


def _scale(opt_level: str, enabled, loss_scale) -> str | float | None:
    scale = apex.OPT_LEVELS[opt_level].loss_scale if loss_scale == "default" else loss_scale
    if enabled is False or opt_level == "O0" or scale == 1.0:
        return None
    return scale


def autocasts(init: Initialize) -> bool:
    return apex.OPT_LEVELS[init.opt_level].autocast and init.enabled is not False


def scaler_call(init: Initialize) -> str:
    scale = scales(init)
    if scale is None:
        return f"{GRAD_SCALER}, enabled=False)"
    keywords = ""
    if scale != apex.DYNAMIC:
        keywords += f", init_scale={scale!r}, growth_interval={apex.STATIC_GROWTH_INTERVAL}"
    guard = condition(init)
    if guard is not None:
        keywords += f", enabled={code(guard)}"
    return f"{GRAD_SCALER}{keywords})"


def rewrite(text: str, plan) -> tuple[str, list[Change]]:
    """The initialize statement -> the scaler (here, or at the module's top when its uses are in
    other functions), the `if` it sat under dropped when nothing else is left in it."""
    found = read(text)
    init = find(found, uses(found))
    if init is None:
        return text, []
    edits, line, changes = Edits(), found.line(init.call), []
    kept = _assignments(init)
    scaler = statements(f"{plan.scaler} = {plan.scaler_call}\n")
    here = [] if plan.at_module or init.guard is not None else scaler
    if plan.at_module:
        _at_module_top(found, edits, scaler)
    elif init.guard is not None:
        edits.insert_before(init.guard, scaler)
        if not kept and init.guard.orelse is None and all(
                s is init.statement or _apex_only(s) for s in init.guard.body.body):
            edits.remove(init.guard)
            at = found.line(init.guard)
            changes.append(Change(at, at, AMP_INITIALIZE.code, Operation.DELETE,
                                  f"`if {code(init.guard.test)}:` removed: it only imported apex and initialized amp "
                                  "(the scaler above it is on under the same condition)", apex.INITIALIZE))
    new = [*here, *kept]
    if new:
        new[0] = new[0].with_changes(leading_lines=init.statement.leading_lines)
        edits.insert_before(init.statement, new)
    edits.remove(init.statement)
    where = "at the module's top (its uses are in other functions)" if plan.at_module else "here"
    what = {"O3": "the models cast to float16 as O3 does, no autocast",
            "O0": "O0: no autocast, nothing scaled"}.get(init.opt_level, f"{init.opt_level}: the forward pass under autocast")
    changes += [Change(line, found.end_line(init.call), AMP_INITIALIZE.code, Operation.MODIFY,
                      f"amp.initialize -> {plan.scaler} = {plan.scaler_call} {where}; {what}; models and optimizers "
                      "are used as they are", apex.INITIALIZE)]
    changes += [Change(found.line(arg), found.line(arg), AMP_INITIALIZE.code, Operation.DELETE,
                       f"amp.initialize({name}=...) dropped: {DROPPED[name]}", apex.INITIALIZE)
                for name, arg in init.dropped]
    return edits.apply(found), changes


def _assignments(init: Initialize) -> list[cst.BaseStatement]:
    """What is left of the call: the O3 cast, and the names bound when they are not those passed."""
    lines = []
    for target, model in zip(init.model_targets, init.models):
        if init.opt_level == "O3":
            lines.append(f"{code(target)} = {code(model)}.half()\n")
        elif code(target) != code(model):
            lines.append(f"{code(target)} = {code(model)}\n")
    lines += [f"{code(t)} = {code(o)}\n" for t, o in zip(init.optimizer_targets, init.optimizers) if code(t) != code(o)]
    return statements("".join(lines)) if lines else []


def _apex_only(statement: cst.BaseStatement) -> bool:
    """An apex import, or a `try` of apex imports alone (`except ImportError: raise ...`)."""
    if only_apex(statement):
        return True
    return isinstance(statement, cst.Try) and all(only_apex(s) for s in statement.body.body) \
        and all(catches_import_error(h) for h in statement.handlers) and statement.finalbody is None


def _at_module_top(found: Read, edits: Edits, scaler: list[cst.BaseStatement]) -> None:
    """After the module's last import (or `try:` of imports) before its first function or class."""
    last = None
    for statement in found.module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            break
        if any(isinstance(n, (cst.Import, cst.ImportFrom)) for n in walk(statement, into_scopes=False)):
            last = statement
    if last is not None:
        edits.insert_after(last, scaler)
    else:
        edits.insert_before(first_code(found.module), scaler)
