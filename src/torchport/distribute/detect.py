"""Which files --distributed changes, and what it must know of one before the steps run.

A file is changed when it is a training entry script (it runs as a program: a `__main__` guard,
or statements at its top level that train) and is not distributed already. Already distributed:
it starts a process group itself, wraps a model in DDP, or reads the launcher's rank
(`LOCAL_RANK`, `--local_rank`); such a file is left alone (a TP200 row says why), except for its
`mp.spawn`, which becomes one process per device under the launcher (spawn.py).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import libcst as cst

from torchport.apis.distributed import DDP_CLASSES, MAKES_GROUP, SPAWNS
from torchport.distribute.changes import NOTE, Change
from torchport.distribute.edits import Read, calls, dotted, nodes, walk
from torchport.findings import Operation
from torchport.pyast import dotted_name, parse_quietly

# Libraries that start and wrap the processes themselves: a script built on one is theirs to distribute.
OWN_LAUNCHERS = {
    "accelerate.Accelerator": "accelerate's Accelerator",
    "deepspeed.initialize": "DeepSpeed",
    "horovod.torch.init": "Horovod",
    "pytorch_lightning.Trainer": "Lightning's Trainer",
    "lightning.Trainer": "Lightning's Trainer",
    "lightning.pytorch.Trainer": "Lightning's Trainer",
}
LAUNCHER_RANK = ("LOCAL_RANK", "--local_rank", "--local-rank")
# Calls that start, group or wrap processes: a file that makes one may be distributed already.
_DISTRIBUTING = SPAWNS | MAKES_GROUP | DDP_CLASSES | frozenset(OWN_LAUNCHERS)
_OPTIMIZER = re.compile(r"torch\.optim\.[A-Z]\w*$")
# Words without which a file neither trains nor spawns (an optimizer, a step, backward, spawn).
_MAY_TRAIN = re.compile(r"optim|\bstep\b|backward|spawn|start_processes")
IMPORTED_TRAINER = ("it trains inside functions but runs nothing itself (a module the entry script imports; that "
                    "script gets the process group): only its saving and printing go to rank 0")
TRAINS_NOTHING = ("left as it was: what its __main__ block runs trains nothing in this file (no optimizer, no step in "
                  "a loop): not taken for a training entry script (an evaluation, inference or export script; name "
                  "it with --entry if it is one)")


@dataclass
class Plan:
    entry: bool = False  # a training entry script
    already: str = ""  # why the file counts as distributed already ("" when it does not)
    spawns: bool = False  # it starts its processes with mp.spawn / start_processes
    main_guard: bool = False  # it has `if __name__ == "__main__":` (the setup goes at its top)
    notes: list[Change] = field(default_factory=list)  # rows about the file as a whole (TP200)
    # Why the model step wrapped no model in DDP ("" when it did): then no loader is sharded, or
    # N processes would train N models apart, each on 1/N of the data.
    unwrapped: str = ""
    # A module that trains in functions another file calls (SimCLR's simclr.py): it gets rank 0
    # saving and printing only, with RANK read from the launcher's environment.
    trainer_module: bool = False

    @property
    def to_distribute(self) -> bool:
        return self.entry and (not self.already or self.spawns)

    @property
    def single_card(self) -> bool:
        """The steps that make one process of many (setup, loaders, DDP, rank 0) run: an entry
        script not distributed already."""
        return self.entry and not self.already


def read(found: Read, options) -> Plan:
    """What the steps need to know of `found`'s module (`options.entry` overrides the entry guess)."""
    if options.entry is None:  # (no LibCST tree to build where `ast` shows nothing trains: most of a tree's files)
        tree = parse_quietly(found.text)
        if not _MAY_TRAIN.search(found.text) or (tree is not None and _trains_nowhere(found, tree)):
            return _trains_nothing(found, tree)
    found.layout  # (lines, parents and children at once: the walks below would each ask LibCST for children)
    guard = main_guard(found.module)
    plan = Plan(main_guard=guard is not None)
    spawn_calls = [c for c in calls(found.module) if found.is_api(c.func, SPAWNS)]
    spawn_lines = [found.line(c) for c in spawn_calls]
    plan.already, already_line = _already(found)
    if spawn_lines and not plan.already:
        plan.notes.append(Change(spawn_lines[0], spawn_lines[0], NOTE.code, Operation.NOTE,
                                 "left as it was: it starts processes with mp.spawn but makes no process group "
                                 "(they share memory, or a module it imports groups them): not a DDP script"))
        return plan
    if options.entry is not None:
        plan.entry = bool(options.entry)
    else:
        plan.entry = _is_entry(found, guard, spawn_calls, plan.notes)
        plan.trainer_module = not plan.entry and any(n.message == IMPORTED_TRAINER for n in plan.notes)
    plan.spawns = bool(spawn_lines) and bool(plan.already)
    if plan.already and plan.entry:
        tail = " except its mp.spawn (the launcher starts the processes)" if plan.spawns else ""
        plan.notes.append(Change(already_line, already_line, NOTE.code, Operation.NOTE,
                                 f"left as it was{tail}: distributed already ({plan.already})"))
    return plan


