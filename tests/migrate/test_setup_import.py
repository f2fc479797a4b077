"""TP022: a file that uses torch.npu without importing torch_npu (code partly ported by hand)
gets the import, before the first use that needs it."""

import sys
import types

import pytest

from _built_in_targets import BUILT_IN, added
from torchport import targets
from torchport.migrate import migrate_source
from torchport.migrate.rules.setup_import import SetupImportRule


def _npu(source: str) -> tuple[str, list]:
    result = migrate_source(source.encode(), targets.get("npu"), "t.py")
    assert result.error is None
    return result.source.decode(), result.findings


@pytest.mark.parametrize(("source", "expected", "row_line"), [
    ("import torch.npu\nfrom torch.npu import amp\n", "import torch_npu\nimport torch.npu\nfrom torch.npu import amp\n", 1),
    ("import os\nfrom torch.npu import amp\n", "import os\nimport torch_npu\nfrom torch.npu import amp\n", 2),
    ("import os\nfrom torch import npu\nnpu.synchronize()\n", "import os\nimport torch_npu\nfrom torch import npu\nnpu.synchronize()\n", 2),
    ("import torch\n\ntorch.npu.synchronize()\n", "import torch\nimport torch_npu\n\ntorch.npu.synchronize()\n", 1),
])
def test_the_import_comes_before_the_first_use_that_needs_it(source, expected, row_line):
    """(the row is at the statement the import is placed next to: the first import of torch.npu,
    else `import torch`)"""
    migrated, findings = _npu(source)
    assert migrated == expected
    assert [(f.code, f.start_line) for f in findings] == [("TP022", row_line)]


@pytest.mark.parametrize("source", [
    "import os\nimport sys\n",
    "import torch\nimport torch_npu\ntorch.npu.synchronize()\n",
    "import torch\nfrom torch_npu.contrib import transfer_to_npu\ntorch.npu.synchronize()\n",
    "import torch\nx = 'npu'\n",
])
def test_files_that_import_it_already_or_never_use_the_device_module_stay_as_they_are(source):
    assert _npu(source) == (source, [])


def test_a_cuda_file_that_also_uses_torch_npu_gets_one_import():
    migrated, _ = _npu("import torch\nfrom torch.npu import amp\ntorch.cuda.synchronize()\n")
    assert migrated == "import torch\nimport torch_npu\nfrom torch.npu import amp\ntorch.npu.synchronize()\n"


def test_only_targets_with_a_setup_import_have_the_rule():
    having = [n for n in targets.names() if SetupImportRule.applies_to(targets.get(n))]
    assert [n for n in having if n in BUILT_IN] == ["npu"]
    assert [n for n in having if n not in BUILT_IN] == [n for n in added() if targets.get(n).setup_import is not None]


IMPORTED_ALREADY = [
    "import torch_npu\n",
    "from torch_npu.contrib import transfer_to_npu\n",
    "import torch_npu.optim\n",
    "try:\n    import torch_npu\nexcept ImportError:\n    pass\n",
]


@pytest.mark.parametrize("imported", [*IMPORTED_ALREADY, ""])
@pytest.mark.parametrize("use", ["torch.npu.synchronize()\n", "x = torch.zeros(1).cuda()\n"])
def test_one_answer_decides_whether_a_file_gets_the_setup_import_whichever_step_adds_it(imported, use):
    """TP022 (a file that uses torch.npu) and the import tidying after the rules (a file migrated
    for CUDA, TP000) ask the same question: a script that imports torch_npu in any form gets no
    second import; one that does not gets exactly one."""
    source = f"import torch\n{imported}{use}"
    migrated, findings = _npu(source)
    setup_lines = lambda text: text.splitlines().count("import torch_npu")  # noqa: E731
    assert setup_lines(migrated) == setup_lines(imported) + (not imported)
    rows = [f.code for f in findings if f.message.startswith(("insert import torch_npu", "import torch_npu"))]
    assert rows == ([] if imported else ["TP022" if "npu" in use else "TP000"])


LATE_TORCH_SCRIPT = (
    "import os\n\ntry:\n    import comet_ml  # must be imported before torch\nexcept ImportError:\n    comet_ml = None\n\n"
    "import torch\n\n"
    "def train(model):\n"
    "    if torch.cuda.device_count() > 1:\n"
    "        model = torch.nn.DataParallel(model)\n"
    "    return model.cuda()\n"
)


@pytest.mark.parametrize("target", [name for name in targets.names() if name != "cuda"])
def test_helpers_of_a_script_that_imports_torch_after_a_try_block_come_after_torch(target, monkeypatch):
    """YOLOv5's train.py: its helpers landed above `import torch` and the output failed with NameError.
    (npu, xpu and accelerator write a one-device DataParallel helper here; every target's output imports.)"""
    source = migrate_source(LATE_TORCH_SCRIPT.encode(), targets.get(target), "train.py").source.decode()
    helper = "class OneDeviceDataParallel"
    if target in ("npu", "xpu", "accelerator"):
        assert helper in source
    if helper in source:
        assert source.index("import torch\n") < source.index(helper)
    setup = targets.get(target).setup_import
    if setup:  # (a vendor's package, not installed here: only imported)
        monkeypatch.setitem(sys.modules, setup, types.ModuleType(setup))
    namespace = {}
    exec(compile(source, "train.py", "exec"), namespace)  # (no NameError at import)
    assert (helper.split()[1] in namespace) is (helper in source)
