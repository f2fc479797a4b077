"""DataParallel -> DDP; the model wrapped in DDP after it is on its device.

The model is the name whose `.parameters()` an optimizer is built over, else the name a
DataParallel wraps, else the model apex's `amp.initialize` or `convert_sync_batchnorm` is given.
The wrap goes after the last statement that prepares it (an assignment to the name, a move to
its device, apex, SyncBatchNorm) and before the first that trains it (a loop over it, a call
that is handed it), in the block where it is made. DDP must see the module on its device and
after apex has patched it; a module moved after the wrap would leave DDP's buckets behind.
"""

from __future__ import annotations

import libcst as cst

from torchport.apis.cuda_module import DEVICE_MOVES
from torchport.apis.distributed import CONVERT_SYNC_BATCHNORM, DDP_CLASSES
from torchport.distribute import names
from torchport.distribute.changes import MODEL, Change
from torchport.distribute.edits import (ASSIGNMENTS, Edits, Read, assigned_targets, calls, code, dotted, nodes, statements,
                                        walk)
from torchport.findings import Operation

DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                           "torch.nn.parallel.data_parallel.DataParallel"})
DATA_PARALLEL_FUNCTION = frozenset({"torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel"})
AMP_INITIALIZE = frozenset({"apex.amp.initialize"})
MOVES = frozenset({"to", "cuda", "half", "float", "double", "bfloat16", "type", "to_empty"})
# What a DDP wrapper answers itself; any other attribute of the wrapped name is the module's.
DDP_ATTRIBUTES = frozenset({
    "module", "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
    "modules", "named_modules", "train", "eval", "zero_grad", "to", "cuda", "half", "float", "double",
    "bfloat16", "apply", "requires_grad_", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "register_comm_hook", "no_sync", "training", "forward", "join",
    "type", "share_memory", "extra_repr"})
# Whether the model is on its device where it is wrapped: moved by a statement of the block
# itself, or only inside a compound one (`if use_cuda: net.cuda()`).
# NEVER: the file never moves it (another module may, after the wrap, which DDP cannot follow):
# the wrap moves it to this process's device first.
SURELY, MAYBE, NEVER = "surely", "maybe", "never"
STATE_DICT = frozenset({"state_dict", "load_state_dict"})
# Methods that set a module's weights in place, on each process its own way (a random init; a
# checkpoint, the same on every process, may be loaded after the wrap, through .module).
SETS_WEIGHTS = frozenset({"apply", "reset_parameters", "init_weights", "_init_weights"})
# Where the file shows buffers DDP should keep equal across processes: BatchNorm's running stats.
BATCHNORMS = frozenset({f"torch.nn.{kind}" for kind in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
                                                        "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d")})
SYNC_BATCHNORM = frozenset({"torch.nn.SyncBatchNorm", CONVERT_SYNC_BATCHNORM})
# Libraries whose models this file cannot see into (a torchvision ResNet has BatchNorm statistics).
MODEL_LIBRARIES = ("torchvision.models", "timm", "transformers", "diffusers", "torch.hub", "torchaudio.models",
                   "segmentation_models_pytorch", "monai.networks", "ultralytics")


