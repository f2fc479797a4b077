"""Every torch.npu / torch_npu name that migrated code uses exists in the committed torch_npu surface,
and every torch.<device module> name exists in torch's own surface."""

import functools
import ast
import os
import re
import zipfile
from pathlib import Path

import pytest

from _ported import PORTED

from torchport import targets
from torchport.migrate import migrate_source
from torchport.targets.surface import NPU_SURFACE, TORCH_SURFACE, names
from torchport.targets.verdict import Kind

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "examples").glob("*.py")) + sorted((Path(__file__).parent / "golden").glob("*.py"))
DOTTED = re.compile(r"\b(torch\.(?:npu\.amp|npu|xpu|mps|cpu|accelerator|amp)|torch_npu\.optim|torch_npu)\.(\w+)")
SURFACES = {
    "torch.npu": names(NPU_SURFACE, "torch.npu"),
    "torch.npu.amp": names(NPU_SURFACE, "torch.npu.amp"),
    "torch_npu": names(NPU_SURFACE, "torch_npu"),
    "torch_npu.optim": names(NPU_SURFACE, "torch_npu.optim"),  # (what --apply-affinity writes on npu)
    **{m: names(TORCH_SURFACE, m) for m in ("torch.xpu", "torch.mps", "torch.cpu", "torch.accelerator", "torch.amp")},
}


@pytest.mark.parametrize("target", targets.names())
def test_migrated_code_uses_only_names_the_target_has(target):
    used = set()
    for path in SOURCES:
        result = migrate_source(path.read_bytes(), targets.get(target), path.name)
        used |= set(DOTTED.findall(result.source.decode()))
    assert used, "the sources should exercise the target's device module"
    missing = sorted(f"{module}.{name}" for module, name in used if name not in SURFACES[module])
    assert missing == []


@pytest.mark.parametrize("target", targets.names())
def test_every_replacement_in_the_verdict_table_exists(target):
    from torchport.targets.surface import cuda_apis

    for verdict in targets.get(target).verdicts(cuda_apis()).values():
        if verdict.kind in (Kind.SAME, Kind.ADAPTED) and verdict.replacement:
            match = DOTTED.fullmatch(verdict.replacement)
            if match:
                assert match.group(2) in SURFACES[match.group(1)], verdict.describe()


def test_npu_surface_comes_from_the_real_wheel():
    from torchport.targets.surface import load

    data = load(NPU_SURFACE)
    assert data["version"] == "2.14.0" and data["wheel"].startswith("torch_npu-2.14.0")
    assert {"synchronize", "set_device", "Event", "max_memory_allocated"} <= SURFACES["torch.npu"]
    assert "NpuFusedAdam" in names(NPU_SURFACE, "torch_npu.optim")


# torch.npu is torch_npu.npu; these submodules and annotated attributes exist there, as in torch.cuda.
NPU_SUBMODULES = ("amp", "random", "memory", "streams", "graphs")
NPU_LIKE_CUDA = [f"torch.cuda.{n}" for n in (*NPU_SUBMODULES, "default_generators")]


def _recorded_all():
    from torchport.targets.surface import load

    return load(NPU_SURFACE)["all"]


def test_every_name_in_each_modules___all___is_in_its_surface():
    recorded = _recorded_all()
    assert {"torch_npu", "torch_npu.npu", "torch.npu", "torch.npu.amp", "torch_npu.npu.random"} <= set(recorded)
    assert len(recorded["torch.npu"]) > 100 and "manual_seed" in recorded["torch_npu.npu.random"]
    missing = sorted(f"{m}.{n}" for m, exported in recorded.items() for n in exported if n not in names(NPU_SURFACE, m))
    assert missing == []


