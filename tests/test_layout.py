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
