"""Each fact about CUDA or a target has one home: mechanisms read it, they do not spell it.

A device type written as a literal outside `targets/` ("cpu", "npu:0") is a mechanism deciding
for itself what the target already says; a CUDA API list spelled in two modules drifts apart.
Read with `ast`: messages and docstrings may name anything.
"""

import ast
import re
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "torchport"
# targets/ holds the per-backend facts; optim/ is a library of its own that must not need targets/.
KNOWLEDGE = ("targets", "optim")
DEVICE_TYPE = re.compile(r"(cpu|mps|npu|xpu)(:\d+)?")
# The same spelling with another meaning: (file, literal) -> what it names.
NOT_DEVICE_TYPES = {
    ("shapes/names.py", "cpu"): "the Tensor.cpu method, in Ascend's list of calls a shape report skips",
    ("precision/calls.py", "cpu"): "the Tensor.cpu method, a device move that a dump does not record",
}
AMP_DEVICE_TYPE_NAMES = {"autocast", "GradScaler", "custom_fwd", "custom_bwd"}
PROCESS_GROUP_NAMES = {"init_process_group", "new_group"}


def _modules(root: Path = SRC):
    return _parsed(root)


@lru_cache(maxsize=None)
def _parsed(root: Path) -> tuple:
    """(path under src/torchport, its tree) of each module below `root`, parsed once for all the checks."""
    return tuple((path.relative_to(SRC).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
                 for path in sorted(root.rglob("*.py")))


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring constants of a module and of its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _strings(tree: ast.Module):
    """(line, value) of each string constant that is not a docstring."""
    skipped = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            yield node.lineno, node.value


def device_type_literals(modules) -> list[tuple[str, int, str]]:
    """(file, line, literal) of each device type written as a literal in a mechanism."""
    found = []
    for name, tree in modules:
        if name.split("/")[0] in KNOWLEDGE:
            continue
        found += [(name, line, value) for line, value in _strings(tree) if DEVICE_TYPE.fullmatch(value)]
    return found


def test_no_mechanism_spells_a_device_type():
    found = [(name, line, value) for name, line, value in device_type_literals(_modules())
             if (name, value) not in NOT_DEVICE_TYPES]
    assert found == [], "read the target (has_device, keeps_device_index) or targets.devices.is_host instead"


def test_each_other_meaning_of_a_device_type_spelling_is_still_there():
    """An exemption whose literal has gone would let a real device type back in unseen."""
    seen = {(name, value) for name, _, value in device_type_literals(_modules())}
    assert set(NOT_DEVICE_TYPES) <= seen


def test_the_check_finds_a_device_type_compared_in_a_mechanism(tmp_path):
    (tmp_path / "rule.py").write_text(
        '"""A docstring may say "cpu"."""\n'
        'def f(target, i):\n'
        '    print("runs on the cpu")\n'
        '    return target.device_type == "cpu" or f"{i}" == "npu:1" or target.device_type in ("mps",)\n'
    )
    modules = [("migrate/rules/rule.py", ast.parse((tmp_path / "rule.py").read_text()))]
    assert [(line, value) for _, line, value in device_type_literals(modules)] == [(4, "cpu"), (4, "npu:1"), (4, "mps")]


CUDA_SPELLING = re.compile(r"cuda(:\d+)?")
CUDA_HOMES = ("apis", "targets")  # (what CUDA's APIs are, and what each target makes of them)


def cuda_comparisons(modules) -> list[tuple[str, int, str]]:
    """(file, line, literal) of each comparison with "cuda" or "cuda:N" (a device, the `.cuda()`
    method, the module's name) outside the catalogue and the targets, tuples compared with included."""
    found = []
    for name, tree in modules:
        if name.split("/")[0] in CUDA_HOMES:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            for operand in [node.left, *node.comparators]:
                values = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
                found += [(name, node.lineno, v.value) for v in values if isinstance(v, ast.Constant)
                          and isinstance(v.value, str) and CUDA_SPELLING.fullmatch(v.value)]
    return found


def test_no_mechanism_compares_with_a_cuda_spelling():
    assert cuda_comparisons(_modules()) == [], (
        "read apis/ (cuda_module.MOVE_METHOD, MODULE_NAME) or targets.devices.cuda_device instead")


def test_the_check_finds_a_cuda_spelling_compared_in_a_mechanism():
    tree = ast.parse('def f(x, d):\n    return x.attr == "cuda" or d in ("to", "cuda:0") or "cuda" in str(d)\n')
    assert [(line, value) for _, line, value in cuda_comparisons([("migrate/rules/r.py", tree)])] == [
        (2, "cuda"), (2, "cuda:0"), (2, "cuda")]
    assert cuda_comparisons([("apis/devices.py", tree)]) == []


def run_time_device_tests(modules) -> list[tuple[str, int]]:
    """(file, line) of each `x.device_type is None` (or `is not None`) outside targets/: the
    target's `device_chosen_at_run_time` says it."""
    return [(name, node.lineno) for name, tree in modules if name.split("/")[0] != "targets"
            for node in ast.walk(tree) if isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute)
            and node.left.attr == "device_type" and isinstance(node.ops[0], (ast.Is, ast.IsNot))
            and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None]


def test_a_device_chosen_at_run_time_is_asked_of_the_target():
    assert run_time_device_tests(_modules()) == []
    planted = ast.parse("if target.device_type is None or t.device_type is not None:\n    pass\n")
    assert run_time_device_tests([("migrate/rules/r.py", planted)]) == [("migrate/rules/r.py", 1)] * 2


def spellers(modules, names: set[str]) -> dict[str, set[str]]:
    """name -> the modules that spell it as a string (not in a docstring)."""
    found = defaultdict(set)
    for module, tree in modules:
        for _, value in _strings(tree):
            if value in names:
                found[value].add(module)
    return dict(found)


@pytest.mark.parametrize(
    ("names", "home"),
    [(AMP_DEVICE_TYPE_NAMES, "apis/amp.py"), (PROCESS_GROUP_NAMES, "apis/distributed.py")],
    ids=["AMP names that take the device type", "process-group names"],
)
def test_a_list_of_cuda_apis_is_spelled_in_one_module(names, home):
    assert spellers(_modules(), names) == {name: {home} for name in names}


def test_the_catalogue_imports_no_torch_libcst_or_targets():
    """The targets read the catalogue, never the other way round; the analysers read it without torch."""
    for name, tree in _modules(SRC / "apis"):
        imported = {alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.module}
        assert not {m for m in imported if m.split(".")[0] in ("torch", "libcst") or m.startswith("torchport.targets")}, name