def test_torch_npu_submodules_and_annotated_names_are_in_the_surface():
    surface = names(NPU_SURFACE, "torch.npu")
    assert set(NPU_SUBMODULES) <= surface
    assert "default_generators" in surface  # `default_generators: Tuple[...] = ()`
    from torchport.targets.surface import load

    kinds = load(NPU_SURFACE)["modules"]["torch.npu"]
    assert {kinds[n]["kind"] for n in NPU_SUBMODULES} == {"module"}
    assert {"get_rng_state", "manual_seed"} <= names(NPU_SURFACE, "torch_npu.npu.random")
    assert {"empty_cache", "memory_stats"} <= names(NPU_SURFACE, "torch_npu.npu.memory")
    assert {"Stream", "Event"} <= names(NPU_SURFACE, "torch_npu.npu.streams")
    assert {"NPUGraph", "make_graphed_callables"} <= names(NPU_SURFACE, "torch_npu.npu.graphs")
    assert {"npu", "optim", "profiler"} <= names(NPU_SURFACE, "torch_npu")


@pytest.mark.parametrize("api", NPU_LIKE_CUDA)
def test_cuda_submodules_that_torch_npu_has_are_not_unsupported_on_npu(api):
    verdict = targets.get("npu").verdict(api)
    assert (verdict.kind, verdict.replacement) == (Kind.SAME, api.replace("torch.cuda.", "torch.npu.")), verdict.describe()


def test_targets_command_lists_the_npu_submodules_as_same(capsys):
    from torchport.cli import main

    assert main(["targets", "--target", "npu", "--kind", "unsupported"]) == 0
    unsupported = {line.split(" ", 1)[0] for line in capsys.readouterr().out.splitlines()}
    assert unsupported and not unsupported & set(NPU_LIKE_CUDA)


def _wheel_all(source: str) -> list[str]:
    """`__all__` of a module source, read independently of tools/gen_surface.py (literals, `+=`,
    `.extend`, `+`)."""

    def literal(node):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return literal(node.left) + literal(node.right)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return []

    exported: list[str] = []
    for stmt in ast.parse(source).body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else getattr(stmt, "target", None)
        if getattr(target, "id", None) == "__all__" and getattr(stmt, "value", None) is not None:
            exported = exported + literal(stmt.value) if isinstance(stmt, ast.AugAssign) else literal(stmt.value)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "__all__" and func.attr == "extend":
                exported += literal(stmt.value.args[0])
    return exported


@pytest.mark.skipif(
    not os.environ.get("TORCH_NPU_WHEEL"),
    reason="set TORCH_NPU_WHEEL to a torch_npu-2.14.0 wheel (pip download --no-deps torch-npu==2.14.0)",
)
def test_every_name_in_the_wheels___all___is_in_the_surface():
    """Against the wheel itself: each recorded torch_npu module's `__all__` is in the surface."""
    from torchport.targets.surface import load

    wheel = Path(os.environ["TORCH_NPU_WHEEL"])
    assert wheel.name == load(NPU_SURFACE)["wheel"]
    missing, checked = [], 0
    with zipfile.ZipFile(wheel) as archive:
        files = set(archive.namelist())
        for module in load(NPU_SURFACE)["modules"]:
            if not module.startswith("torch_npu"):
                continue
            base = module.replace(".", "/")
            path = next((p for p in (f"{base}/__init__.py", f"{base}.py") if p in files), None)
            if path is None:
                continue
            exported = _wheel_all(archive.read(path).decode("utf-8-sig"))
            checked += len(exported)
            missing += [f"{module}.{n}" for n in exported if n not in names(NPU_SURFACE, module)]
    assert checked > 200 and missing == []


