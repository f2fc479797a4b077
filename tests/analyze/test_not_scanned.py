"""`analyze --mode third-party` lists what it could not scan: imports that are not installed (with
the distribution to install, where it is known) and CUDA extensions (to port), each at its line."""

import csv
import importlib.util
import re
from pathlib import Path

import pytest

from _source_trees import write_tree

from torchport.analyze.third_party import unscanned
from torchport.analyze.third_party.distributions import DISTRIBUTIONS, _installed, distribution_of
from torchport.analyze.third_party.unscanned import CUDA_EXTENSION, CUDA_LIBRARY, NOT_INSTALLED, not_scanned

# Spelled as the public trainers spell them (YOLOv4's `from mish_cuda import MishCuda as Mish`).
TRAINER = {
    "train.py": (
        "import os\n"                                      # 1 the standard library
        "import torch\n"                                   # 2
        "import mish_cuda\n"                               # 3 a CUDA extension, by its name
        "from mish_cuda import MishCuda as Mish\n"         # 4
        "import torchvision.transforms as T\n"             # 5 not installed, no known distribution
        "import cv2\n"                                     # 6 not installed: opencv-python
        "from models import Net\n"                         # 7 the project's own
        "from . import helpers\n"                          # 8 the project's own, relative
        "try:\n"
        "    from sklearn.metrics import f1_score\n"       # 10 optional
        "except ImportError:\n"
        "    f1_score = None\n"
        "from ext import fused_cuda\n"                     # 13 built by setup.py
        "\n"
        "def main():\n"
        "    import skimage.io\n"                         # 16 inside a function: still an import
        "    return Net().cuda()\n"
    ),
    "models.py": "import torch\n\nclass Net(torch.nn.Module):\n    pass\n",
    "helpers.py": "",
    "setup.py": (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "\n"
        "setup(\n"
        "    name='ext',\n"
        "    ext_modules=[CUDAExtension('ext.fused_cuda', ['ext/csrc/fused.cpp', 'ext/csrc/fused_kernel.cu'])],\n"
        "    cmdclass={'build_ext': BuildExtension},\n"
        ")\n"
    ),
    "ext/__init__.py": "",
    "ext/csrc/fused_kernel.cu": "__global__ void k() {}\n",
}

EXPECTED = [
    ("setup.py", 6, "ext.fused_cuda", CUDA_EXTENSION, False),
    ("train.py", 3, "mish_cuda", CUDA_EXTENSION, False),
    ("train.py", 4, "mish_cuda", CUDA_EXTENSION, False),
    ("train.py", 5, "torchvision", NOT_INSTALLED, False),
    ("train.py", 6, "cv2", NOT_INSTALLED, False),
    ("train.py", 10, "sklearn", NOT_INSTALLED, True),
    ("train.py", 13, "ext.fused_cuda", CUDA_EXTENSION, False),
    ("train.py", 16, "skimage", NOT_INSTALLED, False),
]


@pytest.fixture(autouse=True)
def _absent():
    """The rows below are about modules that this Python lacks (the test venv never installs them)."""
    for name in ("mish_cuda", "torchvision", "cv2", "sklearn", "skimage", "torch_sparse", "cupy"):
        assert importlib.util.find_spec(name) is None, f"{name} is installed here: these cases need it absent"


def rows(found):
    return [(r.file, r.line, r.module, r.kind, r.optional) for r in found]


def one_file(tmp_path: Path, source: str, **others: str) -> list[tuple]:
    project = write_tree(tmp_path / "p", {"mod.py": source, **others})
    return [(line, module, kind) for _, line, module, kind, _ in rows(not_scanned(project))]


def test_a_trainer_gets_a_row_for_each_import_it_could_not_scan(tmp_path):
    assert rows(not_scanned(write_tree(tmp_path / "proj", TRAINER))) == EXPECTED


def test_each_row_says_what_to_do(tmp_path):
    found = {(r.file, r.line): r for r in not_scanned(write_tree(tmp_path / "proj", TRAINER))}
    assert found["train.py", 6].action.startswith("pip install opencv-python,")
    assert "pip install" not in found["train.py", 5].action and "torchvision" in found["train.py", 5].action
    assert "try/except ImportError" in found["train.py", 10].what
    assert "pure-torch fallback" in found["train.py", 3].action
    assert "setup.py:6 (CUDAExtension)" in found["train.py", 13].what


