"""Names read from imports, and lines counted for reported nodes only, agree with LibCST's analyses."""

import ast
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchport import targets
from torchport.migrate import migrate_source
from torchport.migrate.lines import node_lines
from torchport.import_table import ImportTable
from torchport.migrate.rules import RULES
from torchport.migrate.rules.base.context import FileContext
from torchport.migrate.rules.base.rules_pass import RulesPass

GOLDEN = Path(__file__).parent / "golden"


def test_imports_say_what_names_refer_to():
    table = ImportTable.of(
        "import torch\nimport torch.cuda as tc\nfrom torch.cuda.amp import autocast as ac\n"
        "from torch import cuda\nimport os.path\nfrom . import sibling\n"
    )
    assert table.qualified_name("tc.synchronize") == "torch.cuda.synchronize"
    assert table.qualified_name("ac") == "torch.cuda.amp.autocast"
    assert table.qualified_name("cuda.Event") == "torch.cuda.Event"
    assert table.qualified_name("torch.cuda.is_available") == "torch.cuda.is_available"
    assert table.qualified_name("os.path.join") == "os.path.join"
    assert table.qualified_name("sibling.f") == ".sibling.f"
    assert table.qualified_name("model.cuda") is None


@pytest.mark.parametrize(
    ("source", "name", "shadowed_in"),
    [
        ("from torch import cuda\ndef f(cuda):\n    return cuda.x\n", "cuda", {"f"}),  # a parameter shadows it
        ("import torch\ndef f():\n    torch = None\n", "torch", {"f"}),  # a local
        ("from torch.cuda import amp\ndef f():\n    from apex import amp\n", "amp", {"f"}),  # a local import
        ("import torch as t\nclass A:\n    t = 1\n", "t", {"A"}),  # a class attribute
        ("import torch\nclass A:\n    def g(self):\n        def h(torch): pass\n", "torch", {"h"}),
        ("import torch\nx = [torch for torch in range(3)]\n", "torch", None),  # a comprehension variable
        ("import torch\ndef f():\n    global torch\n", "torch", None),  # any use may see f's binding
        ("from torch import cuda\ndef f():\n    cuda = 1\ncuda = 2\n", "cuda", None),  # rebound at module level too
    ],
)
def test_a_torch_name_bound_another_way_in_a_function_or_class_is_ambiguous(source, name, shadowed_in):
    """Only a scope analysis can tell what a use inside the functions and classes that rebind
    the name sees; where those are known by name, a use outside them sees the module's import."""
    table = ImportTable.of(source)
    assert name in table.ambiguous
    if shadowed_in is None:
        assert name not in table.bindings and name not in table.shadowed_in
    else:
        assert table.shadowed_in[name] == shadowed_in and table.qualified_name(name) in ("torch", "torch.cuda", "torch.cuda.amp")


def test_uses_outside_the_functions_that_rebind_a_name_need_no_scope_analysis():
    source = (
        b"import torch\n"
        b"def helper(**kwargs):\n"
        b"    torch = kwargs.get('torch')\n"
        b"    return torch.cuda.is_available()\n"
        b"def train(x):\n"
        b"    torch.cuda.synchronize()\n"
        b"    return x.cuda()\n"
    )
    module = cst.parse_module(source)
    context = FileContext(target=targets.get("npu"), path="x.py", module=module, imports=ImportTable.of(source))
    module.visit(RulesPass([rule(context) for rule in RULES]))
    assert context.wrapper is not None  # (helper's own `torch` needed one)
    assert [f.api for f in context.findings() if f.api] == ["torch.cuda.synchronize"]

    outside_only = source.replace(b"    return torch.cuda.is_available()\n", b"    return 1\n")
    module = cst.parse_module(outside_only)
    context = FileContext(target=targets.get("npu"), path="x.py", module=module, imports=ImportTable.of(outside_only))
    module.visit(RulesPass([rule(context) for rule in RULES]))
    assert context.wrapper is None
    migrated = migrate_source(source, targets.get("npu")).source.decode()
    assert "    return torch.cuda.is_available()" in migrated and "    torch.npu.synchronize()" in migrated


@pytest.mark.parametrize(
    ("source", "name", "meaning"),
    [
        ("import torch\ntorch = None\n", "torch", "torch"),
        ("from torch.cuda import amp\nfrom apex import amp\n", "amp", "torch.cuda.amp"),
        ("import torch as t\nfor t in range(3):\n    pass\n", "t", "torch"),
        ("import torch\ndef f():\n    import torch\n    return torch\n", "torch", "torch"),
    ],
)
def test_module_level_rebinding_leaves_the_torch_meaning(source, name, meaning):
    """A scope analysis sees every module-level binding at once, and a torch one decides."""
    table = ImportTable.of(source)
    assert not table.ambiguous
    assert table.qualified_name(name) == meaning


def test_other_names_may_be_rebound_freely():
    table = ImportTable.of("import torch\nimport os\ndef f(os):\n    pass\n")
    assert not table.ambiguous and table.qualified_name("torch.cuda") == "torch.cuda"


def test_shadowed_names_are_still_resolved_by_scope():
    source = b"from torch import cuda\ndef f(cuda):\n    return cuda.synchronize()\ncuda.synchronize()\n"
    migrated = migrate_source(source, targets.get("npu")).source.decode().splitlines()
    assert "    return cuda.synchronize()" in migrated
    assert migrated[-1] == "torch.npu.synchronize()"


def test_names_spelled_like_an_import_are_not_references_to_it():
    source = b"import torch\nfrom torch.cuda import amp\nrun(amp=True)\nprint(config.amp)\ndef f(amp=1):\n    pass\n"
    migrated = migrate_source(source, targets.get("npu")).source.decode()
    assert "run(amp=True)" in migrated and "config.amp" in migrated and "def f(amp=1)" in migrated


@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.glob("*.py")))
def test_lines_match_libcst_positions_for_every_node(case):
    module = cst.parse_module((GOLDEN / case).read_bytes())
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = node_lines(module, set(positions))
    assert lines == {node: (p.start.line, p.end.line) for node, p in positions.items()}


@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.glob("*.py")))
def test_lines_from_the_statements_alone_match_libcst_positions(case):
    """Printing only the top-level statements that hold the nodes, placed by `ast`'s line of
    each statement, gives the same lines as printing the whole module."""
    source = (GOLDEN / case).read_bytes()
    module = cst.parse_module(source)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    parents = {}

    class Parents(cst.CSTVisitor):
        def on_visit(self, node):
            for child in node.children:
                parents[child] = node
            return True

    module.visit(Parents())
    statement_lines = tuple(s.lineno for s in ast.parse(source).body)
    wanted = {node for node in positions if node is not module}
    lines = node_lines(module, wanted, statement_lines, parents)
    assert lines == {node: (p.start.line, p.end.line) for node, p in positions.items() if node is not module}


def test_lines_of_decorated_and_semicolon_statements():
    source = b"# header\n\nimport torch; import os\n\n# about f\n@decorate(\n    1)\n@other\ndef f():\n    torch.cuda.synchronize()\n"
    result = migrate_source(source, targets.get("npu"), "x.py")
    assert [(f.start_line, f.api) for f in result.findings if f.api] == [(10, "torch.cuda.synchronize")]
