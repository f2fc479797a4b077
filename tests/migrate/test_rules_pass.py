"""The rules' walk read from a layout (--distributed hands the migration one) calls the rules as
LibCST's visit of the module does."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from torchport.layout import Layout
from torchport.migrate.rules import RULES
from torchport.migrate.rules.base.rules_pass import RulesPass

FIDELITY = Path(__file__).resolve().parents[1] / "fidelity" / "projects"
# (LibCST visits an `as` clause's and a `del`'s whitespace in another order than it prints it:
# the one difference between a visit's order and a layout's, so no rule may visit whitespace)
WHITESPACE = (cst.BaseParenthesizableWhitespace, cst.Comment, cst.Newline, cst.EmptyLine, cst.TrailingWhitespace)

NESTED = '''\
import torch as T, os.path as p
del os, T
def outer(x, *, y=lambda z: z + 1):
    class Inner:
        def f(self):
            return [i for i in range(3) if i]
    return Inner
@decorated
class Kept:
    def method(self):
        with open(p) as handle, T.cuda.device(0):
            del handle
        match x:
            case [1, *rest] if rest:
                pass
lone = lambda: (yield)
'''


class _Recording(RulesPass):
    def __init__(self, aside=frozenset()) -> None:
        super().__init__([], aside)
        self.calls: list[tuple[str, cst.CSTNode, cst.CSTNode | None]] = []

    def on_visit(self, node):
        self.calls.append(("visit", node, self.stack[-1] if self.stack else None))
        return super().on_visit(node)

    def on_leave(self, original_node):
        self.calls.append(("leave", original_node, None))
        super().on_leave(original_node)


def _calls(module: cst.Module, aside=frozenset(), laid_out: Layout | None = None):
    walk = _Recording(aside)
    walk.through(laid_out) if laid_out is not None else module.visit(walk)
    return [(what, node, above) for what, node, above in walk.calls if not isinstance(node, WHITESPACE)], walk


def _sources():
    return [("nested", NESTED), *((path.name, path.read_text()) for path in sorted(FIDELITY.glob("*.py"))[:12])]


@pytest.mark.parametrize(("name", "source"), _sources(), ids=[name for name, _ in _sources()])
def test_a_walk_through_the_layout_calls_what_a_visit_calls(name, source):
    module = cst.parse_module(source)
    visited, by_visit = _calls(module)
    walked, by_layout = _calls(module, laid_out=Layout(module))
    assert walked == visited
    assert by_layout.parents == by_visit.parents and not by_layout.stack


def test_a_definition_set_aside_is_visited_and_left_but_not_walked_into():
    module = cst.parse_module(NESTED)
    outer, kept = module.body[2], module.body[3]
    inner = outer.body.body[0]
    aside = {inner, kept}
    visited, _ = _calls(module, aside)
    walked, _ = _calls(module, aside, Layout(module))
    assert walked == visited
    seen = [node for what, node, _ in walked if what == "visit"]
    assert inner in seen and kept in seen and inner.body not in seen and kept.decorators[0] not in seen


def test_a_node_without_a_stretch_of_the_order_is_passed_by_as_a_visit_passes_it():
    """(A set-aside node that is no statement, block or lambda: skipped by its parents, not its extent.)"""
    module = cst.parse_module(NESTED)
    call = module.body[3].body.body[0].body.body[0].items[1].item
    assert isinstance(call, cst.Call)
    walked, _ = _calls(module, {call}, Layout(module))
    assert walked == _calls(module, {call})[0]
    assert call.func not in [node for _, node, _ in walked]


def test_the_walk_through_a_made_layout_is_a_visit_of_the_made_tree():
    module = cst.parse_module(NESTED)
    made = module.with_changes(body=[*module.body[:2], cst.parse_statement("import torch\n"), *module.body[2:]])
    laid_out = Layout(made, Layout(module))
    assert _calls(made, laid_out=laid_out)[0] == _calls(made)[0]


def test_no_rule_visits_whitespace():
    names = {kind.__name__ for kind in vars(cst).values() if isinstance(kind, type) and issubclass(kind, WHITESPACE)}
    for rule in RULES:
        named = {name.partition("_")[2] for name in dir(rule) if name.startswith(("visit_", "leave_"))}
        assert not named & names, rule.__name__
