"""`sampler.set_epoch(epoch)` first in each epoch loop, so that a shuffling DistributedSampler
draws a new order every epoch (the same order on every process); without it every epoch reads
the first epoch's order.

An epoch loop is a `for` whose target says epoch (`for epoch in range(...)`,
`for epoch in tqdm(range(...))`, `for ep in ...`, `for i, epoch in enumerate(...)`). The call is
guarded so that a run without a launcher, whose sampler is None, never makes it:
`if train_sampler is not None:` where the sampler this step made is visible from the loop, else,
for a loader the loop reads but does not see made (a parameter, one built in another function),
`if isinstance(loader.sampler, DistributedSampler):`.
"""

from __future__ import annotations

import re

import libcst as cst

from torchport.distribute.changes import LOADERS
from torchport.distribute.loader_roles import VALIDATION, role_of_words, words
from torchport.distribute.names import SAMPLER
from torchport.findings import Operation

API = "DistributedSampler.set_epoch"
_EPOCH = re.compile(r"epoch|^ep(?:_|\d|$)", re.I)
_LOADERISH = re.compile(r"loader(?!s)|(?:^|_)dl$", re.I)  # (`loaders`, `dls`: a collection, not a loader)
# Words of a name that holds something drawn from a loader, not the loader (`train_loader_iter`, `len_loader`).
_NOT_A_LOADER = {"iter", "iterator", "it", "len", "length", "size", "num", "n", "steps", "batches", "idx"}


def add_set_epoch(facts, samplers, sites_rewritten: bool, edits) -> None:
    """Plan the set_epoch calls for `samplers` (what loaders.py made) in `edits`."""
    covered, inline, made_each_epoch = set(), set(), set()
    for sampler in samplers:
        loop = _epoch_loop_around(sampler.statement, facts)
        if loop is not None:  # (the loader is made anew each epoch: set_epoch right after its sampler)
            edits.before[sampler.statement].append(_guard(sampler.expr, _epoch_var(loop)))
            edits.row(facts, sampler.statement, LOADERS.code, Operation.INSERT, _said([sampler.expr], _epoch_var(loop)),
                      API)
            inline.add(sampler.expr)
            made_each_epoch.add(loop)
    for loop in _epoch_loops(facts):
        if loop in made_each_epoch:
            continue
        var = _epoch_var(loop)
        seen = list({s.expr: s for s in samplers if s.expr not in inline and _sees(loop, s, facts)}.values())
        if seen:
            guards = [_guard(s.expr, var) for s in seen]
            what = [s.expr for s in seen]
        else:
            loaders = _loaders_read(loop, facts) if sites_rewritten else []
            if not loaders:
                continue
            guards = [_guard_isinstance(expr, var) for expr in loaders]
            what = [f"{expr}.sampler" for expr in loaders]
        edits.first_in[loop] = guards
        edits.row(facts, loop.target, LOADERS.code, Operation.INSERT, _said(what, var), API)
        covered.update(s.expr for s in seen)
    for sampler in samplers:
        if sampler.expr not in covered | inline and sampler.shuffles:
            edits.row(facts, sampler.statement, LOADERS.code, Operation.NOTE,
                      f"no epoch loop (`for epoch in ...`) sees {sampler.expr}: call {sampler.expr}.set_epoch(epoch) "
                      f"at the start of each epoch, else every epoch reads the same order", API)


def _said(exprs: list[str], var: str) -> str:
    calls = ", ".join(f"{expr}.set_epoch({var})" for expr in exprs)
    return (f"{calls} first in the epoch loop, guarded: a new shuffle order every epoch, the same "
            f"on every process; a run without a launcher (no sampler) skips it")


def _guard(expr: str, var: str) -> cst.BaseStatement:
    return cst.parse_statement(f"if {expr} is not None:\n    {expr}.set_epoch({var})\n")


def _guard_isinstance(expr: str, var: str) -> cst.BaseStatement:
    return cst.parse_statement(f"if isinstance({expr}.sampler, {SAMPLER}):\n    {expr}.sampler.set_epoch({var})\n")


def _epoch_var(loop: cst.For) -> str | None:
    target = loop.target
    if isinstance(target, cst.Name):
        return target.value if _EPOCH.search(target.value) else None
    if isinstance(target, (cst.Tuple, cst.List)):
        found = [e.value.value for e in target.elements if isinstance(e.value, cst.Name) and _EPOCH.search(e.value.value)]
        return found[0] if len(found) == 1 else None
    return None