def test_the_static_reader_records_every_way_a_module_binds_a_name(tmp_path):
    """tools/gen_surface.py's reader on a small fake wheel: `__all__` built with `+=`, `.extend` and
    `+`, annotated assignments, re-exports (also `import *`), aliases and submodules."""
    import importlib.util
    import io

    spec = importlib.util.spec_from_file_location("gen_surface", ROOT / "tools" / "gen_surface.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    files = {
        "torch_npu/__init__.py": "",
        "torch_npu/npu/__init__.py": (
            "import os\nimport torch_npu.npu.streams as streams_alias\nfrom typing import Tuple\n"
            "from torch_npu._compat.x import helper\nfrom .random import *\nfrom .streams import Stream\n"
            "from .utils import roll\n"
            "__all__ = ['Stream'] + ['manual_seed']\n__all__ += ['default_generators']\n"
            "__all__.extend(['dynamic'])\n"
            "default_generators: Tuple[int] = ()\nundeclared: int\n"
            "class Event: pass\ndef synchronize(device=None): pass\n_private = 1\n"
            "if TYPE_CHECKING:\n    hidden = 1\ntry:\n    from .memory import empty_cache\nexcept ImportError:\n    pass\n"
        ),
        "torch_npu/npu/random.py": "__all__ = ['manual_seed']\ndef manual_seed(s): pass\ndef other(): pass\n",
        "torch_npu/npu/streams.py": "class Stream: pass\n",
        "torch_npu/npu/memory.py": "def empty_cache(): pass\n",
        "torch_npu/npu/utils/__init__.py": "from .roll import roll\n",
        "torch_npu/npu/utils/roll.py": "def roll(x): pass\n",
        "torch_npu/npu/graphs/ns/part.py": "",
        "torch_npu/npu/_private.py": "",
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    with zipfile.ZipFile(buffer) as archive:
        reader = gen._Wheel(archive)
    surface, exported = reader.names("torch_npu.npu")
    assert exported == ["Stream", "manual_seed", "default_generators", "dynamic"]
    kinds = {name: entry["kind"] for name, entry in surface.items()}
    assert kinds == {
        "Event": "class",
        "Stream": "reexported",
        "default_generators": "value",
        "dynamic": "exported",
        "empty_cache": "reexported",
        "graphs": "module",
        "manual_seed": "reexported",
        "memory": "module",
        "random": "module",
        "roll": "reexported",
        "streams": "module",
        "streams_alias": "module",
        "synchronize": "function",
        "utils": "module",
    }
    assert surface["synchronize"]["params"] == ["device"]
    assert reader.submodules("torch_npu") == ["npu"]


DISTRIBUTED_SOURCES = sorted((ROOT / "tests" / "distribute" / "scripts").glob("*.py"))
TORCH_DISTRIBUTED = re.compile(r"\btorch\.(distributed(?:\.\w+)*|utils\.data\.distributed|nn\.parallel)\.(\w+)")


@functools.cache
def _distributed(path: Path) -> str:
    """What --distributed writes for a script, once for every target (it is the costly step)."""
    from torchport.distribute import distribute_source

    distributed = distribute_source(path.read_text(), path.name)
    assert distributed.changed, path.name
    return distributed.source


@pytest.mark.parametrize("target", PORTED)
def test_multi_card_code_uses_only_names_the_target_and_torch_have(target):
    """What --distributed writes, once migrated: the target's names in its surface (npu: hccl and
    torch.npu.set_device, checked against the torch_npu wheel), torch.distributed's in torch."""
    import importlib

    texts = [migrate_source(_distributed(path).encode(), targets.get(target), path.name).source.decode()
             for path in DISTRIBUTED_SOURCES]
    text = "\n".join(texts)
    missing = sorted(f"{module}.{name}" for module, name in set(DOTTED.findall(text)) if name not in SURFACES[module])
    assert missing == []
    for module, name in set(TORCH_DISTRIBUTED.findall(text)):
        assert hasattr(importlib.import_module(f"torch.{module}"), name), f"torch.{module}.{name}"
    assert "init_process_group(" in text and "DistributedDataParallel(" in text and "nccl" not in text
    if target == "npu":
        assert 'init_process_group("hccl")' in text and "torch.npu.set_device(LOCAL_RANK)" in text
        assert "set_device" in SURFACES["torch.npu"]