def wrap_model(source: str, plan, options) -> tuple[str, list[Change]]:
    if not plan.single_card:
        return source, []
    found = Read.of(source)
    candidates = list(_candidates(found))
    if not candidates:
        held = _held_model(found)
        if held is not None:  # (an optimizer trains a model this step cannot rebind)
            plan.unwrapped = f"the model the optimizer trains is {held}, held in an attribute, which is not wrapped"
            line = next(found.line(c) for c in optimizer_calls(found))
            return source, [Change(line, line, MODEL.code, Operation.NOTE,
                                   f"{held} is held in an attribute: not wrapped in DistributedDataParallel; wrap it "
                                   "by hand where it is made, once it is on its device", names.DDP)]
        return source, _no_model(found)
    placed = next(((name, p) for name, anchor in candidates
                   if (p := _placement(found, name, anchor)) is not None), None)
    if placed is None:
        name, anchor = candidates[0]
        line = found.line(anchor)
        plan.unwrapped = f"{name} could not be wrapped in DistributedDataParallel (line {line})"
        return source, [Change(line, line, MODEL.code, Operation.NOTE,
                               f"{name} is not moved to its device where it is made, or is used as a container "
                               f"(iterated, indexed): wrap the model in DistributedDataParallel by hand once it is "
                               f"on its device", names.DDP)]
    name, placed = placed
    block, after, on_device = placed
    edits, changes = Edits(), []
    changes += _drop_data_parallel(found, edits, name, found.scope_of(after))
    buffers, why = _broadcast_buffers(found)
    keyword = "" if buffers else ", broadcast_buffers=False"
    if on_device == SURELY:
        wrap = f"{name} = {names.DDP}({name}, device_ids=[{names.LOCAL_RANK}]{keyword})\n"
        where = "once it is on its device"
    elif on_device == NEVER:
        wrap = f"{name} = {names.DDP}({name}.cuda(), device_ids=[{names.LOCAL_RANK}]{keyword})\n"
        where = ("moved to this process's device first: this file never moves it (a module it is handed to may, "
                 "after the wrap, which DDP cannot follow)")
    else:  # (device_ids on a module left on the CPU raises ValueError: DDP takes the module's own device)
        wrap = f"{name} = {names.DDP}({name}{keyword})\n"
        where = ("after the statements that prepare it, without device_ids: it is moved to its device only "
                 "under a condition, and DDP takes the device the module is on")
    edits.insert_after(after, statements(wrap))
    line = found.end_line(after)
    changes.append(Change(line, line, MODEL.code, Operation.INSERT,
                          f"{name} wrapped in DistributedDataParallel {where}; {why}", names.DDP))
    changes += _through_module(found, edits, name, block, after)
    changes += _other_models(found, edits, name, after, keyword, why)
    changes += _isinstance_tests(found, edits)
    changes += _functional(found, edits, name)
    return edits.apply(found), changes


def _other_models(found: Read, edits: Edits, first: str, first_after, keyword: str, why: str) -> list[Change]:
    """Every other model an optimizer of the file trains (a GAN's generator beside its
    discriminator) wrapped too: one left alone would train apart on each process."""
    changes, done, used = [], {first}, {id(first_after)}
    for name, anchor in _trained(found):
        if name in done:
            continue
        done.add(name)
        placed = _placement(found, name, anchor)
        if placed is None or id(placed[1]) in used:
            line = found.line(anchor)
            changes.append(Change(line, line, MODEL.code, Operation.NOTE,
                                  f"{name}, which an optimizer also trains, is not wrapped in DistributedDataParallel: "
                                  "wrap it by hand once it is on its device, or each process trains its own", names.DDP))
            continue
        block, after, on_device = placed
        used.add(id(after))
        ids = f", device_ids=[{names.LOCAL_RANK}]" if on_device == SURELY else ""
        moved = f"{name}.cuda()" if on_device == NEVER else name
        edits.insert_after(after, statements(f"{name} = {names.DDP}({moved}{ids}{keyword})\n"))
        line = found.end_line(after)
        changes.append(Change(line, line, MODEL.code, Operation.INSERT,
                              f"{name} wrapped in DistributedDataParallel as well (an optimizer trains it too); {why}",
                              names.DDP))
        changes += _through_module(found, edits, name, block, after)
    return changes


def _trained(found: Read):
    """(a model name, its optimizer's anchor) for each optimizer over `name.parameters()`."""
    for call in optimizer_calls(found):
        for owner in parameters_of(call, cst.Name):
            yield owner.value, _anchor(found, owner.value, call)


