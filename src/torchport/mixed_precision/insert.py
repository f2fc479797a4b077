"""Mixed precision added to the training steps of one file that has none, in apex's form, as
Ascend's ModelZoo ports write it: `amp.initialize` after the optimizer is made, each
`loss.backward()` inside `with amp.scale_loss(loss, optimizer) as scaled_loss:`, and amp's state
beside the optimizer's in the checkpoints. `--amp torch` hands that form to the apex conversion,
which writes torch.amp's (autocast around the forward, a GradScaler around backward and step): one
placement for both modes, read once."""

from __future__ import annotations

import re
from typing import NamedTuple

import libcst as cst

from torchport.apis.amp import FSDP_PRECISION, FSDP_SHARDS, GRADIENT_CLIPS, OWN_MIXED_PRECISION
from torchport.distribute.changes import Change
from torchport.distribute.edits import (BLOCKS, Edits, Read, calls, code, is_docstring, is_future_import, is_import_line,
                                        walk)
from torchport.distribute.model import is_optimizer_call, parameters_of
from torchport.findings import Operation
from torchport.mixed_precision.changes import APEX, MADE, NOTE, SAVED, STEP

# A file that trains: a backward pass and an optimizer step in it (as TP101 reads a training step).
TRAINS = re.compile(rb"(?s:\.backward\((?=.*\.step\()|\.step\((?=.*\.backward\())")
SCALED = "scaled_loss"
PARALLEL_WRAPPERS = ("DataParallel", "DistributedDataParallel", "DDP")
MOVES = ("cuda", "to")  # (the text is in CUDA's dialect here: migrated after)
SCHEDULES = re.compile(r"LR\b|LR\(|[Ss]chedul|Plateau|[Ww]armup")
# What a branch beside the optimizer's step does when it updates the weights by itself (reads the
# gradients, writes the data): `else: continue` in gradient accumulation does not.
UPDATES = re.compile(r"\.grad\b|\.data\b|\.add_\(|\.sub_\(")
# Names whose attributes are settings, not a model (`SGD(model.parameters(), lr=args.lr)`).
SETTINGS = frozenset({"args", "opt", "opts", "hyp", "cfg", "config", "conf", "params", "hparams", "torch", "nn", "optim", "math"})
# apex's arguments per mode: the ModelZoo form (O2, a static loss scale, combined gradients on
# Ascend's apex), or O1 with a dynamic scale, which the conversion writes as torch.amp's defaults.
ARGUMENTS = {APEX: 'opt_level="O2", loss_scale=128.0, combine_grad=True', "torch": 'opt_level="O1"'}
EXITS = ("sys.exit", "exit", "quit", "os._exit")  # (a branch that ends the script reaches no step)


class Step(NamedTuple):
    backward: cst.SimpleStatementLine  # `loss.backward()`, a statement of its own
    loss: cst.BaseExpression
    optimizer: str  # the optimizer stepped after it, as the code names it


class Made(NamedTuple):
    anchor: cst.BaseStatement  # what amp.initialize goes after
    optimizer: str
    model: str  # what amp.initialize is given
    bound: str  # what its model is bound to ("_": apex casts and patches the model in place)
    note: str = ""  # what a person should still do there
    moved: str = ""  # the model's move to its device, put before amp.initialize (it is moved later)


class Inserted(NamedTuple):
    source: str
    changes: list[Change]
    steps: int  # training steps given AMP

    @property
    def changed(self) -> bool:
        return self.steps > 0


def mixed_precision_of(data: bytes) -> int | None:
    """The line where the file's own mixed precision shows (autocast, a scaler, half precision,
    apex, accelerate, DeepSpeed...), None where it has none: never a second AMP."""
    found = OWN_MIXED_PRECISION.search(data)
    return None if found is None else data.count(b"\n", 0, found.start()) + 1


