"""apex classes and functions with a native twin called with the same arguments, wherever they
appear (amp or not): apex.optimizers.* -> torchport.optim's, apex.parallel's DDP and SyncBatchNorm
-> torch's, apex.normalization's fused norms -> torch.nn's. The argument maps are
`torchport.apis.apex`'s `Replacement`s; a value native torch does not follow stops the conversion."""

from __future__ import annotations

import libcst as cst

from torchport.apis import apex
from torchport.apex_to_torch import arguments
from torchport.apex_to_torch.changes import FUSED_NORMALIZATION, FUSED_OPTIMIZERS, PARALLEL_MODULES, Unconvertible
from torchport.apex_to_torch.references import REPLACEMENTS, Use, uses
from torchport.apex_to_torch.reading import read
from torchport.distribute.changes import Change
from torchport.distribute.edits import Edits, Read, code
from torchport.findings import Operation

TORCHPORT_OPTIM = "torchport.optim"
NO_SPACES = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
CODES = {**{name: FUSED_OPTIMIZERS.code for name in apex.OPTIMIZERS},
         **{name: PARALLEL_MODULES.code for name in apex.PARALLEL},
         **{name: FUSED_NORMALIZATION.code for name in apex.NORMALIZATION}}


def why_dropped(parameter: str) -> str:
    if parameter in apex.DDP_TUNING:
        return "torch's DistributedDataParallel tunes its buckets and streams itself"
    return "it changes nothing in native torch (gradients, float32 master copies)"


def rewrite_replacements(text: str, plan) -> tuple[str, list[Change]]:
    """Each call of a replaced apex name rewritten, the innermost first (`DDP(..., FusedRMSNorm(8))`:
    a call replaced whole would write its arguments as read), a pass a level."""
    changes = []
    depth = max(_depths(read(text), plan).values(), default=-1)
    while depth >= 0:  # (a call of the same name, NpuFusedSGD, still reads as apex's: one pass a depth)
        found = read(text)
        edits = Edits()
        for use, level in _depths(found, plan).items():
            if level == depth:
                new, rows = replaced(found, use, plan)
                edits.replace(use.call, new)
                changes += rows
        text = edits.apply(found)
        depth -= 1
    return text, sorted(changes, key=lambda change: change.start_line)


def _depths(found: Read, plan) -> dict[Use, int]:
    """Each call to replace, with how many of the others hold it in their arguments."""
    wanted = [use for use in uses(found) if use.api in REPLACEMENTS and plan.converts(use.api)]
    inside: dict[int, int] = {}
    for use in wanted:
        for node in found.walk(use.call):
            if node is not use.call:
                inside[id(node)] = inside.get(id(node), 0) + 1
    return {use: inside.get(id(use.call), 0) for use in wanted}


def replaced(found: Read, use: Use, plan) -> tuple[cst.Call, list[Change]]:
    replacement = REPLACEMENTS[use.api]
    line = found.line(use.call)
    short = use.api.rsplit(".", 1)[1]
    code_ = CODES[use.api]
    if not replacement.keeps:  # (the same arguments: Ascend's NpuFused* optimizers)
        native, args, rows = replacement.native, list(use.call.args), []
    else:
        native, args, rows = _arguments(found, use, replacement, line, short, code_)
    spelled = _spelling(use, native, plan)
    rows.insert(0, Change(line, line, code_, Operation.MODIFY, f"{short} -> {native}", use.api))
    return use.call.with_changes(func=cst.parse_expression(spelled), args=args), rows