def _candidates(found: Read):
    """(a name that may hold the model, the statement that says so), likeliest first: what an
    optimizer is built over (`SGD(model.parameters())`, `make_optimizer(model)`), then what
    DataParallel, apex or SyncBatchNorm is handed."""
    for call in optimizer_calls(found):
        for owner in parameters_of(call, cst.Name):
            yield owner.value, _anchor(found, owner.value, call)
        for arg in call.args:
            if isinstance(arg.value, cst.Name):
                yield arg.value.value, _anchor(found, arg.value.value, call)
    for call in calls(found.module):
        names_ = found.qualified(call.func)
        if names_ & DATA_PARALLEL or names_ & AMP_INITIALIZE or CONVERT_SYNC_BATCHNORM in names_:
            target = _assigned_name(found, call)
            if target is not None:
                yield target, found.statement_of(call)


def _anchor(found: Read, name: str, call: cst.Call) -> cst.BaseStatement:
    """Where the optimizer over `name` is: its statement, or, where `name` is a global the
    function holding it never assigns (`def train(): optimizer = SGD(net.parameters())`), the
    top-level statement that holds that function, so the wrap goes where the global is made."""
    statement = found.statement_of(call)
    scope = found.scope_of(statement)
    if not isinstance(scope, cst.FunctionDef) or _binds(scope, name):
        return statement
    node = statement
    while node is not None and not isinstance(found.parent(node), cst.Module):
        node = found.parent(node)
    return node if node is not None else statement


def _binds(function: cst.FunctionDef, name: str) -> bool:
    """Whether `function` makes `name` one of its locals (an assignment to the bare name, a
    parameter), not a `name.attr = ...` of a global."""
    if any(p.name.value == name for p in function.params.params + function.params.kwonly_params
           + function.params.posonly_params):
        return True
    for node in walk(function.body, into_scopes=False):
        for target in assigned_targets(node, loops=True):
            if any(isinstance(n, cst.Name) and n.value == name
                   for n in _bare_names(target)):
                return True
    return False


def _bare_names(target: cst.BaseExpression):
    """The names a target binds: itself, or the elements of a tuple or list (not `a.b`, `a[i]`)."""
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _bare_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _bare_names(target.value)


def _held_model(found: Read) -> str | None:
    """`self.model` in `SGD(self.model.parameters())`: a model held in an attribute."""
    for call in optimizer_calls(found):
        for owner in parameters_of(call, cst.Attribute):
            return code(owner)
    return None


def optimizer_calls(found: Read):
    return (call for call in calls(found.module) if is_optimizer_call(found, call))


def parameters_of(optimizer: cst.Call, kind: type):
    """The `kind` nodes whose parameters `optimizer` is built over (`model` in `SGD(model.parameters())`)."""
    for inner in calls(optimizer):
        if inner is not optimizer and isinstance(inner.func, cst.Attribute) \
                and inner.func.attr.value in ("parameters", "named_parameters") and isinstance(inner.func.value, kind):
            yield inner.func.value


def is_optimizer_call(found: Read, call: cst.Call) -> bool:
    qualified = found.qualified(call.func)
    if any(q.startswith("torch.optim.") and "lr_scheduler" not in q and q.split(".")[-1][:1].isupper()
           for q in qualified):
        return True
    last = dotted(call.func)
    last = last.rsplit(".", 1)[-1] if last else ""
    return "optim" in last.lower() or last in ("SGD", "Adam", "AdamW", "LARS", "LAMB", "Lamb", "RMSprop", "Adagrad")


def _assigned_name(found: Read, call: cst.Call) -> str | None:
    """The name a DataParallel / apex / SyncBatchNorm call's model ends up in (`model = DP(model)`)."""
    statement = found.statement_of(call)
    if not (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign)):
        return None
    target = statement.body[0].targets[0].target
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, (cst.Tuple, cst.List)) and target.elements and isinstance(target.elements[0].value, cst.Name):
        return target.elements[0].value.value  # model, optimizer = amp.initialize(model, optimizer)
    return None