def _trains_nowhere(found: Read, tree: ast.Module) -> bool:
    """Whether `ast` shows that no call in the file builds an optimizer, steps one, calls backward,
    spawns processes, makes them a group, wraps a model in DDP or hands the run to a launcher of its
    own, and that no string names the launcher's rank: then what `read` finds is what
    `_trains_nothing` finds. (A call through a name only a scope analysis can resolve (a name
    bound to torch in one scope and otherwise in another) may be any of these: LibCST reads it.)"""
    table = found.imports(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("backward", "step"):
                return False
            name = dotted_name(node.func)
            if name is None:
                continue
            if name.partition(".")[0] in table.ambiguous:
                return False
            api = table.qualified_name(name)
            if api is not None and (api in _DISTRIBUTING or _OPTIMIZER.match(api)):
                return False
        elif isinstance(node, ast.Constant) and node.value in LAUNCHER_RANK:
            return False
    return True


def _trains_nothing(found: Read, tree: ast.Module | None) -> Plan:
    """The plan of a file in which nothing trains (no word of training, or `_trains_nowhere`),
    read with `ast` (LibCST's tree where `ast` cannot read it: newer syntax than this Python's)."""
    if tree is None:
        guard = main_guard(found.module)
        line = found.line(guard) if guard is not None and _imports_torch(found.module) else 0
    else:
        guard = next((s for s in tree.body if isinstance(s, ast.If) and _is_main_test_ast(s.test)), None)
        line = guard.lineno if guard is not None and _ast_imports_torch(tree) else 0
    plan = Plan(main_guard=guard is not None)
    if line:
        plan.notes.append(Change(line, line, NOTE.code, Operation.NOTE, TRAINS_NOTHING))
    return plan


def _is_main_test_ast(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either way round), as _is_main_test reads LibCST's tree."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return {getattr(side, "id", None) if isinstance(side, ast.Name) else side.value if isinstance(side, ast.Constant)
            and isinstance(side.value, str) else None for side in sides} == {"__name__", "__main__"}


