"""Names read from imports, and lines counted for reported nodes only, agree with LibCST's analyses."""

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchport import targets
from torchport.migrate import migrate_source
from torchport.migrate.lines import node_lines
from torchport.migrate.names import ImportTable

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
    ("source", "name"),
    [
        ("from torch import cuda\ndef f(cuda):\n    return cuda.x\n", "cuda"),  # a parameter shadows it
        ("import torch\ndef f():\n    torch = None\n", "torch"),  # a local
        ("from torch.cuda import amp\ndef f():\n    from apex import amp\n", "amp"),  # a local import
        ("import torch as t\nclass A:\n    t = 1\n", "t"),  # a class attribute
        ("import torch\nx = [torch for torch in range(3)]\n", "torch"),  # a comprehension variable
        ("import torch\ndef f():\n    global torch\n", "torch"),
    ],
)
def test_a_torch_name_bound_another_way_in_a_function_or_class_is_ambiguous(source, name):
    table = ImportTable.of(source)
    assert name in table.ambiguous and name not in table.bindings


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