def insert(text: str, mode: str) -> Inserted:
    """`text` with apex's AMP around each training step it can place it in (ARGUMENTS[mode]); the
    steps it cannot are rows saying why."""
    found = Read.of(text)
    optimizers = _optimizer_names(found)
    steps, changes = _steps(found, optimizers)
    if not steps:
        return Inserted(text, changes, 0)
    if (sharded := FSDP_SHARDS.search(text)) is not None:
        why = (f"the model is sharded with {sharded.group(0)}, whose mixed precision is its own: "
               f"{FSDP_PRECISION}")
        return Inserted(text, changes + [Change(found.line(s.backward), found.line(s.backward), NOTE.code,
                                                Operation.NOTE, f"not given mixed precision: {why}") for s in steps], 0)
    made, why = _made(found, {s.optimizer for s in steps}, optimizers, mode)
    if not made:
        line = found.line(steps[0].backward)
        return Inserted(text, changes + [Change(line, line, NOTE.code, Operation.NOTE,
                                                f"not given mixed precision: {why}")], 0)
    edits = Edits()
    for step in steps:
        edits.replace(step.backward, _scale_loss(step))
        line = found.line(step.backward)
        changes.append(Change(line, line, STEP.code, Operation.MODIFY, _step_message(found, step, mode)))
        changes.append(Change(line, line, NOTE.code, Operation.PERFORMANCE,  # (what analyze lists: the loops --amp changes)
                              f"this step trained in float32: --amp {mode} gives it mixed precision "
                              "(--amp off keeps float32)"))
    for anchor, group in _by_anchor(found, made).items():
        moves = [cst.parse_statement(f"{m}\n") for m in dict.fromkeys(m.moved for m in group if m.moved)]
        edits.insert_after(anchor, [*moves, _initialize(group, mode)])
        line = found.line(anchor)
        changes.append(Change(line, found.end_line(anchor), MADE.code, Operation.INSERT, _made_message(group, mode)))
        changes += [Change(line, line, NOTE.code, Operation.NOTE, m.note) for m in group if m.note]
    changes += _checkpoints(found, edits, {m.optimizer for m in made})
    changes += _resumes(found, edits, {m.optimizer for m in made} | {s.optimizer for s in steps})
    _import_amp(found, edits)
    return Inserted(edits.apply(found), sorted(changes), len(steps))


def _optimizer_names(found: Read) -> set[str]:
    """The names (and attributes) the file binds optimizers to (`optimizer = SGD(...)`)."""
    names = set()
    for call in calls(found.module):
        if is_optimizer_call(found, call):
            assign = _bound(found, call)
            if assign is not None and len(assign.targets) == 1:
                names.add(code(assign.targets[0].target))
    return names


def _bound(found: Read, call: cst.Call) -> cst.Assign | None:
    """The statement `name = call(...)` that binds `call`'s result, if that is what holds it."""
    statement = found.statement_of(call)
    assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
    return assign if isinstance(assign, cst.Assign) and assign.value is call else None


def _looks_like_optimizer(name: str, optimizers: set[str]) -> bool:
    last = name.rsplit(".", 1)[-1].lower()
    return name in optimizers or ("opt" in last and "sched" not in last and "option" not in last)


def _steps(found: Read, optimizers: set[str]) -> tuple[list[Step], list[Change]]:
    """Each `loss.backward()` statement with the optimizer stepped after it in the same function."""
    steps, notes = [], []
    for call in calls(found.module):
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"):
            continue
        if any(arg.keyword is None for arg in call.args):  # (engine.backward(loss): a library's own step)
            continue
        line = found.line(call)
        statement = found.statement_of(call)
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Expr) and statement.body[0].value is call):
            notes.append(Change(line, line, NOTE.code, Operation.NOTE,
                                f"not given mixed precision: {code(call)} is not a statement of its own"))
            continue
        step = _stepped_after(found, call, optimizers)
        why = f"no optimizer step follows {code(call)} in its function" if step is None else _other_update(found, step)
        if why:
            notes.append(Change(line, line, NOTE.code, Operation.NOTE, f"not given mixed precision: {why}"))
            continue
        steps.append(Step(statement, call.func.value, code(step.func.value)))
    return steps, notes


def _stepped_after(found: Read, backward: cst.Call, optimizers: set[str]) -> cst.Call | None:
    line = found.line(backward)
    later = [c for c in calls(found.scope_of(backward), into_scopes=False)
             if isinstance(c.func, cst.Attribute) and c.func.attr.value == "step" and not c.args
             and found.line(c) > line and _looks_like_optimizer(code(c.func.value), optimizers)]
    return min(later, key=found.line) if later else None


def _other_update(found: Read, step: cst.Call) -> str:
    """Why the gradients may be used without the optimizer's step (word_language_model's
    `if args.use_optimizer: optimizer.step() else: p.data.add_(p.grad, ...)`: scaled gradients
    there), "" where they are not."""
    node, statement = step, found.statement_of(step)
    while not isinstance(node, (cst.FunctionDef, cst.Module)):
        parent = found.parent(node)
        if isinstance(parent, cst.If) and parent.orelse is not None:
            other = parent.orelse if node is parent.body else parent.body
            if not any(code(c) == code(step) for c in calls(other, into_scopes=False)) and UPDATES.search(code(other)):
                return (f"beside {code(step)} under `if {code(parent.test)}:`, another branch updates the weights "
                        "without it (its gradients would be scaled)")
        node = parent
    return "" if statement is not None else "the step is not a statement"


