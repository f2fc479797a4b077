"""LOCAL_RANK, RANK, WORLD_SIZE from the launcher; set_device; init_process_group.

The block goes at the top of the `__main__` body, so that processes which import the module
(DataLoader workers started by spawn) make no process group, unless module-level code before the
guard reads the names (the other steps put a DDP wrap or a `RANK == 0` test there); then it goes
after the last top-level import. The device index a single-card script hard-codes (`"cuda:0"`,
`.cuda(0)`, `set_device(0)`, `CUDA_VISIBLE_DEVICES="0"`) would put every process on one device:
it goes, and `set_device(LOCAL_RANK)` decides.
"""

from __future__ import annotations

import libcst as cst

from torchport.apis.distributed import CUDA_DIST_BACKEND, PROCESS_GROUPS
from torchport.distribute import names
from torchport.distribute.changes import PROCESS_GROUP, Change
from torchport.distribute.detect import main_guard
from torchport.distribute.edits import (Edits, Read, code, dotted, first_code, import_missing, is_import_line, nodes,
                                        statements, walk)
from torchport.findings import Operation

INIT = f"torch.distributed.{PROCESS_GROUPS[0]}"
SETUP = f"""{names.SETUP_COMMENT}
{names.LOCAL_RANK} = int(os.environ.get("{names.LOCAL_RANK}", 0))
{names.RANK} = int(os.environ.get("{names.RANK}", 0))
{names.WORLD_SIZE} = int(os.environ.get("{names.WORLD_SIZE}", 1))
torch.cuda.set_device({names.LOCAL_RANK})
if {names.WORLD_SIZE} > 1:
    {INIT}("{CUDA_DIST_BACKEND}")
else:  # started without a launcher: a group of one, so the script runs as it did
    {INIT}("{CUDA_DIST_BACKEND}", store=torch.distributed.HashStore(), rank=0, world_size=1)
"""
# (the barrier: no process tears its group down while another still talks to it, and none ends
# before rank 0 has written what it saves last)
DESTROY = "torch.distributed.barrier()\ntorch.distributed.destroy_process_group()\n"
# (a script with no __main__ block: the teardown runs only when it is the program, never when
# another file imports it, which would destroy that file's group)
DESTROY_WHEN_MAIN = 'if __name__ == "__main__":\n' + "".join(f"    {line}\n" for line in DESTROY.splitlines())
SETUP_NAMES = frozenset({names.LOCAL_RANK, names.RANK, names.WORLD_SIZE})
EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})
CUDA = "cuda"


def insert_setup(source: str, plan, options) -> tuple[str, list[Change]]:
    if not plan.single_card:
        return source, []
    found = Read.of(source)
    edits, changes = Edits(), []
    module = found.module
    guard = main_guard(module)
    early = _first_reader_before(module, guard)
    changes += _imports(found, edits)  # (first: where the file has no imports, they go above the setup)
    if guard is not None and early is None:
        anchor_line = found.line(guard.body.body[0])
        edits.insert_before(guard.body.body[0], statements(SETUP))
        where = "at the top of the __main__ block"
    else:
        last_import = _last_import(module, early)
        block = statements(SETUP)
        block[0] = block[0].with_changes(leading_lines=[cst.EmptyLine(), *block[0].leading_lines])
        if last_import is None:
            first = first_code(module)
            anchor_line = found.line(first) if first is not None else 1
            edits.insert_before(first, block) if first is not None else edits.append(module, block)
        else:
            anchor_line = found.end_line(last_import)
            edits.insert_after(last_import, block)
        why = " (module-level code before the __main__ block reads its names)" if guard is not None else ""
        where = f"after the imports{why}"
    changes.append(Change(anchor_line, anchor_line, PROCESS_GROUP.code, Operation.INSERT,
                          f"LOCAL_RANK, RANK, WORLD_SIZE from the launcher, set_device(LOCAL_RANK) and the process "
                          f"group, {where}; run without a launcher it is a group of one", INIT))
    changes += _destroy_at_end(found, edits, guard)
    changes += _device_zero(found, edits)
    return edits.apply(found), changes


def _first_reader_before(module: cst.Module, guard: cst.If | None) -> cst.BaseStatement | None:
    """The first module-level statement that reads a setup name before the `__main__` block
    (all of them when there is none); function and class bodies read them only when called."""
    for statement in module.body:
        if statement is guard:
            return None
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        if any(isinstance(n, cst.Name) and n.value in SETUP_NAMES for n in walk(statement, into_scopes=False)):
            return statement
    return None


def _last_import(module: cst.Module, before: cst.BaseStatement | None) -> cst.BaseStatement | None:
    last = None
    for statement in module.body:
        if statement is before:
            break
        if is_import_line(statement):
            last = statement
    return last


