"""The NPU conversion reads lines and parents from the file's layout, as every other rewriting
step does, and gets what LibCST's own providers give."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from _npu_cases import CASES
from torchport.layout import Layout
from torchport.npu_to_cuda.reading import Reader


def _sources():
    return [(case.id, case.values[0]) for case in CASES]


@pytest.mark.parametrize(("name", "source"), _sources(), ids=[name for name, _ in _sources()])
def test_the_reader_gives_the_lines_and_parents_libcsts_providers_give(name, source):
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    lines, parents = wrapper.resolve(PositionProvider), wrapper.resolve(ParentNodeProvider)
    reader = Reader()
    reader.layout = Layout(module)
    for node in lines:
        assert reader.line(node) == lines[node].start.line, cst.Module([]).code_for_node(node)
        assert reader.parent(node) is parents.get(node)