def _made(found: Read, stepped: set[str], optimizers: set[str], mode: str) -> tuple[list[Made], str]:
    """Where each stepped optimizer is made, with its model: the optimizers of that name, or every
    optimizer the file makes where the step names a parameter (`def train(..., optimizer)`)."""
    wanted = stepped & optimizers or optimizers
    factories = _optimizer_factories(found)
    made = []
    for call in calls(found.module):
        if not is_optimizer_call(found, call):
            continue
        assign = _bound(found, call)
        if assign is None or code(assign.targets[0].target) not in wanted:
            continue
        statement = found.statement_of(call)
        name = code(assign.targets[0].target)
        if _factory_called(found, statement, name, factories):
            continue  # (amp goes where the factory's optimizer is bound: once)
        condition = _made_only_if(found, statement, name)
        if condition is not None:
            return [], f"{name} is made only under `if {condition}:` (amp would need it in every branch)"
        if _in_loop(found, statement):
            return [], (f"{name} is made anew inside a loop (each iteration), and amp takes an optimizer once: "
                        "make it once before the loop (setting its learning rate each step), then migrate again")
        model = _model_of(found, call)
        if model is None:
            return [], f"the model {name} trains is not known ({code(call.func)}(...) is given no model.parameters())"
        anchor = _anchor(found, statement, name, model)
        if mode != APEX:
            made.append(Made(anchor, name, model, model))
            continue
        one = _unwrapped(found, anchor, name, model)
        made.append(one._replace(moved=f"{model}.cuda()") if _moved_later(found, anchor, model) else one)
    if not made:
        return [], f"{', '.join(sorted(stepped))} is made in another file: add AMP where it is made and stepped"
    return made, ""


def _optimizer_factories(found: Read) -> set[str]:
    """The names of the file's functions whose result is bound like an optimizer where they are
    called (`optim = make_optim(model, lr)`)."""
    called = set()
    for call in calls(found.module):
        if isinstance(call.func, cst.Name) and is_optimizer_call(found, call) and _bound(found, call) is not None:
            called.add(call.func.value)
    return called


def _factory_called(found: Read, statement: cst.BaseStatement, name: str, factories: set[str]) -> bool:
    """Whether `statement` makes the optimizer a factory returns (`def make_optim(...): optim = SGD(...);
    return optim`) and the file calls that factory: amp.initialize goes after the call, not in it too
    (apex refuses an optimizer passed through it twice)."""
    scope = found.scope_of(statement)
    if not (isinstance(scope, cst.FunctionDef) and scope.name.value in factories):
        return False
    return any(isinstance(n, cst.Return) and n.value is not None and code(n.value) == name for n in _walk_statement(scope.body))


def _in_loop(found: Read, statement: cst.BaseStatement) -> bool:
    """Whether `statement` runs in a loop of its function (or of the module)."""
    node = found.parent(statement)
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
        if isinstance(node, (cst.For, cst.While)):
            return True
        node = found.parent(node)
    return False


def _unwrapped(found: Read, anchor: cst.BaseStatement, optimizer: str, model: str) -> Made:
    """apex's amp.initialize refuses a DataParallel or DistributedDataParallel model (the human ports
    initialize before they wrap): given `model.module` where the model is wrapped before the
    anchor, `getattr(model, "module", model)` where it is wrapped under a condition (apex casts and
    patches it in place, so nothing need be bound), with a note where the wrap may be DDP's."""
    wraps = _wraps(found, anchor, model)
    if not wraps:
        return Made(anchor, optimizer, model, model)
    if any(found.parent(s) is found.parent(anchor) for s, _ in wraps):
        return Made(anchor, optimizer, f"{model}.module", f"{model}.module")
    note = ""
    if any(wrapper != "DataParallel" for _, wrapper in wraps):
        note = (f"{model} may be DistributedDataParallel here, and Ascend's apex asks for amp.initialize before DDP "
                "wraps the model: move the wrap below it")
    return Made(anchor, optimizer, f'getattr({model}, "module", {model})', "_", note)


