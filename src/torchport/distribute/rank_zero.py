"""Checkpoints saved and progress printed on rank 0 only; a barrier before a checkpoint is read back.

N processes that each save write N times over one file (and race); N that each print say every
line N times. Rank 0 does both for all. A process that reads back a checkpoint the script saves
waits at a barrier first, so that it reads what rank 0 has finished writing.
"""

from __future__ import annotations

import libcst as cst

from torchport.distribute import names
from torchport.distribute.changes import RANK_ZERO_ONLY, Change
from torchport.distribute.edits import (BLOCKS, Edits, Read, calls, code, dotted, import_missing, is_import_line, nodes,
                                        statements, walk)
from torchport.findings import Operation

SAVE = frozenset({"torch.save"})
LOAD = frozenset({"torch.load"})
TQDM = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.std.tqdm", "tqdm.notebook.tqdm", "tqdm.rich.tqdm",
                  "tqdm.trange", "tqdm.auto.trange", "tqdm.std.trange", "tqdm.tqdm.tqdm", "tqdm.auto.tqdm.tqdm"})
LOG_LEVELS = ("info", "debug")
RANK_ZERO = f"{names.RANK} == 0"
BARRIER = "torch.distributed.barrier()\n"
CHECKPOINT_WORDS = ("checkpoint", "ckpt", "resume", "state_dict", "best", "model", ".pt", ".pth")


def rank_zero(source: str, plan, options) -> tuple[str, list[Change]]:
    if not plan.single_card:
        return source, []
    found = Read.of(source)
    edits, changes = Edits(), []
    savers = _save_like_functions(found.module)
    private = _private_paths(found)
    saves = False
    for node in nodes(found.module, *BLOCKS, cst.Call):
        if isinstance(node, BLOCKS):
            found_saves, rows = _guard_runs(found, edits, node, savers, private)
            saves = saves or found_saves
            changes += rows
        elif isinstance(node, cst.Call):
            changes += _quiet_tqdm(found, edits, node)
    if saves:
        changes += _barriers(found, edits, savers, private)
    return edits.apply(found), changes


# A module that another file's process group runs reads its rank from the launcher itself.
MODULE_RANK = f'{names.RANK} = int(os.environ.get("{names.RANK}", 0))  # torchport --distributed: this process\'s rank (rank 0 saves and prints)\n'


def in_trainer_module(source: str, options) -> tuple[str, list[Change]]:
    """Rank 0 alone saves and prints in a module that trains for the entry script (detect.py's
    trainer_module), which binds RANK from the environment after its imports."""
    from torchport.distribute.detect import Plan

    text, changes = rank_zero(source, Plan(entry=True), options)
    if not any(c.operation.is_change for c in changes):
        return source, changes
    found = Read.of(text)
    if names.RANK in {n.value for n in walk(found.module) if isinstance(n, cst.Name) and _binds_at_top(found, n)}:
        return source, [Change(1, 1, RANK_ZERO_ONLY.code, Operation.NOTE,
                               f"{names.RANK} is a name of this module already: its saving and printing are left to "
                               "every process", "")]
    edits = Edits()
    missing, _ = import_missing(found, edits, ("os",))
    anchor = _last_top_import(found.module)
    if anchor is None:
        edits.insert_before(found.module.body[0], statements(MODULE_RANK))
    else:
        edits.insert_after(anchor, statements(MODULE_RANK))
    line = found.end_line(anchor) if anchor is not None else 1
    rows = [Change(line, line, RANK_ZERO_ONLY.code, Operation.INSERT,
                   f"{names.RANK} read from the launcher's environment: this module's saving and printing go to rank 0 "
                   "(the entry script makes the process group)", "")]
    return edits.apply(found), changes + rows


def _binds_at_top(found: Read, name: cst.Name) -> bool:
    parent = found.parent(name)
    return isinstance(parent, cst.AssignTarget) and isinstance(found.scope_of(name), cst.Module)


def _last_top_import(module: cst.Module):
    last = None
    for statement in module.body:
        if is_import_line(statement):
            last = statement
    return last


def _save_like_functions(module: cst.Module) -> set[str]:
    """The script's own functions whose name says they save a checkpoint or a model."""
    return {n.name.value for n in nodes(module, cst.FunctionDef) if _is_save_like(n.name.value)}


def _is_save_like(name: str) -> bool:
    lowered = name.lower()
    return "save_pretrained" in lowered or ("save" in lowered and any(w in lowered for w in ("checkpoint", "ckpt", "model")))


def _kind(found: Read, statement: cst.BaseStatement, savers: set[str], private: set[str]) -> str:
    """"save", "print" or "" for a statement that is one call rank 0 alone should make."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.Call)):
        return ""
    call = statement.body[0].value
    if found.qualified(call.func) & SAVE:
        if _in_function(found, statement, savers) or (len(call.args) > 1 and _mentions(call.args[1].value, private)):
            return ""  # (a file in a folder of this process's own is no race: each process keeps its own)
        return "save"
    name = dotted(call.func) or (call.func.attr.value if isinstance(call.func, cst.Attribute) else "")
    last = name.rsplit(".", 1)[-1]
    if _is_save_like(last) and not _in_function(found, statement, savers):
        return "save"
    if name == "print":
        return "" if any(a.keyword is not None and a.keyword.value == "file" for a in call.args) else "print"
    if isinstance(call.func, cst.Attribute) and last in LOG_LEVELS:
        receiver = dotted(call.func.value) or ""
        if "log" in receiver.rsplit(".", 1)[-1].lower():
            return "print"
    return ""


def _private_paths(found: Read) -> set[str]:
    """Names that hold a path each process makes for itself (`tempfile.mkdtemp()`, and names
    built from those): a checkpoint there is each process's own, saved and read by it alone."""
    assigns = [n for n in nodes(found.module, cst.Assign) if len(n.targets) == 1
               and isinstance(n.targets[0].target, cst.Name)]
    private = {a.targets[0].target.value for a in assigns
               if any(q.startswith("tempfile.") for c in calls(a.value) for q in found.qualified(c.func))}
    for _ in range(2):  # ckpt_dir = mkdtemp(); ckpt_path = os.path.join(ckpt_dir, "best.pt")
        private |= {a.targets[0].target.value for a in assigns if _mentions(a.value, private)}
    return private


