"""`analyze --mode third-party`: where a library hard-codes CUDA, found without importing it."""

import csv
import importlib.metadata
import sys
from pathlib import Path

import pytest

from _source_trees import write_tree

from torchport.analyze import third_party
from torchport.analyze.third_party import (
    ThirdPartyFinding,
    imported_folders,
    locate_package,
    scan_library,
    survey_library,
    write_third_party_csv,
)
from torchport.errors import UsageError

# Importing this package fails: the tests prove that locating and scanning never run it.
FAKELIB = {
    "__init__.py": "raise RuntimeError('fakelib was imported')\n",
    "model.py": (
        "import torch\n"
        "import torch.cuda as tc\n"
        "\n"
        "\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.layer = torch.nn.Linear(2, 2).cuda()\n"
        "\n"
        "    def forward(self, x):\n"
        "        y = x.to(device='cuda:0')\n"
        "        tc.synchronize()\n"
        "        return self.layer(y)\n"
    ),
    "ops.py": (
        "from torch.utils import cpp_extension\n"
        "\n"
        "_ext = cpp_extension.load(name='fused', sources=['fused.cpp', 'kernel.cu'])\n"
    ),
    "setup.py": (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "\n"
        "setup(\n"
        "    name='fakelib',\n"
        "    ext_modules=[CUDAExtension('fakelib._C', ['csrc/kernel.cu'])],\n"
        "    cmdclass={'build_ext': BuildExtension},\n"
        ")\n"
    ),
    "csrc/kernel.cu": "__global__ void add(float *x) { x[threadIdx.x] += 1; }\n",
    "plain.py": "def add(a, b):\n    return a + b\n",
    "broken.py": "def cuda(:\n",  # mentions CUDA, does not parse
}