def _wraps(found: Read, anchor: cst.BaseStatement, model: str) -> list[tuple[cst.BaseStatement, str]]:
    """The statements that make `model` a DataParallel or DistributedDataParallel before `anchor`
    in its function, with the wrapper's name."""
    scope, line, wraps = found.scope_of(anchor), found.line(anchor), []
    for call in calls(scope, into_scopes=False):
        wrapper = (code(call.func) or "").rsplit(".", 1)[-1]
        if found.line(call) >= line or wrapper not in PARALLEL_WRAPPERS:
            continue
        statement = found.statement_of(call)
        assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if isinstance(assign, cst.Assign) and any(code(t.target) == model for t in assign.targets):
            wraps.append((statement, wrapper))
    return wraps


def _model_of(found: Read, call: cst.Call) -> str | None:
    """The model an optimizer is built over: the one name its arguments reach into (`model` in
    `SGD(model.parameters(), lr=args.lr)`, `net` in groups of `net.model0` and `net.cpm`), else the
    object whose parameters it takes (`self.model`), else the `model` the function or module binds."""
    roots = {_root(n) for arg in call.args for n in _walk_statement(arg.value) if isinstance(n, cst.Attribute)}
    roots = {r for r in roots if r is not None and r not in SETTINGS}
    if len(roots) == 1 and "self" not in roots:
        return roots.pop()
    owners = [code(owner) for owner in parameters_of(call, (cst.Name, cst.Attribute))]
    if owners:
        return owners[0]
    scope = found.scope_of(call)
    body = scope.body.body if isinstance(scope, cst.FunctionDef) else found.module.body
    parameters = [p.name.value for p in scope.params.params] if isinstance(scope, cst.FunctionDef) else []
    binds = "model" in parameters or any(isinstance(n, cst.AssignTarget) and code(n.target) == "model"
                                         for s in body for n in _walk_statement(s))
    return "model" if binds else None


def _root(node: cst.BaseExpression) -> str | None:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _walk_statement(statement: cst.CSTNode):
    stack = [statement]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(node.children)


def _made_only_if(found: Read, statement: cst.BaseStatement, name: str) -> str | None:
    """The test of an `if` (in the function or module) that `name` is made under with no branch
    that makes it otherwise; None where every branch makes it."""
    node = statement
    while not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
        parent = found.parent(node)
        elif_branch = isinstance(found.parent(parent), cst.If)  # (the chain is judged from its first if)
        if isinstance(parent, cst.If) and not elif_branch and not is_main_guard(parent) \
                and not _every_branch_assigns(parent, name):
            return code(parent.test)
        node = parent
    return None


def _every_branch_assigns(branch: cst.If, name: str) -> bool:
    """Every branch of an if/elif chain makes `name`: with an else, or a choice among two or more
    (`if args.opt == "sgd": ... elif args.opt == "adam": ...`: another value fails at its step anyway)."""
    branches = 0
    while isinstance(branch, cst.If):
        if not _assigns_or_leaves(branch.body, name):
            return False
        branches += 1
        branch = branch.orelse
    return _assigns_or_leaves(branch.body, name) if branch is not None else branches > 1


def _assigns_or_leaves(block: cst.BaseSuite, name: str) -> bool:
    """A branch that makes `name`, or one that never reaches the step (`else: raise NotImplementedError`,
    `return`, `sys.exit(1)`)."""
    last = block.body[-1] if block.body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    exits = isinstance(last, cst.Expr) and isinstance(last.value, cst.Call) and code(last.value.func) in EXITS
    return isinstance(last, (cst.Raise, cst.Return)) or exits or _assigns(block, name)


def is_main_guard(statement: cst.CSTNode) -> bool:
    """`if __name__ == "__main__":`: the script's top level, not a condition."""
    test = statement.test if isinstance(statement, cst.If) else None
    return (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and {code(test.left), code(test.comparisons[0].comparator).strip("'\"")} == {"__name__", "__main__"})


def _assigns(block: cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.AssignTarget) and code(n.target) == name for n in _walk_statement(block))


def _anchor(found: Read, statement: cst.BaseStatement, optimizer: str, model: str) -> cst.BaseStatement:
    """The statement amp.initialize goes after: the optimizer's, after the parameter groups added to
    it (YOLO's add_param_group), out of the if/else or try that chose it, and after the model is
    moved to its device where that comes later (Ascend's apex checks the parameters are there)."""
    while True:
        block = found.parent(statement)
        owner = found.parent(block) if isinstance(block, cst.IndentedBlock) else None
        if not isinstance(owner, (cst.If, cst.Else, cst.Try, cst.ExceptHandler, cst.Finally)) or is_main_guard(owner):
            break
        while not (isinstance(found.parent(owner), BLOCKS)):
            owner = found.parent(owner)
        statement = owner
    body = list(found.parent(statement).body)
    index = body.index(statement)
    while index + 1 < len(body) and _adds_groups(body[index + 1], optimizer):
        index += 1
    for later in range(index + 1, len(body)):
        if _trains(body[later], optimizer):
            break
        if _moves(body[later], model):
            index = later
    return body[index]


