"""`mp.spawn(fn, args=(...), nprocs=N)` -> `fn(LOCAL_RANK, ...)` under a launcher, which starts the processes.

Each process the launcher starts runs the function mp.spawn would have run in it, with the
index mp.spawn would have given it (the launcher's LOCAL_RANK). The script's own MASTER_ADDR /
MASTER_PORT become defaults, so the launcher's (torchrun sets both) win. Started without a
launcher, the script spawns its processes as it did (the spawn is kept in an `else:`).
"""

from __future__ import annotations

import libcst as cst

from torchport.distribute import names
from torchport.distribute.changes import LAUNCHER, Change
from torchport.apis.distributed import MAKES_GROUP, SPAWNS
from torchport.distribute.edits import Edits, Read, argument, calls, code, dotted, import_missing, nodes
from torchport.findings import Operation

LOCAL_RANK = f'int(os.environ["{names.LOCAL_RANK}"])'
LAUNCHED = f'"{names.LOCAL_RANK}" in os.environ'
LAUNCHED_COMMENT = "# one process per device, started by a launcher (run_distributed.sh)"
RENDEZVOUS = ("MASTER_ADDR", "MASTER_PORT")
# What a parent process makes to hear back from the processes it spawns.
SHARED = frozenset({"Queue", "SimpleQueue", "JoinableQueue", "Pipe", "Manager", "Value", "Array", "Event", "Barrier"})


def launch_in_place(source: str, plan, options) -> tuple[str, list[Change]]:
    if not plan.spawns:
        return source, []
    found = Read.of(source)
    edits, changes = Edits(), []
    for call in calls(found.module):
        if found.is_api(call.func, SPAWNS):
            changes.append(_spawn(found, edits, call))
    if not any(c.operation.is_change for c in changes):
        return source, changes
    for node in nodes(found.module, cst.SimpleStatementLine, cst.Call):
        if isinstance(node, cst.SimpleStatementLine):
            changes += _rendezvous(found, edits, node)
        elif isinstance(node, cst.Call) and found.is_api(node.func, MAKES_GROUP):
            changes += _launchers_init_method(found, edits, node)
    changes += _import_os(found, edits)
    return edits.apply(found), changes


def _spawn(found: Read, edits: Edits, call: cst.Call) -> Change:
    line = found.line(call)
    api = sorted(found.qualified(call.func) & SPAWNS)[0]
    fn, args, join = argument(call, "fn", 0), argument(call, "args", 1), argument(call, "join", 3)
    statement = found.statement_of(call)
    standalone = (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                  and isinstance(statement.body[0], cst.Expr) and statement.body[0].value is call)
    if fn is None or not standalone or (join is not None and not _is_true(join.value)):
        return Change(line, line, LAUNCHER.code, Operation.NOTE,
                      "mp.spawn kept: its result is used (join=False or a value kept), so the launcher cannot "
                      "start these processes in its place; start them with torchrun by hand", api)
    shared = _shared_with_the_parent(found, args)
    if shared:
        return Change(line, line, LAUNCHER.code, Operation.NOTE,
                      f"mp.spawn kept: its processes hand results back to this one through {shared}, which "
                      "processes the launcher starts would not share; collect them with torch.distributed instead",
                      api)
    passed = [cst.Arg(cst.parse_expression(LOCAL_RANK))]
    if args is not None:
        value = args.value
        if isinstance(value, (cst.Tuple, cst.List)):
            passed += [cst.Arg(e.value.deep_clone(), star="*" if isinstance(e, cst.StarredElement) else "")
                       for e in value.elements]
        else:
            passed.append(cst.Arg(value.deep_clone(), star="*"))
    # (the spawn stays as written in the other branch: the launched call holds copies of its parts)
    launched = cst.Call(fn.value.deep_clone(), args=_commas(passed))
    edits.replace(statement, _launched_or_spawned(statement, launched))
    return Change(line, line, LAUNCHER.code, Operation.MODIFY,
                  f"{api.rsplit('.', 1)[-1]}({code(fn.value)}, ...) -> {code(fn.value)}(LOCAL_RANK, ...) when a launcher "
                  "started this process: it starts one process per device and each runs it (its process count is "
                  "the launcher's --nproc_per_node); started without one, the script spawns its processes as before",
                  api)


def _launched_or_spawned(statement: cst.SimpleStatementLine, launched: cst.Call) -> cst.If:
    """`if LOCAL_RANK in os.environ: <launched> else: <the spawn as written>`."""
    header = cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(LAUNCHED_COMMENT))
    return cst.If(
        test=cst.parse_expression(LAUNCHED),
        body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Expr(launched)])], header=header),
        orelse=cst.Else(cst.IndentedBlock([statement.with_changes(leading_lines=[])])),
        leading_lines=statement.leading_lines,
    )