def _ast_imports_torch(tree: ast.Module) -> bool:
    """Whether the file imports torch anywhere, as _imports_torch reads LibCST's tree."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] == "torch":
            return True
    return False


def main_guard(module: cst.Module) -> cst.If | None:
    """The top-level `if __name__ == "__main__":`, if there is one."""
    for statement in module.body:
        if isinstance(statement, cst.If) and _is_main_test(statement.test):
            return statement
    return None


def _is_main_test(test: cst.BaseExpression) -> bool:
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = {_text(test.left), _text(target.comparator)}
    return sides == {"__name__", "__main__"}


def _text(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    return None


def _already(found: Read) -> tuple[str, int]:
    """Why the file is distributed already, and the line that shows it ("", 0: it is not)."""
    for node in nodes(found.module, cst.Call, cst.SimpleString):
        if type(node) is cst.Call:
            names = found.qualified(node.func)
            if names & MAKES_GROUP:
                return f"it makes its process group, line {found.line(node)}", found.line(node)
            if names & DDP_CLASSES:
                return f"it wraps a model in DistributedDataParallel, line {found.line(node)}", found.line(node)
            for api, what in OWN_LAUNCHERS.items():
                if api in names:
                    return f"{what} starts and wraps its processes, line {found.line(node)}", found.line(node)
        elif node.evaluated_value in LAUNCHER_RANK:
            return f"it reads the launcher's {node.evaluated_value}, line {found.line(node)}", found.line(node)
    return "", 0


def _is_entry(found: Read, guard: cst.If | None, spawns: list[cst.Call], notes: list[Change]) -> bool:
    """A training entry script: what runs when the file runs (its top-level statements, its
    `__main__` block, and the functions and classes of the file these reach) builds an optimizer
    or steps one in a loop. An evaluation, inference, export or serving script that reads a
    command line does not; nor does a module whose training functions only another file calls."""
    module = found.module
    if not _imports_torch(module):
        return False
    if any(isinstance(found.scope_of(c), cst.Module) for c in spawns):
        return True  # it starts its training processes itself
    top_level = [s for s in module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s is not guard]
    runs = [*top_level, *([guard] if guard is not None else [])]
    if any(_trains(found, node, into_scopes=True) for node in reached(module, runs)):
        return True
    trains = bool(spawns) or _trains(found, module, into_scopes=True)
    if guard is not None:
        notes.append(Change(found.line(guard), found.line(guard), NOTE.code, Operation.NOTE, TRAINS_NOTHING))
    elif trains:
        line = next((found.line(c) for c in [*spawns, *calls(module)] if c in spawns or _is_training_call(found, c)), 1)
        notes.append(Change(line, line, NOTE.code, Operation.NOTE, IMPORTED_TRAINER))
    return False


def reached(module: cst.Module, roots: list[cst.CSTNode]) -> list[cst.CSTNode]:
    """`roots` and the top-level functions and classes of `module` they name, and those these
    name in turn (a class: its whole body, methods included)."""
    defined = {s.name.value: s for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    seen, todo, out = set(), list(roots), []
    while todo:
        node = todo.pop()
        out.append(node)
        for inner in walk(node):
            if isinstance(inner, cst.Name) and inner.value in defined and inner.value not in seen:
                seen.add(inner.value)
                todo.append(defined[inner.value])
    return out


def _imports_torch(module: cst.Module) -> bool:
    for node in nodes(module, cst.Import, cst.ImportFrom):
        if isinstance(node, cst.Import) and any(dotted(a.name).split(".")[0] == "torch" for a in node.names):
            return True
        if isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative \
                and dotted(node.module).split(".")[0] == "torch":
            return True
    return False


def _trains(found: Read, node: cst.CSTNode, into_scopes: bool) -> bool:
    """Whether `node` builds an optimizer, or runs a loop that calls backward() or step()."""
    for inner in walk(node, into_scopes):
        if isinstance(inner, cst.Call) and _is_optimizer(found, inner):
            return True
        if isinstance(inner, (cst.For, cst.While)) and any(
                _is_backward_or_step(c) for c in calls(inner, into_scopes)):
            return True
    return False


def _is_training_call(found: Read, call: cst.Call) -> bool:
    return _is_optimizer(found, call) or _is_backward_or_step(call)


def _is_optimizer(found: Read, call: cst.Call) -> bool:
    return any(_OPTIMIZER.match(name) for name in found.qualified(call.func))


def _is_backward_or_step(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in ("backward", "step")
