"""Reference optimizers for the fused-optimizer tests.

timm 1.0.31, pytorch-pretrained-bert 0.6.2 and pytorch-lamb 1.0.0 are test dependencies installed
with ``--no-deps`` (see the Makefile's REFS). Their package ``__init__`` files import torchvision,
requests or tensorboardX, so the optimizer modules are loaded on their own: timm's under stub
``timm`` / ``timm.optim`` packages whose ``__path__`` points at the installed directories, BERT's
``optimization.py`` by file path, pytorch-lamb's ``lamb.py`` by file path with a stub
``tensorboardX`` (it only names ``SummaryWriter`` in a type hint).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path

import pytest
import torch


def _find_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package) if package not in sys.modules else None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@pytest.fixture(scope="session")
def timm_optim():
    """timm's Lamb, AdamP and RMSpropTF without importing timm's package (and torchvision)."""
    saved = {k: sys.modules.get(k) for k in ("timm", "timm.optim")}
    root = _find_dir("timm") if saved["timm"] is None else Path(saved["timm"].__path__[0])
    if root is None or not (root / "optim" / "lamb.py").exists():
        pytest.skip("timm==1.0.31 is not installed (make venv installs it with --no-deps)")
    for name, path in (("timm", root), ("timm.optim", root / "optim")):
        if saved[name] is None:
            stub = types.ModuleType(name)
            stub.__path__ = [str(path)]
            sys.modules[name] = stub
    try:
        mods = {n: importlib.import_module(f"timm.optim.{n}") for n in ("lamb", "adamp", "rmsprop_tf")}
    finally:
        for name in [k for k in sys.modules if k == "timm" or k.startswith("timm.")]:
            if saved.get(name) is None:
                sys.modules.pop(name, None)
    return types.SimpleNamespace(Lamb=mods["lamb"].Lamb, AdamP=mods["adamp"].AdamP,
                                 RMSpropTF=mods["rmsprop_tf"].RMSpropTF)


@pytest.fixture(scope="session")
def bert_optim():
    """pytorch-pretrained-bert's optimization.py (BertAdam and its schedules)."""
    root = _find_dir("pytorch_pretrained_bert")
    if root is None or not (root / "optimization.py").exists():
        pytest.skip("pytorch-pretrained-bert==0.6.2 is not installed (make venv installs it)")
    spec = importlib.util.spec_from_file_location("_ref_bert_optimization", root / "optimization.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # so that its schedule objects pickle inside checkpoints
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def cybertron_lamb():
    """cybertronai's pytorch-lamb (``Lamb``), the model of torch_npu's NpuFusedLamb."""
    root = _find_dir("pytorch_lamb")
    if root is None or not (root / "lamb.py").exists():
        pytest.skip("pytorch-lamb==1.0.0 is not installed (make venv installs it)")
    saved = sys.modules.get("tensorboardX")
    if saved is None:
        stub = types.ModuleType("tensorboardX")
        stub.SummaryWriter = object
        sys.modules["tensorboardX"] = stub
    try:
        spec = importlib.util.spec_from_file_location("_ref_pytorch_lamb", root / "lamb.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            sys.modules.pop("tensorboardX", None)
    return module


@pytest.fixture(autouse=True)
def _small_and_deterministic():
    """Seeded, and one intra-op thread: these models are tiny, and on a shared 2-core machine a
    second thread mostly waits to be scheduled. Restored after each test."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    yield
    torch.set_num_threads(threads)