def test_a_single_script_reads_its_folder_as_the_project(tmp_path):
    project = write_tree(tmp_path / "proj", TRAINER)
    found = rows(not_scanned(project / "train.py"))
    assert [r[:3] for r in found] == [(f, line, m) for f, line, m, _, _ in EXPECTED if f == "train.py"]


def test_the_standard_library_and_the_projects_own_modules_are_never_listed(tmp_path):
    source = (
        "import os, sys\nimport collections.abc\nfrom __future__ import annotations\n"
        "import utils.io\nfrom .sibling import x\nfrom ..up import y\nimport torch.nn\nimport torchport\n"
    )
    assert one_file(tmp_path, source, **{"utils/io.py": "", "sibling.py": ""}) == []


def test_an_optional_import_is_listed_and_marked_so(tmp_path):
    source = (
        "try:\n    import cv2\nexcept Exception:\n    cv2 = None\n"
        "try:\n    import yaml_absent_a\nexcept:\n    pass\n"
        "import contextlib\nwith contextlib.suppress(ImportError):\n    import yaml_absent_b\n"
        "try:\n    import fast_absent\nexcept (ValueError, ModuleNotFoundError):\n    import slow_absent\n"
        "try:\n    import never_optional_absent\nexcept ValueError:\n    pass\n"
    )
    project = write_tree(tmp_path / "p", {"mod.py": source})
    assert [(r.module, r.optional) for r in not_scanned(project)] == [
        ("cv2", True), ("yaml_absent_a", True), ("yaml_absent_b", True), ("fast_absent", True),
        ("slow_absent", False),  # the fallback is what runs when the first is missing
        ("never_optional_absent", False),
    ]


@pytest.mark.parametrize("source, expected", [
    pytest.param("import opticalFlow_cuda_ext\n", [(1, "opticalFlow_cuda_ext", CUDA_EXTENSION)], id="a *_cuda_ext import"),
    pytest.param("from torch_sparse import spspmm_cuda\n", [(1, "torch_sparse.spspmm_cuda", CUDA_EXTENSION)],
                 id="a *_cuda submodule of a missing package"),
    pytest.param("import cupy as cp\n", [(1, "cupy", CUDA_LIBRARY)], id="a CUDA-only library"),
    pytest.param(
        "from torch.utils import cpp_extension\n"
        "neuron = cpp_extension.load(name='neuron', sources=['neuron.cpp', 'neuron_kernel.cu'], verbose=True)\n",
        [(2, "neuron", CUDA_EXTENSION)], id="cpp_extension.load of a .cu source"),
    pytest.param(
        "import torch.utils.cpp_extension\n"
        "ext = torch.utils.cpp_extension.load_inline('inl', cpp_sources=[''], cuda_sources=['__global__ void k(){}'])\n",
        [(2, "inl", CUDA_EXTENSION)], id="load_inline with cuda_sources"),
    pytest.param("from torch.utils.cpp_extension import load\nm = load('cpu_op', ['op.cpp'])\n", [],
                 id="a C++ extension is no CUDA extension"),
    pytest.param(
        "from torch.utils.cpp_extension import CppExtension, CUDAExtension, CUDA_HOME\n"
        "extension = CppExtension\n"
        "if CUDA_HOME is not None:\n"
        "    extension = CUDAExtension\n"
        "ext_modules = [extension('torch3d._C', sources)]\n",
        [(5, "torch3d._C", CUDA_EXTENSION)], id="CUDAExtension chosen where CUDA is found"),
])
def test_cuda_extensions_are_found_as_projects_spell_them(tmp_path, source, expected):
    assert one_file(tmp_path, source) == expected


def test_a_module_of_the_project_with_a_cuda_name_is_its_own_python(tmp_path):
    assert one_file(tmp_path, "import conv2d_cuda_ext\nfrom ops import roi_cuda\n",
                    **{"conv2d_cuda_ext.py": "", "ops.py": "def roi_cuda(): pass\n"}) == []