def _placement(found: Read, name: str, anchor: cst.BaseStatement):
    """(block, the statement to wrap after, whether it is on its device) or None. The block is
    the one the model is first made in (an `if args.fp16:` that hands it to apex is only a step
    of its preparation), among those that hold the anchor."""
    first = _first_assignment(found, name, anchor)
    if first is None:
        return None
    made_in = {id(block) for block, _ in found.enclosing_blocks(first)}
    for block, holder in found.enclosing_blocks(anchor):
        if id(block) not in made_in:
            continue
        body = list(block.body)
        stop = body.index(holder)
        last, on_device = None, ""
        for index, statement in enumerate(body):
            if index > stop and _trains(found, statement, name):
                break
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue  # (a definition runs nothing where it stands)
            if _prepares(found, statement, name):
                last = statement
                if _moves(found, statement, name):
                    surely = isinstance(statement, cst.SimpleStatementLine)
                    on_device = SURELY if surely or on_device == SURELY else MAYBE
        if last is None or _used_as_container(found, block, name):
            return None
        on_device = on_device or (NEVER if not _moved_anywhere(found, name) else "")
        return (block, last, on_device) if on_device else None
    return None


def _first_assignment(found: Read, name: str, anchor: cst.BaseStatement) -> cst.BaseStatement | None:
    """The first statement that assigns `name` in the function (or module) the anchor is in."""
    scope = found.scope_of(anchor)
    body = scope if isinstance(scope, cst.Module) else scope.body
    for node in walk(body, into_scopes=False):
        if isinstance(node, cst.BaseStatement) and isinstance(found.parent(node), (cst.Module, cst.IndentedBlock)) \
                and isinstance(node, cst.SimpleStatementLine) and _assigns(node, name):
            return node
    return None


def _moved_anywhere(found: Read, name: str) -> bool:
    """Whether any statement of the file moves `name` (a move in another block, after the wrap's
    place, leaves the wrap where it cannot be placed)."""
    return any(_moves(found, found.statement_of(c), name) for c in calls(found.module)
               if isinstance(c.func, cst.Attribute) and c.func.attr.value in DEVICE_MOVES)


def _used_as_container(found: Read, block, name: str) -> bool:
    """`for layer in layers`, `layers[0]`, `enumerate(layers)`: a ModuleList whose forward is never
    called, which a DDP wrapper would hide."""
    for node in walk(block, into_scopes=False):
        if isinstance(node, cst.For) and dotted(node.iter) == name:
            return True
        if isinstance(node, cst.Subscript) and dotted(node.value) == name:
            return True
        if isinstance(node, cst.Call) and dotted(node.func) in ("enumerate", "zip", "len", "iter", "reversed", "list") \
                and any(dotted(a.value) == name for a in node.args):
            return True
    return False


def _assigns(statement: cst.CSTNode, name: str) -> bool:
    for node in nodes(statement, *ASSIGNMENTS, into_scopes=False):
        for target in assigned_targets(node):
            if any(isinstance(n, cst.Name) and n.value == name for n in walk(target)):
                return True
    return False


def _prepares(found: Read, statement: cst.BaseStatement, name: str) -> bool:
    """An assignment to the model (not a `model = model.load_state_dict(...)`), a move of it, or
    a change of its weights in place (`model.apply(weights_init)`): DDP
    broadcasts rank 0's weights when it wraps, so each process's own initialisation must come first."""
    if _moves(found, statement, name) or _sets_weights(statement, name):
        return True
    if not _assigns(statement, name):
        return False
    return not any(isinstance(c.func, cst.Attribute) and c.func.attr.value in STATE_DICT
                   and dotted(c.func.value) == name for c in calls(statement, into_scopes=False))


def _sets_weights(statement: cst.BaseStatement, name: str) -> bool:
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value in SETS_WEIGHTS and dotted(c.func.value) == name
               for c in calls(statement, into_scopes=False))