def _mentions(node: cst.CSTNode, names_: set[str]) -> bool:
    return bool(names_) and any(isinstance(n, cst.Name) and n.value in names_ for n in walk(node))


def _in_function(found: Read, statement: cst.CSTNode, savers: set[str]) -> bool:
    """Inside one of the script's save-like functions, whose calls are the ones guarded."""
    scope = found.scope_of(statement)
    while scope is not None and not isinstance(scope, cst.Module):
        if isinstance(scope, cst.FunctionDef) and scope.name.value in savers and _is_called(found, scope.name.value):
            return True
        scope = found.scope_of(scope)
    return False


def _is_called(found: Read, name: str) -> bool:
    return any(dotted(c.func) is not None and dotted(c.func).rsplit(".", 1)[-1] == name for c in calls(found.module))


def _guard_runs(found: Read, edits: Edits, block, savers: set[str], private: set[str]) -> tuple[bool, list[Change]]:
    """Each run of consecutive saves and prints in `block` under one `if RANK == 0:`."""
    changes, saves, run = [], False, []
    for statement in [*block.body, None]:
        kind = _kind(found, statement, savers, private) if statement is not None else ""
        if kind:
            run.append((statement, kind))
            saves = saves or kind == "save"
            continue
        if run:
            changes.append(_guard(found, edits, run))
            run = []
    return saves, changes


def _guard(found: Read, edits: Edits, run) -> Change:
    first, last = run[0][0], run[-1][0]
    body = [s.with_changes(leading_lines=[]) if i == 0 else s for i, (s, _) in enumerate(run)]
    guarded = cst.If(test=cst.parse_expression(RANK_ZERO), body=cst.IndentedBlock(body), leading_lines=first.leading_lines)
    edits.replace(first, guarded)
    for statement, _ in run[1:]:
        edits.remove(statement)
    kinds = {k for _, k in run}
    what = " and ".join(w for k, w in (("save", "saves"), ("print", "prints")) if k in kinds)
    return Change(found.line(first), found.end_line(last), RANK_ZERO_ONLY.code, Operation.MODIFY,
                  f"rank 0 alone {what} (if {RANK_ZERO}:): every process would otherwise do it", "")


def _quiet_tqdm(found: Read, edits: Edits, call: cst.Call) -> list[Change]:
    if not found.qualified(call.func) & TQDM or any(a.keyword is not None and a.keyword.value == "disable" for a in call.args):
        return []
    args = list(call.args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    disable = cst.Arg(cst.parse_expression(f"{names.RANK} != 0"), keyword=cst.Name("disable"),
                      equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    edits.replace(call, call.with_changes(args=[*args, disable]))
    line = found.line(call)
    return [Change(line, line, RANK_ZERO_ONLY.code, Operation.MODIFY, "progress bar on rank 0 alone (disable=RANK != 0)",
                   "tqdm")]


def _barriers(found: Read, edits: Edits, savers: set[str], private: set[str]) -> list[Change]:
    """A barrier before each statement that reads a checkpoint back (outside the save-like functions)."""
    changes, done = [], set()
    saved = {code(c.args[1].value) for c in calls(found.module) if found.qualified(c.func) & SAVE and len(c.args) > 1}
    for call in calls(found.module):
        if not found.qualified(call.func) & LOAD:
            continue
        statement = found.statement_of(call)
        if statement is None or statement in done or _in_function(found, statement, savers) \
                or not _reads_checkpoint(found, call, statement, saved) \
                or (call.args and _mentions(call.args[0].value, private)):
            continue
        done.add(statement)
        edits.insert_before(statement, statements(BARRIER))
        line = found.line(statement)
        changes.append(Change(line, line, RANK_ZERO_ONLY.code, Operation.INSERT,
                              "barrier before the checkpoint is read: every process waits for rank 0 to have "
                              "written it", "torch.distributed.barrier"))
    return changes


def _reads_checkpoint(found: Read, call: cst.Call, statement, saved: set[str]) -> bool:
    """A load of a checkpoint, not of data: outside a class (a Dataset's `torch.load` of a sample
    runs in DataLoader workers, where a barrier would hang), and its path one the script saves to,
    or its value loaded into a model or named like a checkpoint."""
    node = found.parent(call)
    while node is not None:
        if isinstance(node, cst.ClassDef):
            return False
        node = found.parent(node)
    if call.args and code(call.args[0].value) in saved:
        return True
    parent = found.parent(found.parent(call))
    if isinstance(parent, cst.Call) and isinstance(parent.func, cst.Attribute) and parent.func.attr.value == "load_state_dict":
        return True
    text = code(statement).lower()
    return any(word in text for word in CHECKPOINT_WORDS)