def test_an_extension_built_in_the_package_is_found_at_its_relative_import(tmp_path):
    """`CUDAExtension(name='pkg._ext', ...)` computed in a function of setup.py, and
    `from . import _ext` inside pkg: the import of compiled CUDA code."""
    project = write_tree(tmp_path / "repo", {
        "setup.py": (
            "import torch.utils.cpp_extension as cpp\n"
            "def extensions():\n"
            "    return [cpp.CUDAExtension(name='pkg._ext', sources=['pkg/src/k.cu'])]\n"
        ),
        "pkg/__init__.py": "from . import _ext\n",
    })
    assert rows(not_scanned(project)) == [
        ("pkg/__init__.py", 1, "pkg._ext", CUDA_EXTENSION, False),
        ("setup.py", 3, "pkg._ext", CUDA_EXTENSION, False),
    ]


def test_a_library_compiled_beside_cuda_sources_is_a_cuda_extension(tmp_path):
    project = write_tree(tmp_path / "repo", {
        "train.py": "from pkg import _C\nfrom pkg import _cpp\n",
        "pkg/__init__.py": "",
        "pkg/csrc/kernel.cu": "__global__ void k() {}\n",
        "pkg/_C.cpython-311-x86_64-linux-gnu.so": "\x7fELF not really\n",
        "cpp/_cpp.cpython-311-x86_64-linux-gnu.so": "\x7fELF no CUDA near it\n",
    })
    assert [(r.file, r.line, r.module) for r in not_scanned(project)] == [
        ("pkg/_C.cpython-311-x86_64-linux-gnu.so", 0, "pkg._C"),
        ("train.py", 1, "pkg._C"),
    ]


def test_only_the_files_given_are_read_and_rows_show_the_prefix(tmp_path):
    project = write_tree(tmp_path / "proj", {"a.py": "import cv2\n", "b.py": "import cv2\n"})
    found = not_scanned(project, Path("proj"), [Path("b.py")])
    assert [(r.file, r.line) for r in found] == [("proj/b.py", 1)]


def test_the_text_filter_parses_every_file_that_may_hold_a_row(tmp_path, monkeypatch):
    """Files are parsed only where their text shows an import that may be a row: the rows are
    the same as when every file is parsed."""
    tricky = {
        "continued.py": "import os, \\\n    cv2\n",
        "oneline.py": "if True: import cv2\n",
        "semicolon.py": "import os; import cv2\n",
        "parenthesised.py": "from cv2 import (\n    imread,\n)\n",
        "commented.py": "# import cv2 would be nice\nimport os\n",
        "plain.py": "import os\nimport torch\nfrom typing import List\n",
    }
    project = write_tree(tmp_path / "p", {**TRAINER, **tricky})
    filtered = rows(not_scanned(project))
    monkeypatch.setattr(unscanned._Project, "worth_reading", lambda self, text, relative: True)
    assert filtered == rows(not_scanned(project))
    assert {f for f, *_ in filtered} >= {"continued.py", "oneline.py", "semicolon.py", "parenthesised.py"}


def test_a_text_that_the_patterns_cannot_read_is_parsed():
    assert unscanned._absolute_tops(b"import a.b as c, d\nfrom e.f import g\nfrom . import h\n") == {"a", "d", "e"}
    assert unscanned._absolute_tops(b"import os, \\\n    cv2\n") is None
    assert unscanned._absolute_tops(b'"""to use it, import cv2"""\n') is None


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_each_distribution_in_the_table_is_one_that_pip_would_not_find_by_the_import_name():
    assert [i for i, d in DISTRIBUTIONS.items() if _normalized(i) == _normalized(d)] == []


def test_the_table_agrees_with_python_for_what_is_installed_here():
    installed = _installed()
    checked = {name: installed[name] for name in DISTRIBUTIONS if name in installed}
    assert checked, "nothing of the table is installed here (libcst needs PyYAML): the test checks nothing"
    # (distribution names compare as pip compares them: Pillow's metadata names it "pillow" since 11.x)
    assert ({name: _normalized(DISTRIBUTIONS[name]) for name in checked}
            == {name: _normalized(dists[0]) for name, dists in checked.items()})