def _arguments(found: Read, use: Use, replacement: apex.Replacement, line: int, short: str, code_: str):
    """(the native name, its arguments, the rows for what was dropped or added)."""
    call = use.call
    positional = [a for a in call.args if a.keyword is None]
    by_place = min(2, len(replacement.keeps))  # (apex's order and the kept parameters' agree this far)
    if any(a.star for a in call.args):
        raise Unconvertible(line, f"{short}(*...) / (**...): which apex parameters the unpacked arguments fill "
                                  "is not known before the script runs")
    if len(positional) > by_place:
        raise Unconvertible(line, f"{short}(...) with more than {by_place} arguments by place: which apex parameters "
                                  "they fill is not read")
    given = {(a.keyword.value if a.keyword is not None else replacement.keeps[i]): a for i, a in enumerate(call.args)}
    native = _chosen(replacement, given, line, short)
    kept, rows = [], []
    for parameter, arg in given.items():
        if replacement.chooses is None or parameter != replacement.chooses[0]:
            row = _pass_on(found, use, replacement, parameter, arg, kept, native, code_)
            rows += [row] if row is not None else []
    for parameter, value in replacement.defaults.items():
        if parameter not in given:
            kept.append(cst.Arg(cst.parse_expression(value), keyword=cst.Name(parameter), equal=NO_SPACES))
            rows.append(Change(line, line, code_, Operation.INSERT,
                               f"{parameter}={value} passed: apex's default, not {native}'s", use.api))
    return native, _commas(kept, call.args[-1] if call.args else None), rows


def _chosen(replacement: apex.Replacement, given: dict[str, cst.Arg], line: int, short: str) -> str:
    """The native class, where an apex parameter picks it (FusedAdam's adam_w_mode)."""
    if replacement.chooses is None:
        return replacement.native
    parameter, default, other = replacement.chooses
    value = arguments.literal(given[parameter].value if parameter in given else cst.parse_expression(default))
    if value is arguments.NOT_KNOWN:
        raise Unconvertible(line, f"{short}({parameter}={code(given[parameter].value)}): which native class it is, is "
                                  "not known before the script runs")
    return replacement.native if value else other


def _pass_on(found: Read, use: Use, replacement: apex.Replacement, parameter: str, arg: cst.Arg,
             kept: list[cst.Arg], native: str, code_: str) -> Change | None:
    """The argument kept (renamed where native torch names it otherwise), or dropped with a row."""
    short = use.api.rsplit(".", 1)[1]
    if parameter in replacement.keeps:
        kept.append(arg)
        return None
    if parameter in replacement.renames:
        kept.append(arg.with_changes(keyword=cst.Name(replacement.renames[parameter]),
                                     equal=arg.equal if arg.keyword is not None else NO_SPACES))
        return None
    if parameter in replacement.differs:
        matches, why = replacement.differs[parameter]
        if not arguments.same_value(arg.value, matches):
            raise Unconvertible(found.line(use.call), f"{short}({parameter}={code(arg.value)}): {why}")
        return _dropped(found, arg, code_, f"{short}({parameter}={code(arg.value)}) dropped: what {native} does "
                                           "already", use.api)
    if parameter in apex.DDP_TUNING or parameter in apex.HARMLESS_OPTIMIZER_PARAMETERS:
        return _dropped(found, arg, code_, f"{short}({parameter}=...) dropped: {why_dropped(parameter)}", use.api)
    raise Unconvertible(found.line(use.call), f"{short}({parameter}=...): not a parameter the conversion knows")


def _dropped(found: Read, arg: cst.Arg, code_: str, message: str, api: str) -> Change:
    line = found.line(arg)
    return Change(line, line, code_, Operation.DELETE, message, api)


def _commas(kept: list[cst.Arg], last: cst.Arg | None) -> list[cst.Arg]:
    """The arguments separated as a person writes them: a comma between each, the call's own
    trailing comma (or none) after the last."""
    result = []
    for index, arg in enumerate(kept):
        if index < len(kept) - 1:
            if arg.comma is cst.MaybeSentinel.DEFAULT or arg is last:
                arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        else:
            arg = arg.with_changes(comma=last.comma if last is not None else cst.MaybeSentinel.DEFAULT)
        result.append(arg)
    return result


def _spelling(use: Use, native: str, plan) -> str:
    """A torchport.optim optimizer as the file imported apex's (`from apex.optimizers import
    FusedAdam` -> `from torchport.optim import FusedAdamW`), torch's by its qualified name."""
    if native.startswith(TORCHPORT_OPTIM + "."):
        if isinstance(use.node, cst.Name):
            name = native.rsplit(".", 1)[1]
            plan.imports.setdefault(use.node.value, set()).add(name)
            return name
        plan.needs.add(TORCHPORT_OPTIM)
        return native
    plan.needs.add(native.split(".")[0])
    return native