def _destroy_at_end(found: Read, edits: Edits, guard: cst.If | None) -> list[Change]:
    body = guard.body.body if guard is not None else found.module.body
    last = body[-1]
    if _exits(last):
        return [Change(found.line(last), found.line(last), PROCESS_GROUP.code, Operation.NOTE,
                       "the script ends by exiting: the process group is left for the exit to close "
                       "(destroy_process_group not added)")]
    edits.insert_after(last, statements(DESTROY if guard is not None else DESTROY_WHEN_MAIN))
    where = "the __main__ block" if guard is not None else "the script, when it runs as the program (if __name__ == \"__main__\")"
    return [Change(found.end_line(last), found.end_line(last), PROCESS_GROUP.code, Operation.INSERT,
                   f"barrier() and destroy_process_group() at the end of {where}: every process ends once all are done", "torch.distributed.destroy_process_group")]


def _exits(statement: cst.BaseStatement) -> bool:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Raise):
            return True
        return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and dotted(small.value.func) in EXITS
    return False


def _imports(found: Read, edits: Edits) -> list[Change]:
    """`import os` / `import torch` where the file binds neither name at its top level."""
    missing, line = import_missing(found, edits, ("os", "torch"))
    if not missing:
        return []
    return [Change(line, line, PROCESS_GROUP.code, Operation.INSERT,
                   f"import {', '.join(missing)}: the setup reads the launcher's environment", "")]


def _device_zero(found: Read, edits: Edits) -> list[Change]:
    """Device 0, hard-coded, made the device `set_device(LOCAL_RANK)` chose."""
    changes = []
    for node in nodes(found.module, cst.SimpleString, cst.Call, cst.SimpleStatementLine):
        if isinstance(node, cst.SimpleString) and node.evaluated_value == f"{CUDA}:0":
            quote = node.quote
            edits.replace(node, node.with_changes(value=node.prefix + quote + CUDA + quote))
            changes.append(_row(found, node, f'"{CUDA}:0" -> "{CUDA}": each process\'s own device'))
        elif isinstance(node, cst.Call):
            changes += _device_zero_call(found, edits, node)
        elif isinstance(node, (cst.SimpleStatementLine,)):
            changes += _visible_devices(found, edits, node)
    return changes


def _device_zero_call(found: Read, edits: Edits, call: cst.Call) -> list[Change]:
    names_ = found.qualified(call.func)
    if "torch.device" in names_ and len(call.args) == 2 and _is_zero(call.args[1].value) and _is_cuda(call.args[0].value):
        edits.replace(call, call.with_changes(args=[call.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)]))
        return [_row(found, call, f'torch.device("{CUDA}", 0) -> torch.device("{CUDA}"): each process\'s own device')]
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == CUDA and len(call.args) == 1 \
            and _is_zero(call.args[0].value) and call.args[0].keyword is None:
        edits.replace(call, call.with_changes(args=[]))
        return [_row(found, call, f".{CUDA}(0) -> .{CUDA}(): each process's own device")]
    if "torch.cuda.set_device" in names_ and call.args:
        # (a single-card script's set_device, of 0 or of `args.gpu`, would put every process on that one device)
        statement = found.statement_of(call)
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                and isinstance(statement.body[0], cst.Expr) and statement.body[0].value is call:
            edits.remove(statement)
            return [Change(found.line(call), found.line(call), PROCESS_GROUP.code, Operation.DELETE,
                           f"set_device({code(call.args[0].value)}) dropped: set_device(LOCAL_RANK) chose each "
                           "process's device", "torch.cuda.set_device")]
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == CUDA and call.args \
            and call.args[0].keyword is None and not isinstance(call.args[0].value, cst.Integer):
        return [Change(found.line(call), found.line(call), PROCESS_GROUP.code, Operation.NOTE,
                       f".{CUDA}({code(call.args[0].value)}): every process would use the device it names; "
                       f"drop the index (set_device(LOCAL_RANK) chose each process's device)", "")]
    return []


def _visible_devices(found: Read, edits: Edits, statement: cst.SimpleStatementLine) -> list[Change]:
    """`os.environ["CUDA_VISIBLE_DEVICES"] = "0"` would show every process the one device."""
    if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
        return []
    assign = statement.body[0]
    target = assign.targets[0].target
    if not (isinstance(target, cst.Subscript) and "os.environ" in found.qualified(target.value)):
        return []
    key = target.slice[0].slice
    if not (isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString)
            and key.value.evaluated_value == "CUDA_VISIBLE_DEVICES"):
        return []
    value = assign.value
    if isinstance(value, cst.SimpleString) and value.evaluated_value.strip().isdigit():
        edits.remove(statement)
        return [Change(found.line(statement), found.line(statement), PROCESS_GROUP.code, Operation.DELETE,
                       "CUDA_VISIBLE_DEVICES of one device dropped: it would show every process that one device",
                       "CUDA_VISIBLE_DEVICES")]
    return [Change(found.line(statement), found.line(statement), PROCESS_GROUP.code, Operation.NOTE,
                   "CUDA_VISIBLE_DEVICES set by the script: it must show each process every device the launcher "
                   "uses (set_device(LOCAL_RANK) picks one)", "CUDA_VISIBLE_DEVICES")]


def _is_zero(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and node.value == "0"


def _is_cuda(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == CUDA


def _row(found: Read, node: cst.CSTNode, message: str) -> Change:
    return Change(found.line(node), found.line(node), PROCESS_GROUP.code, Operation.MODIFY, message, "")

