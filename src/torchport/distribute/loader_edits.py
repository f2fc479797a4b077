"""The loader step's edits, planned on the nodes of the module as read and applied in one pass:
calls replaced, statements put above a statement or first in a loop's body, the rows that say so."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from torchport.distribute.changes import Change
from torchport.distribute.loader_sites import DATALOADER, Facts, argument, code_of
from torchport.findings import Operation


@dataclass
class Edits:
    calls: dict = field(default_factory=dict)  # original Call -> new Call
    before: dict = field(default_factory=dict)  # original statement -> statements put above it
    first_in: dict = field(default_factory=dict)  # original For -> statements put first in its body
    changes: list[Change] = field(default_factory=list)
    needs_torch: bool = False

    @property
    def changes_code(self) -> bool:
        return bool(self.calls or self.before or self.first_in)

    def row(self, facts: Facts, node: cst.CSTNode, code: str, operation: Operation, message: str, api: str = DATALOADER) -> None:
        start, end = facts.lines(node)
        self.changes.append(Change(start, end, code, operation, message, api))


def with_value(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    arg = argument(call, name)
    return call if arg.value is value else replace_arg(call, arg, arg.with_changes(value=value))


def replace_arg(call: cst.Call, old: cst.Arg, new: cst.Arg) -> cst.Call:
    return call.with_changes(args=[new if a is old else a for a in call.args])


def add_keyword(call: cst.Call, name: str, value: cst.BaseExpression, after: cst.Arg | None = None) -> cst.Call:
    """`call` with `name=value` after `after` (else last), the call's own line breaks kept."""
    args = list(call.args)
    new = cst.Arg(value, keyword=cst.Name(name), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    at = args.index(after) + 1 if after is not None and after in args else len(args)
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if at < len(args):  # (it takes the comma, and the line break, of the argument before it)
        new = new.with_changes(comma=args[at - 1].comma if at else comma)
        if at:
            args[at - 1] = args[at - 1].with_changes(comma=comma)
    elif args:
        last = args[-1]
        if isinstance(last.comma, cst.Comma):  # (a trailing comma stays trailing)
            new = new.with_changes(comma=last.comma)
        args[-1] = last.with_changes(comma=comma)
    args.insert(at, new)
    return call.with_changes(args=args)


def binds_torch(module: cst.Module) -> bool:
    for line in module.body:
        if isinstance(line, cst.SimpleStatementLine):
            for stmt in line.body:
                if isinstance(stmt, cst.Import) and any(a.asname is None and code_of(a.name).split(".")[0] == "torch" for a in stmt.names):
                    return True
    return False


def with_import_torch(module: cst.Module) -> cst.Module:
    """`import torch` above the first top-level import from torch (else after the last import)."""
    body = list(module.body)
    imports = [i for i, line in enumerate(body) if isinstance(line, cst.SimpleStatementLine)
               and isinstance(line.body[0], (cst.Import, cst.ImportFrom))
               and not (isinstance(line.body[0], cst.ImportFrom) and code_of(line.body[0].module or cst.Name("")) == "__future__")]
    torch_imports = [i for i in imports if isinstance(body[i].body[0], cst.ImportFrom)
                     and code_of(body[i].body[0].module or cst.Name("")).split(".")[0] == "torch"]
    if torch_imports:
        at = torch_imports[0]
        body.insert(at, cst.parse_statement("import torch").with_changes(leading_lines=body[at].leading_lines))
        body[at + 1] = body[at + 1].with_changes(leading_lines=[])
    else:
        body.insert(imports[-1] + 1 if imports else 0, cst.parse_statement("import torch"))
    return module.with_changes(body=body)


class Apply(cst.CSTTransformer):
    """The edits, at the nodes of the module they were planned on."""

    def __init__(self, edits: Edits, on_the_way: set[cst.CSTNode]) -> None:
        super().__init__()
        self.edits = edits
        self.on_the_way = on_the_way  # (the edited nodes and those above them: no other is rebuilt)

    def on_visit(self, node) -> bool:
        return node in self.on_the_way

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        new = self.edits.calls.get(original)
        return updated if new is None else new

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        first = self.edits.first_in.get(original)
        if first and isinstance(updated, cst.For):
            updated = updated.with_changes(body=_prepended(updated.body, first))
        above = self.edits.before.get(original)
        if above and isinstance(updated, cst.BaseStatement):
            lead = above[0].with_changes(leading_lines=updated.leading_lines)
            return cst.FlattenSentinel([lead, *above[1:], updated.with_changes(leading_lines=[])])
        return updated


def _prepended(body: cst.BaseSuite, statements: list[cst.BaseStatement]) -> cst.IndentedBlock:
    if isinstance(body, cst.IndentedBlock):
        return body.with_changes(body=[*statements, *body.body])
    lines = [cst.SimpleStatementLine([s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body.body])]
    return cst.IndentedBlock(body=[*statements, *lines])