def _trains(statement: cst.BaseStatement, optimizer: str) -> bool:
    """A statement that trains or hands the optimizer on (`train(..., optimizer)`; a learning-rate
    schedule made over it does not)."""
    return any((isinstance(c.func, cst.Attribute) and c.func.attr.value in ("backward", "step"))
               or (any(code(a.value) == optimizer for a in c.args) and not SCHEDULES.search(code(c.func) or ""))
               for c in calls(statement, into_scopes=False))


def _moved_later(found: Read, anchor: cst.BaseStatement, model: str) -> bool:
    """Whether the model goes to its device only after `anchor` (`net = DataParallel(net).cuda()`
    before the loop): Ascend's apex checks that amp.initialize's model is there already."""
    line = found.line(anchor)
    for call in calls(found.scope_of(anchor), into_scopes=False):
        if found.line(call) <= line or not (isinstance(call.func, cst.Attribute) and call.func.attr.value in MOVES):
            continue
        moved = call.func.value
        if code(moved) == model or (isinstance(moved, cst.Call) and moved.args and code(moved.args[0].value) == model):
            return True
    return False


def _moves(statement: cst.BaseStatement, model: str) -> bool:
    """`model.cuda()`, `model.to(device)`, `model = model.cuda()`: the model moved to its device."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    if isinstance(small, cst.Assign) and not any(code(t.target) == model for t in small.targets):
        return False
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in MOVES and code(value.func.value) == model)


def _adds_groups(statement: cst.BaseStatement, optimizer: str) -> bool:
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "add_param_group"
               and code(c.func.value) == optimizer for c in calls(statement, into_scopes=False))


def _by_anchor(found: Read, made: list[Made]) -> dict[cst.BaseStatement, list[Made]]:
    """One amp.initialize per block, after the last optimizer made there (a GAN's two: apex takes
    them in one call, as lists)."""
    by_block: dict[cst.CSTNode, list[Made]] = {}
    for one in made:
        group = by_block.setdefault(found.parent(one.anchor), [])
        if all(m.optimizer != one.optimizer for m in group):
            group.append(one)
    grouped = {}
    for block, group in by_block.items():
        body = list(block.body)
        grouped[max((m.anchor for m in group), key=body.index)] = group
    return grouped


def _initialize(group: list[Made], mode: str) -> cst.SimpleStatementLine:
    given = list(dict.fromkeys(m.model for m in group))
    bound = list(dict.fromkeys(m.bound for m in group))
    model = given[0] if len(given) == 1 else f"[{', '.join(given)}]"
    target = bound[0] if len(bound) == 1 else f"[{', '.join(bound)}]"
    optimizer = group[0].optimizer if len(group) == 1 else f"[{', '.join(m.optimizer for m in group)}]"
    return cst.parse_statement(f"{target}, {optimizer} = amp.initialize({model}, {optimizer}, {ARGUMENTS[mode]})\n")


def _scale_loss(step: Step) -> cst.With:
    call = step.backward.body[0].value
    keywords = ", ".join(code(arg) for arg in call.args)
    new = cst.parse_statement(f"with amp.scale_loss({code(step.loss)}, {step.optimizer}) as {SCALED}:\n"
                              f"    {SCALED}.backward({keywords})\n")
    return new.with_changes(leading_lines=step.backward.leading_lines)


def _step_message(found: Read, step: Step, mode: str) -> str:
    loss = code(step.loss)
    if mode == APEX:
        return (f"{loss}.backward() -> with amp.scale_loss({loss}, {step.optimizer}) as {SCALED}: "
                f"{SCALED}.backward() (Ascend's apex, as the ModelZoo ports write it)")
    clipped = " after scaler.unscale_ before the gradients are clipped" if _clips_after(found, step) else ""
    return (f"mixed precision added: the forward pass that computes {loss} under torch.amp.autocast, "
            f"{loss}.backward() -> scaler.scale({loss}).backward(), {step.optimizer}.step() -> "
            f"scaler.step({step.optimizer}){clipped}, then scaler.update()")


def _clips_after(found: Read, step: Step) -> bool:
    line = found.line(step.backward)
    return any(code(c.func).rsplit(".", 1)[-1] in GRADIENT_CLIPS and found.line(c) > line
               for c in calls(found.scope_of(step.backward), into_scopes=False))


def _made_message(group: list[Made], mode: str) -> str:
    names = ", ".join(m.optimizer for m in group)
    if mode == APEX:
        return f"amp.initialize({ARGUMENTS[APEX]}) after {names} is made (Ascend's apex: install it)"
    return f"scaler = torch.amp.GradScaler(...) for {names}: the loss scaled so that half-precision gradients do not underflow"


def _checkpoints(found: Read, edits: Edits, optimizers: set[str]) -> list[Change]:
    """`"amp": amp.state_dict()` in each dict that saves an optimizer's state."""
    changes = []
    for node in walk(found.module):
        if not isinstance(node, cst.Dict):
            continue
        saved = [e for e in node.elements if isinstance(e, cst.DictElement) and _state_of(e.value, optimizers)]
        keys = {code(e.key).strip("'\"") for e in node.elements if isinstance(e, cst.DictElement)}
        if not saved or "amp" in keys:
            continue
        quote = code(saved[0].key)[0] if isinstance(saved[0].key, cst.SimpleString) else '"'
        element = cst.DictElement(cst.parse_expression(f"{quote}amp{quote}"), cst.parse_expression("amp.state_dict()"))
        elements = list(node.elements)
        at = elements.index(saved[-1]) + 1
        before = elements[at - 1]
        if before.comma is cst.MaybeSentinel.DEFAULT:  # (the last element, no trailing comma)
            elements[at - 1] = before.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elif at == len(elements):  # (the last, with a trailing comma: the new one goes on a line of its own too)
            earlier = elements[at - 2].comma if at >= 2 else None
            gap = earlier.whitespace_after if isinstance(earlier, cst.Comma) else cst.SimpleWhitespace(" ")
            elements[at - 1] = before.with_changes(comma=before.comma.with_changes(whitespace_after=gap))
            element = element.with_changes(comma=cst.Comma())
        else:  # (the comma after the optimizer's state, with its line break where the dict has one per line)
            element = element.with_changes(comma=before.comma)
        edits.replace(node, node.with_changes(elements=[*elements[:at], element, *elements[at:]]))
        line = found.line(node)
        changes.append(Change(line, found.end_line(node), SAVED.code, Operation.INSERT,
                              "the loss scaler's state saved beside the optimizer's (\"amp\")"))
    return changes