def _moves(found: Read, statement: cst.BaseStatement, name: str) -> bool:
    """Whether the statement puts the model on its device (or hands it to apex, which needs it there)."""
    for call in calls(statement, into_scopes=False):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in DEVICE_MOVES:
            receiver = call.func.value
            while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
                receiver = receiver.func.value
            if dotted(receiver) == name or _assigns(statement, name):  # model.cuda(), model = Net().cuda()
                return True
        if found.qualified(call.func) & AMP_INITIALIZE:
            return True
    return False


def _trains(found: Read, statement: cst.BaseStatement, name: str) -> bool:
    """The first statement that uses the model to train: a loop over it, a call handed it."""
    if _prepares(found, statement, name):
        return False
    for node in walk(statement, into_scopes=False):
        if isinstance(node, (cst.For, cst.While)) and any(
                isinstance(n, cst.Name) and n.value == name for n in walk(node, into_scopes=False)):
            return True
        if isinstance(node, cst.Call) and dotted(node.func) != "print" and (
                dotted(node.func) == name or any(dotted(a.value) == name for a in node.args)):
            return True
    return False


def _drop_data_parallel(found: Read, edits: Edits, name: str, scope) -> list[Change]:
    """`nn.DataParallel(x, ...)` of the model becomes `x` (the DDP wrap takes its place); another
    DataParallel (another function's model) is kept, with a row."""
    changes = []
    for call in calls(found.module):
        if not (found.qualified(call.func) & DATA_PARALLEL and call.args):
            continue
        inner = call.args[0].value
        statement = found.statement_of(call)
        line = found.line(call)
        if found.scope_of(call) is not scope or _assigned_name(found, call) != name:
            changes.append(Change(line, line, MODEL.code, Operation.NOTE,
                                  f"DataParallel kept: not the model wrapped in DistributedDataParallel ({name}); "
                                  "one process runs it on its one device", "torch.nn.DataParallel"))
            continue
        if _is_self_assignment(statement, call, inner):
            holder = found.parent(statement)
            removable = found.parent(holder)
            if isinstance(removable, cst.If) and len(holder.body) == 1 and removable.orelse is None \
                    and isinstance(found.parent(removable), (cst.Module, cst.IndentedBlock)):
                edits.remove(removable)  # `if torch.cuda.device_count() > 1: model = nn.DataParallel(model)`
            else:
                edits.remove(statement)
        else:
            edits.replace(call, inner.with_changes(lpar=call.lpar, rpar=call.rpar) if call.lpar else inner)
        changes.append(Change(line, line, MODEL.code, Operation.DELETE if _is_self_assignment(statement, call, inner)
                              else Operation.MODIFY,
                              f"DataParallel dropped: {name} is wrapped in DistributedDataParallel instead, one "
                              "process per device", "torch.nn.DataParallel"))
    return changes


