"""Our import edits: removals give what LibCST's RemoveImportsVisitor gives, without its cost; additions go where
isort puts them (LibCST's AddImportsVisitor puts them after the first block of imports)."""

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import RemoveImportsVisitor

from torchport import targets
from torchport.migrate import imports
from torchport.import_table import ImportTable
from torchport.migrate.rules import RULES
from torchport.migrate.rules.base.context import FileContext
from torchport.migrate.rules.base.rules_pass import RulesPass

ADDED = [  # (a module, the module with `import time` and `import contextlib` added, as isort places them)
    ("x = 1\n", "import contextlib\nimport time\n\nx = 1\n"),
    ('"""Docstring."""\nimport os\n\nx = 1\n', '"""Docstring."""\nimport contextlib\nimport os\nimport time\n\nx = 1\n'),
    ("__strict__ = True\nimport os\nx = 1\n", "__strict__ = True\nimport contextlib\nimport os\nimport time\nx = 1\n"),
    ("import os\nimport sys\n# a comment\nx = 1\n", "import contextlib\nimport os\nimport sys\nimport time\n# a comment\nx = 1\n"),
    ("import os\n\n\ndef f():\n    import json\n", "import contextlib\nimport os\nimport time\n\n\ndef f():\n    import json\n"),
    ("from __future__ import annotations\nimport os\nx = 1\nimport late\n",
     "from __future__ import annotations\nimport contextlib\nimport os\nimport time\nx = 1\nimport late\n"),
    ("", "import contextlib\nimport time"),  # (an empty file has no final line break)
    # the standard library's section, made where the module has none, before the other packages
    ("import torch\nimport torchvision\n\nx = 1\n", "import contextlib\nimport time\n\nimport torch\nimport torchvision\n\nx = 1\n"),
    ("from __future__ import annotations\n\nimport torch\n",
     "from __future__ import annotations\n\nimport contextlib\nimport time\n\nimport torch\n"),
    ("from . import utils\n", "import contextlib\nimport time\n\nfrom . import utils\n"),
    # in order among the plain imports of that section, before its `from` imports
    ("import argparse\n\nimport torch\n", "import argparse\nimport contextlib\nimport time\n\nimport torch\n"),
    ("from pathlib import Path\n\nimport torch\n", "import contextlib\nimport time\nfrom pathlib import Path\n\nimport torch\n"),
    ("import abc\nimport zlib\n\n# torch\nimport torch\n", "import abc\nimport contextlib\nimport time\nimport zlib\n\n# torch\nimport torch\n"),
    ("import os\n\n# for plots\nimport matplotlib\n", "import contextlib\nimport os\nimport time\n\n# for plots\nimport matplotlib\n"),
]


@pytest.mark.parametrize(("source", "expected"), ADDED)
def test_added_imports_go_where_isort_puts_them(source, expected):
    assert imports.add(cst.parse_module(source), ["time", "contextlib"]).code == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import torch\nimport torch.nn as nn\nimport torchvision\nfrom torch import optim\n",
         "import torch\nimport torch.nn as nn\nimport torch_npu\nimport torchvision\nfrom torch import optim\n"),
        ("import os\n\nimport numpy as np\nfrom torch import nn\n", "import os\n\nimport numpy as np\nimport torch_npu\nfrom torch import nn\n"),
        ("import os\nsys.path.insert(0, '.')\nimport torch\n", "import os\nsys.path.insert(0, '.')\nimport torch\nimport torch_npu\n"),
    ],
)
def test_a_package_that_extends_torch_goes_with_torch(source, expected):
    assert imports.insert_after_torch_import(cst.parse_module(source), "torch_npu").code == expected


@pytest.mark.parametrize(
    ("source", "unused"),
    [
        ("import torch.cuda\nimport torch\nx = 1\n", [("torch.cuda", None, None)]),
        ("import torch.cuda as tc\nx = 1\n", [("torch.cuda", None, "tc")]),
        ("import torch.cuda as tc\ntc.synchronize()\n", [("torch.cuda", None, "tc")]),
        ("from torch.cuda.amp import autocast, GradScaler\ns = GradScaler()\n",
         [("torch.cuda.amp", "autocast", None), ("torch.cuda.amp", "GradScaler", None)]),
        ("from torch.cuda import amp as a, Event\nimport os\nos.x\nEvent()\n",
         [("torch.cuda", "amp", "a"), ("torch.cuda", "Event", None)]),
    ],
)
def test_removing_unused_imports_matches_libcst(source, unused):
    module = cst.parse_module(source)
    ours, removed = imports.remove_unused(module, unused)
    theirs = RemoveImportsVisitor(CodemodContext(), unused).transform_module(module).code
    assert ours.code == theirs
    assert removed == (theirs != source)


def test_a_statement_left_alone_after_a_semicolon_loses_the_semicolon():
    """(RemoveImportsVisitor leaves `import os; ` behind.)"""
    module = cst.parse_module("import os; from torch.cuda import Event\nos.x\n")
    ours, removed = imports.remove_unused(module, [("torch.cuda", "Event", None)])
    assert (ours.code, removed) == ("import os\nos.x\n", True)


def test_a_name_a_string_spells_is_kept():
    """`__all__` and string annotations refer to names too."""
    module = cst.parse_module('from torch.cuda import Event\n__all__ = ["Event"]\n')
    assert imports.remove_unused(module, [("torch.cuda", "Event", None)]) == (module, False)


def test_names_no_rule_acts_on_never_start_a_scope_analysis():
    """`S` is imported from torch and also a parameter: only a scope analysis could tell which
    binding a use sees; no rule cares about either, so none runs."""
    source = b"from torch.testing import S\nimport torch\ndef f(S=S):\n    return S + 1\ntorch.cuda.synchronize()\n"
    module = cst.parse_module(source)
    context = FileContext(target=targets.get("npu"), path="x.py", module=module, imports=ImportTable.of(source))
    assert "S" in context.imports.ambiguous
    module.visit(RulesPass([rule(context) for rule in RULES]))
    assert context.wrapper is None
    assert [f.api for f in context.findings()] == ["torch.cuda.synchronize"]


# (a module whose torch import comes late, a statement that uses torch, the module with it in place)
LATE_TORCH = [
    pytest.param(
        "import os\n\ntry:\n    import comet_ml  # before torch\nexcept ImportError:\n    comet_ml = None\n\n"
        "import numpy as np\nimport torch\nfrom torch import nn\n\nFILE = 1\n",
        "import os\n\ntry:\n    import comet_ml  # before torch\nexcept ImportError:\n    comet_ml = None\n\n"
        "import numpy as np\nimport torch\nfrom torch import nn\nT = torch.float32\n\nFILE = 1\n",
        id="after the import lines that hold torch's, past a try block that comes before them",
    ),
    pytest.param(
        "import os\ntry:\n    import torch\nexcept ImportError:\n    torch = None\nX = 1\n",
        "import os\ntry:\n    import torch\nexcept ImportError:\n    torch = None\nT = torch.float32\nX = 1\n",
        id="after the try block that imports torch",
    ),
    pytest.param(
        "import torch\nimport os\nX = 1\nimport late\n",
        "import torch\nimport os\nX = 1\nimport late\nT = torch.float32\n",
        id="torch imported first: after the last import before any block, as before",
    ),
]


@pytest.mark.parametrize(("source", "expected"), LATE_TORCH)
def test_a_definition_goes_below_the_modules_first_torch_import(source, expected):
    assert imports.insert_after_imports(cst.parse_module(source), "T = torch.float32").code == expected