def _shared_with_the_parent(found: Read, args: cst.Arg | None) -> str:
    """The name of a queue, pipe or manager the spawned processes are handed ("" when none)."""
    if args is None or not isinstance(args.value, (cst.Tuple, cst.List)):
        return ""
    handed = {e.value.value for e in args.value.elements if isinstance(e.value, cst.Name)}
    for node in nodes(found.module, cst.Assign):
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and node.targets[0].target.value in handed and isinstance(node.value, cst.Call):
            made = dotted(node.value.func) or (node.value.func.attr.value if isinstance(node.value.func, cst.Attribute) else "")
            if made.rsplit(".", 1)[-1] in SHARED:
                return node.targets[0].target.value
    return ""


def _commas(args: list[cst.Arg]) -> list[cst.Arg]:
    return [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in args[:-1]] + args[-1:]


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _rendezvous(found: Read, edits: Edits, statement: cst.SimpleStatementLine) -> list[Change]:
    """`os.environ["MASTER_PORT"] = v` -> `os.environ.setdefault("MASTER_PORT", v)`."""
    if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
        return []
    assign = statement.body[0]
    target = assign.targets[0].target
    if len(assign.targets) != 1 or not isinstance(target, cst.Subscript) \
            or "os.environ" not in found.qualified(target.value):
        return []
    key = target.slice[0].slice
    if not (isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString)
            and key.value.evaluated_value in RENDEZVOUS):
        return []
    new = cst.Expr(cst.Call(cst.Attribute(target.value, cst.Name("setdefault"), dot=cst.Dot()),
                            args=_commas([cst.Arg(key.value), cst.Arg(assign.value)])))
    edits.replace(statement, statement.with_changes(body=[new]))
    line = found.line(statement)
    return [Change(line, line, LAUNCHER.code, Operation.MODIFY,
                   f"{key.value.evaluated_value} set only where the launcher has not set it (setdefault)",
                   key.value.evaluated_value)]


def _launchers_init_method(found: Read, edits: Edits, call: cst.Call) -> list[Change]:
    """`init_method=URL` -> `"env://" if <launched> else URL`: under torchrun a `tcp://` URL would
    make every rank a client of a store nobody serves (torchrun's agent holds the group's store, at
    MASTER_ADDR:MASTER_PORT, and tells the ranks to join it: TORCHELASTIC_USE_AGENT_STORE)."""
    changes = _launchers_rank_and_size(found, edits, call)
    method = argument(call, "init_method", 1)
    if method is None or (isinstance(method.value, cst.SimpleString) and method.value.evaluated_value == "env://"):
        return changes
    edits.replace(method.value, cst.IfExp(test=cst.parse_expression(LAUNCHED), body=cst.SimpleString('"env://"'),
                                          orelse=method.value))
    line = found.line(call)
    return changes + [Change(line, line, LAUNCHER.code, Operation.MODIFY,
                   f"init_method {code(method.value)} -> \"env://\" under a launcher: the ranks it starts join its "
                   "rendezvous (MASTER_ADDR, MASTER_PORT); started without one, the script's own as before",
                   "torch.distributed.init_process_group")]


def _launchers_rank_and_size(found: Read, edits: Edits, call: cst.Call) -> list[Change]:
    """`world_size=`, `rank=` -> the launcher's WORLD_SIZE and RANK under a launcher: the script
    computes them from its own count of devices (`ngpus_per_node * args.world_size`), which need not
    be the launcher's --nproc_per_node (one on a machine without that device kind)."""
    changes = []
    for keyword, variable in (("world_size", "WORLD_SIZE"), ("rank", "RANK")):
        given = argument(call, keyword, None)
        if given is None or code(given.value) == f'int(os.environ["{variable}"])':
            continue
        edits.replace(given.value, cst.IfExp(test=cst.parse_expression(LAUNCHED),
                                             body=cst.parse_expression(f'int(os.environ["{variable}"])'), orelse=given.value))
        line = found.line(call)
        changes.append(Change(line, line, LAUNCHER.code, Operation.MODIFY,
                              f"{keyword} {code(given.value)} -> the launcher's {variable} under a launcher: the count "
                              "the script makes of its devices need not be the processes it started; started without "
                              "one, the script's own as before", "torch.distributed.init_process_group"))
    return changes


def _import_os(found: Read, edits: Edits) -> list[Change]:
    missing, line = import_missing(found, edits, ("os",))
    if not missing:
        return []
    return [Change(line, line, LAUNCHER.code, Operation.INSERT, "import os: LOCAL_RANK is read from the environment",
                   "")]