def _epoch_loops(facts) -> list[cst.For]:
    """The epoch loops not inside another epoch loop."""
    loops = [loop for loop in facts.loops if _epoch_var(loop)]
    return [loop for loop in loops if _epoch_loop_around(loop, facts) is None]


def _epoch_loop_around(node: cst.CSTNode, facts) -> cst.For | None:
    for above in facts.ancestors(node):
        if isinstance(above, cst.For) and _epoch_var(above) and node is not above.iter:
            return above
        if isinstance(above, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
    return None


def _sees(loop: cst.For, sampler, facts) -> bool:
    """Whether the sampler bound above `sampler.statement` is bound when `loop` starts."""
    if loop in facts.ancestors(sampler.statement) or not _surely_run(sampler.statement, loop, facts):
        return False
    if sampler.expr.startswith("self."):
        return _same_instance(loop, sampler.statement, facts)
    bound_in, loop_in = facts.scope(sampler.statement), facts.scope(loop)
    if bound_in is loop_in:
        return facts.line(sampler.statement) < facts.line(loop)
    if isinstance(bound_in, cst.Module):
        return True  # (its name is new to the file: no function binds it otherwise)
    scope = facts.enclosing_scope(loop_in)
    while scope is not None:
        if scope is bound_in:
            return True
        scope = facts.enclosing_scope(scope)
    return False


def _surely_run(statement: cst.BaseStatement, loop: cst.For, facts) -> bool:
    """Whether `statement` runs whenever its function (or module) does, before `loop` is reached:
    no `if`, loop or `try` around it that is not around `loop` too (the `__main__` guard aside),
    so that a name it binds is bound when the loop reads it."""
    around_loop = set(facts.ancestors(loop))
    for above in facts.ancestors(statement):
        if above in around_loop or isinstance(above, (cst.FunctionDef, cst.ClassDef)):
            return True
        if isinstance(above, cst.If) and _is_main_guard(above):
            continue
        if isinstance(above, (cst.If, cst.For, cst.While, cst.Try, cst.Match, cst.Else, cst.ExceptHandler)):
            return False
    return True


def _is_main_guard(node: cst.If) -> bool:
    test = node.test
    return (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == "__name__"
            and len(test.comparisons) == 1 and isinstance(test.comparisons[0].comparator, cst.SimpleString))


def _same_instance(loop: cst.For, statement: cst.BaseStatement, facts) -> bool:
    """Both in methods of one class, where `self` is each method's first parameter."""
    def method_and_class(node):
        function = next((a for a in facts.ancestors(node) if isinstance(a, cst.FunctionDef)), None)
        if function is None or not isinstance(facts.scope(function), cst.ClassDef):
            return None, None
        params = function.params.params
        first = params[0].name.value if params else ""
        return first, facts.scope(function)

    first, owner = method_and_class(statement)
    other_first, other_owner = method_and_class(loop)
    return owner is not None and owner is other_owner and first == other_first == "self"


def _loaders_read(loop: cst.For, facts) -> list[str]:
    """The training loaders `loop` reads that it cannot see made (`train_loader`, `self.loader`,
    a parameter of its function such as `data_loader`), in the order it names them."""
    found: list[str] = []
    function = next((a for a in facts.ancestors(loop) if isinstance(a, cst.FunctionDef)), None)
    if function is not None:
        for param in function.params.params:
            _add_if_loader(param.name.value, param.name.value, found)
    _names_in(loop.body, found)
    return found


def _names_in(node: cst.CSTNode, found: list[str]) -> None:
    if isinstance(node, cst.Attribute):
        if isinstance(node.value, (cst.Name, cst.Attribute)):
            _add_if_loader(node.attr.value, _dotted(node), found)
        _names_in(node.value, found)
        return
    if isinstance(node, cst.Name):
        _add_if_loader(node.value, node.value, found)
    for child in node.children:
        _names_in(child, found)


def _add_if_loader(name: str, expr: str | None, found: list[str]) -> None:
    if not expr or expr in found or name[:1].isupper() or not _LOADERISH.search(name):
        return
    if role_of_words(name) != VALIDATION and not _NOT_A_LOADER & set(words(name)):
        found.append(expr)


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr.value}" if inner else None
    return None