def test_an_import_without_a_known_distribution_is_named_alone():
    assert distribution_of("cv2") == "opencv-python"
    assert distribution_of("torchvision") is None


def test_the_cli_says_what_it_could_not_scan_beside_the_third_party_count(cli, tmp_path):
    project = write_tree(tmp_path / "proj", TRAINER)
    code, out, err = cli("analyze", project, "-o", tmp_path / "out", "-m", "third-party")
    assert code == 0, err
    lines = out.splitlines()
    third = next(i for i, line in enumerate(lines) if line.lstrip().startswith("third-party"))
    assert re.fullmatch(r"\s+not scanned\s+6\s+\(not_scanned\.csv\): 2 CUDA extensions, 4 not installed", lines[third + 1])
    assert "train.py:6  cv2: not installed (pip install opencv-python)" in out
    assert "train.py:10  sklearn: not installed (pip install scikit-learn), optional" in out
    with (tmp_path / "out" / "torchport_report" / "not_scanned.csv").open(newline="") as handle:
        table = list(csv.reader(handle))
    assert table[0] == ["File", "Start Line", "Import", "What", "Action"]
    assert [tuple(row[:3]) for row in table[1:]] == [(f, str(line), m) for f, line, m, _, _ in EXPECTED]


def test_with_package_only_that_package_is_reported(cli, tmp_path):
    project = write_tree(tmp_path / "proj", TRAINER)
    code, out, err = cli("analyze", project, "-o", tmp_path / "out", "-m", "third-party", "--package", "mish_cuda")
    assert code == 2 and err.count("\n") == 1 and "no installed package named mish_cuda" in err
    code, out, err = cli("analyze", project, "-o", tmp_path / "out2", "-m", "third-party", "--package", "pytest")
    assert code == 0, err
    assert "not scanned" not in out and not (tmp_path / "out2" / "torchport_report" / "not_scanned.csv").exists()


def test_a_cuda_only_kernel_package_gets_no_install_advice(tmp_path):
    """(flash-attn, xformers, bitsandbytes, triton, mamba_ssm exist for CUDA alone: installing them
    on the NPU is no way out; the row says what torchport does, or what to use instead)"""
    write_tree(tmp_path, {"train.py": (
        "import torch\n"
        "from flash_attn import flash_attn_func\n"
        "import bitsandbytes as bnb\n"
        "import triton\n"
        "from mamba_ssm import Mamba\n"
    )})
    rows = {row.module: row for row in not_scanned(tmp_path) if importlib.util.find_spec(row.module) is None}
    assert set(rows) == {"flash_attn", "bitsandbytes", "triton", "mamba_ssm"}
    for row in rows.values():
        assert row.kind == CUDA_LIBRARY and "install" not in row.action.replace("nothing to install", ""), row
    assert "torchport's stand-in" in rows["flash_attn"].action and "TP029" in rows["bitsandbytes"].action
    assert "reference path" in rows["mamba_ssm"].action and "Triton" in rows["triton"].action


def test_a_project_folder_named_like_a_kernel_package_hides_it_only_where_python_finds_that_folder(tmp_path):
    """(mamba keeps its kernels in mamba_ssm/ops/triton/ and ops/tilelang/: `import triton` in them
    is the package, not the folder; a script beside such a folder imports the folder)"""
    write_tree(tmp_path, {
        "ssm/__init__.py": "",
        "ssm/ops/__init__.py": "",
        "ssm/ops/triton/__init__.py": "",
        "ssm/ops/triton/norm.py": "import triton\nimport tilelang\nimport cutlass.cute as cute\nimport quack\n",
        "ssm/ops/tilelang/__init__.py": "",
        "tools/triton/__init__.py": "",
        "tools/bench.py": "import triton\n",
    })
    found = {(row.file, row.module): row for row in not_scanned(tmp_path) if importlib.util.find_spec(row.module) is None}
    assert set(found) == {("ssm/ops/triton/norm.py", name) for name in ("triton", "tilelang", "cutlass", "quack")}
    for row in found.values():
        assert row.kind == CUDA_LIBRARY and "install" not in row.action.replace("nothing to install", ""), row
