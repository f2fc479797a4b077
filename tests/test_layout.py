"""layout.py: one printing of a LibCST tree gives what LibCST's PositionProvider, ParentNodeProvider
and `children` give, node for node; a tree that holds one node twice says so."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from torchport.layout import Layout, printed_lines

SOURCES = {
    "header comments, a docstring, decorators": (
        "# Copyright (c) Someone.\n\n\"\"\"A trainer.\"\"\"\nimport torch\n\n\n@torch.no_grad()\n@staticmethod\n"
        "def evaluate(model, loader):\n    # the validation pass\n    return [model(x) for x in loader]\n"),
    "strings and brackets over several lines": (
        "import torch\nx = torch.tensor(\n    [1, 2,\n     3],\n)\ns = '''a\nb'''\nif x.sum() > 2:  # a comment\n"
        "    y = {k: v for k, v in zip('ab', x)}\nelse:\n    y = None\n"),
    "line continuations, semicolons, a class": (
        "a = 1 + \\\n    2; b = 3\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n"),
    "carriage returns": "import torch\r\nx = torch.zeros(\r\n    1)\r\nprint(x)\r\n",
}
WHITESPACE = (cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.Newline, cst.EmptyLine,
              cst.Comment)


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
def test_lines_parents_and_children_are_libcsts(source):
    module = cst.parse_module(source)
    layout = Layout(module)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions, parents = wrapper.resolve(PositionProvider), wrapper.resolve(ParentNodeProvider)
    assert layout.code == source and not layout.shared
    assert {node: (where.start.line, where.end.line) for node, where in positions.items()} == layout.lines
    assert {node: parent for node, parent in parents.items()} == layout.parents
    for node in layout.lines:
        ours = [child for child in layout.children.get(node, ()) if not isinstance(child, WHITESPACE)]
        assert ours == [child for child in node.children if not isinstance(child, WHITESPACE)]


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
def test_the_lines_of_a_few_nodes_are_those_of_the_whole_layout(source):
    module = cst.parse_module(source)
    wanted = {node for node in Layout(module).lines if isinstance(node, (cst.Call, cst.FunctionDef, cst.If))}
    assert wanted
    assert printed_lines(module, module, wanted) == {node: Layout(module).lines[node] for node in wanted}


def test_a_tree_that_holds_one_node_twice_says_so():
    module = cst.parse_module("x = 1\ny = 2\n")
    twice = module.with_changes(body=[module.body[0], module.body[1], module.body[0]])
    assert not Layout(module).shared
    assert Layout(twice).shared


# A tree made from another by edits is laid out from the other's layout: what the edits left alone
# is not printed again. Each case: (source, edit of its module), the edit as a step would make it.
def _insert_before_def(module):
    new = cst.parse_statement("RANK = 0\n")
    return module.with_changes(body=[*module.body[:1], new, *module.body[1:]])


def _replace_inner_call(module):
    class Swap(cst.CSTTransformer):
        def leave_Call(self, original, updated):
            return updated.with_changes(func=cst.Name("g")) if cst.ensure_type(original.func, cst.Name).value == "f" else updated
    return module.visit(Swap())


def _guard_statements(module):
    run = list(module.body[1:3])
    guarded = cst.If(test=cst.parse_expression("RANK == 0"), body=cst.IndentedBlock(run))
    return module.with_changes(body=[module.body[0], guarded, *module.body[3:]])


def _append_argument(module):
    statement = module.body[0]
    call = statement.body[0].value
    args = [*call.args, cst.Arg(cst.Name("z"))]  # (the old last argument now prints a comma after it)
    return module.with_changes(body=[statement.with_changes(body=[statement.body[0].with_changes(
        value=call.with_changes(args=args))]), *module.body[1:]])


def _remove_first(module):
    return module.with_changes(body=module.body[1:])


MADE = {
    "a statement before a function": ("import torch\n\n\ndef train(model):\n    return model\n", _insert_before_def),
    "a call deep in a function": ("import torch\ndef train(x):\n    for i in x:\n        y = f(i) + h(i)\n    return y\n",
                                  _replace_inner_call),
    "statements moved into a new block": ("import torch\nprint(1)\ntorch.save(m, 'm.pt')\nx = 2\n", _guard_statements),
    "an argument after one that had no comma": ("f(x, y)\nz = 1\n", _append_argument),
    "no newline at the end of the file": ("import torch\nx = 1\nprint(x)", _insert_before_def),
    "carriage returns and tabs": ("import torch\r\ndef f(x):\r\n\tif x:\r\n\t\treturn f(x)\r\n\treturn 0\r\n",
                                  _replace_inner_call),
    "the first statement removed": ("# a header\nimport os\nimport torch\n", _remove_first),
}


def _same_as_a_full_layout(made: Layout) -> None:
    full = Layout(made.module)
    assert made.code == full.code == made.module.code
    assert made.order == full.order and not made.shared
    for node in full.order:
        assert made.lines[node] == full.lines[node]
        assert made.parents.get(node) is full.parents.get(node)
        assert list(made.children[node]) == list(full.children[node])
        assert made.span(node) == full.span(node)


@pytest.mark.parametrize(("source", "edit"), MADE.values(), ids=MADE.keys())
def test_a_made_tree_laid_out_from_its_base_is_as_a_full_layout(source, edit):
    base = Layout(cst.parse_module(source))
    made = Layout(edit(base.module), base)
    _same_as_a_full_layout(made)
    again = Layout(_replace_inner_call(made.module) if "f(" in source else _insert_before_def(made.module), made)
    _same_as_a_full_layout(again)  # (a tree made from a made tree)


def test_a_made_tree_reuses_what_the_edits_left_alone():
    base = Layout(cst.parse_module("import torch\n\n\ndef train(model):\n    return model\n\n\nclass Net:\n    pass\n"))
    made = Layout(_insert_before_def(base.module), base)
    assert set(made._roots) == {base.module.body[0], base.module.body[1], base.module.body[2]}


def test_a_made_tree_that_holds_one_node_twice_says_so():
    base = Layout(cst.parse_module("import torch\ndef f(x):\n    return x\n"))
    function = base.module.body[1]
    twice = base.module.with_changes(body=[*base.module.body, function])
    inner = base.module.with_changes(body=[*base.module.body, function.body.body[0]])  # (inside a reused one too)
    assert Layout(twice, base).shared and Layout(twice).shared
    assert Layout(inner, base).shared and Layout(inner).shared
    assert not Layout(_insert_before_def(base.module), base).shared


SCOPED = ("import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        f = lambda y: [y * k for k in x]\n"
          "        return f(x)\n\n\nfor epoch in range(3):\n    key = lambda item: item[1]\n    if epoch:\n        def step():\n"
          "            return 1\n        print(sorted(data, key=key), step())\n")


def _subtree(layout: Layout, node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node` and every node below it, from the layout's children (a walk's order)."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(reversed(layout.children[current]))
    return found


@pytest.mark.parametrize("made", [False, True], ids=["first layout", "made layout"])
def test_the_extent_of_a_statement_or_lambda_is_its_stretch_of_the_order(made):
    layout = Layout(cst.parse_module(SCOPED))
    if made:
        layout = Layout(_insert_before_def(layout.module), layout)
    extended = [node for node in layout.order if layout.extent(node) is not None]
    assert {type(node) for node in extended} >= {cst.ClassDef, cst.FunctionDef, cst.Lambda, cst.For, cst.If,
                                                   cst.IndentedBlock, cst.SimpleStatementLine}
    assert not any(isinstance(node, (cst.Call, cst.Name, cst.Module)) for node in extended)
    for node in extended:
        first, last = layout.extent(node)
        assert layout.order[first:last] == _subtree(layout, node)