def _is_self_assignment(statement, call: cst.Call, inner: cst.BaseExpression) -> bool:
    """`model = nn.DataParallel(model)`: nothing is left of the line once DataParallel goes."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and statement.body[0].value is call):
        return False
    target = statement.body[0].targets
    return len(target) == 1 and isinstance(inner, cst.Name) and dotted(target[0].target) == inner.value


def _broadcast_buffers(found: Read) -> tuple[bool, str]:
    """Whether DDP must keep broadcasting buffers, and the words saying why (or why not)."""
    syncs = any(found.qualified(c.func) & SYNC_BATCHNORM for c in calls(found.module))
    for call in calls(found.module):
        names_ = found.qualified(call.func)
        if names_ & BATCHNORMS and not syncs:
            kind = sorted(names_ & BATCHNORMS)[0].rsplit(".", 1)[-1]
            return True, (f"buffers still broadcast: a {kind} in this file keeps running statistics each "
                          "process would otherwise keep apart")
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "register_buffer":
            return True, ("buffers still broadcast: a register_buffer in this file may hold state the "
                          "processes must share")
        library = next((n for n in names_ for prefix in MODEL_LIBRARIES
                        if n == prefix or n.startswith(f"{prefix}.")), None)
        if library is not None and not syncs:
            return True, (f"buffers still broadcast: {library} makes a model this file cannot see into "
                          "(BatchNorm statistics, say), which each process would otherwise keep apart")
    return False, "broadcast_buffers=False: no BatchNorm statistics or registered buffers in this file to share"


def _through_module(found: Read, edits: Edits, name: str, block, after) -> list[Change]:
    """After the wrap, what belongs to the model, not to DDP (its state dict, its own methods and
    attributes) is read through `.module`, so checkpoints stay those of the single-card script."""
    changes = []
    body = list(block.body)
    for statement in body[body.index(after) + 1:]:
        for node in walk(statement, into_scopes=False):
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == name \
                    and node.attr.value not in DDP_ATTRIBUTES and not _is_assigned_attribute(found, node):
                # (dot given: LibCST's default is one Dot for every Attribute, which a tree would hold twice)
                edits.replace(node.value, cst.Attribute(cst.Name(name), cst.Name("module"), dot=cst.Dot()))
                changes.append(Change(found.line(node), found.line(node), MODEL.code, Operation.MODIFY,
                                      f"{name}.{node.attr.value} -> {name}.module.{node.attr.value}: the model's "
                                      "own, not the DDP wrapper's", names.DDP))
    return changes


def _is_assigned_attribute(found: Read, node: cst.Attribute) -> bool:
    parent = found.parent(node)
    return isinstance(parent, cst.AssignTarget) and parent.target is node


def _isinstance_tests(found: Read, edits: Edits) -> list[Change]:
    """`isinstance(m, nn.DataParallel)` (unwrapping `.module`) holds for the DDP wrapper too."""
    changes = []
    for call in calls(found.module):
        if dotted(call.func) != "isinstance" or len(call.args) != 2:
            continue
        kinds = call.args[1].value
        elements = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
        qualified = [found.qualified(e) for e in elements]
        if any(q & DATA_PARALLEL for q in qualified) and not any(q & DDP_CLASSES for q in qualified):
            both = cst.parse_expression(f"({', '.join(code(e) for e in elements)}, {names.DDP})")
            edits.replace(kinds, both)
            changes.append(Change(found.line(call), found.line(call), MODEL.code, Operation.MODIFY,
                                  "the DataParallel test also holds for the DistributedDataParallel wrapper", names.DDP))
    return changes


def _functional(found: Read, edits: Edits, name: str) -> list[Change]:
    """`nn.parallel.data_parallel(model, inputs)` runs the model once per device in one process:
    on the wrapped model it is a call of the DDP wrapper (each process runs its own device)."""
    changes = []
    for call in calls(found.module):
        if not found.qualified(call.func) & DATA_PARALLEL_FUNCTION or len(call.args) < 2:
            continue
        module, inputs = call.args[0].value, call.args[1].value
        line = found.line(call)
        if dotted(module) != name:
            changes.append(Change(line, line, MODEL.code, Operation.NOTE,
                                  f"data_parallel of {code(module)}, which is not the wrapped model: it still runs "
                                  "one process over the devices; wrap that module in DDP by hand", "torch.nn.parallel.data_parallel"))
            continue
        args = [cst.Arg(e.value) for e in inputs.elements] if isinstance(inputs, cst.Tuple) else [cst.Arg(inputs)]
        kwargs = next((a for a in call.args if a.keyword is not None and a.keyword.value == "module_kwargs"), None)
        if kwargs is not None:
            args.append(cst.Arg(kwargs.value, star="**"))
        edits.replace(call, cst.Call(cst.Name(name), args=args))
        changes.append(Change(line, line, MODEL.code, Operation.MODIFY,
                              f"data_parallel({name}, ...) -> {name}(...): the DDP wrapper runs this process's "
                              "device", "torch.nn.parallel.data_parallel"))
    return changes


def _no_model(found: Read) -> list[Change]:
    return [Change(1, 1, MODEL.code, Operation.NOTE,
                   "no model found to wrap in DistributedDataParallel (no optimizer over a model's parameters, "
                   "no DataParallel): wrap the model by hand, or its gradients are not averaged", names.DDP)]