def _resumes(found: Read, edits: Edits, optimizers: set[str]) -> list[Change]:
    """`if "amp" in checkpoint: amp.load_state_dict(checkpoint["amp"])` after each
    `optimizer.load_state_dict(checkpoint["optimizer"])` (a checkpoint written before has none)."""
    changes = []
    for call in calls(found.module):
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "load_state_dict"
                and code(call.func.value) in optimizers and len(call.args) == 1
                and isinstance(call.args[0].value, cst.Subscript)):
            continue
        statement = found.statement_of(call)
        if not (isinstance(statement, cst.SimpleStatementLine) and isinstance(found.parent(statement), BLOCKS)):
            continue
        source = code(call.args[0].value.value)
        quote = "'" if code(call.args[0].value.slice[0]).startswith("'") else '"'
        edits.insert_after(statement, [cst.parse_statement(
            f"if {quote}amp{quote} in {source}:\n    amp.load_state_dict({source}[{quote}amp{quote}])\n")])
        line = found.line(statement)
        changes.append(Change(line, line, SAVED.code, Operation.INSERT, "the loss scaler's state restored with the "
                                                                   "optimizer's, where the checkpoint has it"))
    return changes


def _state_of(value: cst.BaseExpression, optimizers: set[str]) -> bool:
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "state_dict"
            and code(value.func.value) in optimizers)


def _import_amp(found: Read, edits: Edits) -> None:
    """`from apex import amp` after the module's top-level imports (before its first code where it has none)."""
    body = found.module.body
    imports = [s for s in body if is_import_line(s) and not is_future_import(s)]
    new = [cst.parse_statement("from apex import amp\n")]
    if imports:
        edits.insert_after(imports[-1], new)
        return
    first = next((s for s in body if not (is_docstring(s) or is_future_import(s))), None)
    if first is None:
        edits.append(found.module, new)
    else:
        edits.insert_before(first, new)