EXPECTED = [
    ("fakelib/csrc/kernel.cu", 0, ".cu"),
    ("fakelib/model.py", 8, ".cuda()"),
    ("fakelib/model.py", 11, 'device="cuda:0"'),
    ("fakelib/model.py", 12, "torch.cuda.synchronize"),
    ("fakelib/ops.py", 3, "torch.utils.cpp_extension.load"),
    ("fakelib/setup.py", 6, "torch.utils.cpp_extension.CUDAExtension"),
    ("fakelib/setup.py", 7, "torch.utils.cpp_extension.BuildExtension"),
]


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder on sys.path that holds fakelib, as site-packages would."""
    folder = tmp_path / "site"
    write_tree(folder / "fakelib", FAKELIB)
    monkeypatch.syspath_prepend(str(folder))
    return folder


def rows(findings):
    return [(f.file, f.line, f.api) for f in findings]


def scan_source(tmp_path, source: str, label: str = "lib") -> list[ThirdPartyFinding]:
    write_tree(tmp_path / "lib", {"mod.py": source})
    return scan_library(tmp_path / "lib", label)


def test_every_cuda_hard_code_of_a_library_is_one_row_at_its_line(site):
    assert rows(scan_library(site / "fakelib", "fakelib")) == EXPECTED
    assert "fakelib" not in sys.modules


def test_files_that_do_not_parse_are_skipped_and_counted(site):
    scan = survey_library(site / "fakelib", "fakelib")
    assert scan.unparseable == ["fakelib/broken.py"]
    assert (scan.python_files, scan.parsed) == (6, 3)  # plain.py and __init__.py never mention CUDA


def test_messages_say_what_run_reaches_and_where_in_the_library(site):
    found = {f.api: f.message for f in scan_library(site / "fakelib", "fakelib")}
    assert found[".cuda()"].startswith("hard-codes the CUDA device: torchport run redirects it")
    assert found[".cuda()"].endswith("(in fakelib.model.Net.__init__)")
    assert "torchport run redirects it" in found["torch.cuda.synchronize"]
    assert found["torch.utils.cpp_extension.load"].startswith("a CUDA extension: neither migrate nor run")
    assert found[".cu"].startswith("a CUDA kernel source (line 0: the whole file)")
    assert found["torch.utils.cpp_extension.CUDAExtension"].endswith("(in fakelib.setup, at import)")


def test_torch_cuda_names_resolve_through_aliases_and_function_imports(tmp_path):
    source = (
        "from torch import cuda\n"
        "from torch.cuda import synchronize as sync\n"
        "def f():\n"
        "    from torch.backends import cudnn\n"
        "    cudnn.benchmark = True\n"
        "    cuda.Event()\n"
        "    return sync\n"
        "def g(cudnn):\n"  # no import here: cudnn is a parameter
        "    return cudnn.x, torch.version.cuda\n"
    )
    assert rows(scan_source(tmp_path, source)) == [
        ("lib/mod.py", 5, "torch.backends.cudnn.benchmark"),
        ("lib/mod.py", 6, "torch.cuda.Event"),
        ("lib/mod.py", 7, "torch.cuda.synchronize"),
        ("lib/mod.py", 9, "torch.version.cuda"),
    ]


def test_devices_are_found_where_they_are_given_and_nowhere_else(tmp_path):
    source = (
        "import torch\n"
        "def f(x, device='cuda'):\n"
        "    torch.zeros(2, device='cuda:1')\n"
        "    x.to('cuda')\n"
        "    self.device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "    torch.autocast('cuda')\n"
        "    print('cuda', x.device.type == 'cuda')\n"  # not a device: left alone
        "    return torch.load('ckpt/cuda_best.pt')\n"
    )
    assert rows(scan_source(tmp_path, source)) == [
        ("lib/mod.py", 2, 'device="cuda"'),
        ("lib/mod.py", 3, 'device="cuda:1"'),
        ("lib/mod.py", 4, '.to("cuda")'),
        ("lib/mod.py", 5, 'device="cuda"'),
        ("lib/mod.py", 5, "torch.cuda.is_available"),
        ("lib/mod.py", 6, 'torch.autocast("cuda")'),
    ]


def test_nccl_is_mapped_only_where_a_process_group_is_made(tmp_path):
    source = (
        "import torch.distributed as dist\n"
        "dist.init_process_group(backend='nccl')\n"
        "if dist.get_backend() == 'nccl':\n"
        "    pass\n"
    )
    first, second = scan_source(tmp_path, source)
    assert (first.line, first.api) == (2, 'init_process_group("nccl")')
    assert first.message.startswith("the NCCL backend: torchport run maps it")
    assert (second.line, second.api) == (3, '"nccl"')
    assert "false on the target" in second.message


def test_torch_cuda_apis_that_run_does_not_patch_say_so(tmp_path):
    source = "import torch\ntorch.cuda._sleep(10)\ntorch.cuda.memory.memory_allocated()\n"
    unpatched, patched = scan_source(tmp_path, source)
    assert unpatched.message.startswith(third_party.CUDA_API_UNPATCHED)
    assert patched.message.startswith(third_party.CUDA_API)


def test_libraries_that_see_the_real_torch_cuda_are_told_apart(tmp_path, monkeypatch):
    monkeypatch.delenv("TORCHPORT_HONEST_TO", raising=False)
    (finding,) = scan_source(tmp_path, "import torch\ntorch.cuda.synchronize()\n", label="accelerate")
    assert finding.message.startswith("uses torch.cuda: torchport run gives accelerate the real torch.cuda")


def test_imports_of_cuda_only_libraries_and_compiled_cuda_are_found(tmp_path):
    write_tree(tmp_path / "lib", {"mod.py": "import cupy as cp\nfrom numba import cuda, jit\n"})
    (tmp_path / "lib" / "_C.so").write_bytes(b"\x7fELF....__cudaRegisterFatBinary....")
    (tmp_path / "lib" / "_cpu.so").write_bytes(b"\x7fELF....")
    assert rows(scan_library(tmp_path / "lib", "lib")) == [
        ("lib/_C.so", 0, "compiled CUDA"),
        ("lib/mod.py", 1, "import cupy"),
        ("lib/mod.py", 2, "import numba.cuda"),
    ]


def test_a_single_module_library_is_shown_by_its_file_name(tmp_path):
    (tmp_path / "six.py").write_text("def f(x):\n    return x.cuda()\n")
    assert rows(scan_library(tmp_path / "six.py", "six")) == [("six.py", 2, ".cuda()")]


def test_the_csv_has_ascends_columns_and_the_line_in_the_message(tmp_path, site):
    path = tmp_path / "full_unsupported_results.csv"
    write_third_party_csv(path, scan_library(site / "fakelib", "fakelib"))
    table = list(csv.reader(path.open(encoding="utf-8")))
    assert table[0] == ["File", "3rd-party API", "Message"]
    assert table[1][:2] == ["fakelib/csrc/kernel.cu", ".cu"]
    assert table[2][:2] == ["fakelib/model.py", ".cuda()"] and table[2][2].startswith("line 8: hard-codes")
    assert len(table) == 1 + len(EXPECTED)


def test_a_package_is_located_without_being_imported(site):
    assert locate_package("fakelib") == site / "fakelib"
    assert locate_package("fakelib.model") == site / "fakelib" / "model.py"
    assert "fakelib" not in sys.modules


def test_an_installed_package_is_located_by_its_folder():
    folder = locate_package("libcst")
    assert (folder / "__init__.py").is_file() and folder.name == "libcst"


def test_a_distribution_name_stands_for_the_package_it_installs():
    try:
        importlib.metadata.distribution("pytorch-lamb")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("pytorch-lamb is not installed")
    assert locate_package("pytorch-lamb").name == "pytorch_lamb"


def test_a_missing_package_is_a_usage_error():
    expected = r"^no installed package named no_such_pkg_x \(is it installed in this Python\?\)$"
    with pytest.raises(UsageError, match=expected):
        locate_package("no_such_pkg_x")


def test_a_namespace_package_is_one_folder_or_asks_for_a_package_inside_it(tmp_path, monkeypatch):
    for portion in ("a", "b"):
        write_tree(tmp_path / portion / "nsx" / f"part_{portion}", {"__init__.py": ""})
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    assert locate_package("nsx") == tmp_path / "a" / "nsx"
    monkeypatch.syspath_prepend(str(tmp_path / "b"))
    with pytest.raises(UsageError, match="namespace package spread over 2 folders"):
        locate_package("nsx")
    assert locate_package("nsx.part_b") == tmp_path / "b" / "nsx" / "part_b"


def test_the_installed_libraries_a_project_imports_are_listed(tmp_path, site):
    src = write_tree(tmp_path / "src", {
        "train.py": (
            "import os\nimport torch\nimport fakelib.model\nfrom mylocal import x\nfrom . import rel\n"
            "import not_installed_anywhere\n"
        ),
        "mylocal.py": "x = 1\n",
        "fakelib_local/__init__.py": "",
    })
    assert imported_folders(src) == [site / "fakelib"]
    assert imported_folders(src / "train.py") == [site / "fakelib"]
    assert "fakelib" not in sys.modules


def test_a_module_of_the_project_hides_an_installed_one_of_the_same_name(tmp_path, site):
    src = write_tree(tmp_path / "src", {"train.py": "import fakelib\n", "fakelib.py": ""})
    assert imported_folders(src) == []


def test_a_folder_that_does_not_exist_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        scan_library(tmp_path / "nowhere", "nowhere")
