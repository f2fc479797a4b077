"""On npu the advice and `--apply-affinity` name Ascend's own APIs, spelled as `migrate` writes
them, and every one exists in the torch_npu 2.14.0 wheel (its committed surface and kernel list);
the other targets keep torchport.optim."""

from __future__ import annotations

import ast
import csv
import importlib
import importlib.util
import inspect
import re
from functools import lru_cache
from pathlib import Path

import pytest

from test_npu_surface import DOTTED, SOURCES, SURFACES
from torchport import targets
from torchport.apis.apex import NPU_FUSED
from torchport.findings import Operation
from torchport.migrate import migrate_source
from torchport.targets import npu_optim
from torchport.targets.npu import NPU_KERNELS
from torchport.targets.surface import NPU_SURFACE, load, names

ROOT = Path(__file__).resolve().parents[2]
SGD_TRAINER = '''\
import torch
import torch.nn as nn


def main():
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    for step in range(10):
        images = torch.randn(4, 3, 32, 32).cuda(non_blocking=True)
        labels = torch.randint(0, 10, (4,)).cuda(non_blocking=True)
        loss = nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _missing(text: str) -> list[str]:
    """The torch.npu / torch_npu names of `text` that the torch_npu surface lacks."""
    return sorted(f"{module}.{name}" for module, name in set(DOTTED.findall(text)) if name not in SURFACES[module])


def test_an_sgd_trainer_gets_npufusedsgd_on_npu_and_torchport_optim_on_cpu(cli, tmp_path: Path) -> None:
    """#24's "Done when": analyze recommends NpuFusedSGD on npu; --apply-affinity writes it, and the
    output passes the npu surface check; the same on cpu writes torchport.optim."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(SGD_TRAINER)
    code, _, err = cli("analyze", project, "-o", tmp_path / "report", "-t", "npu", "-m", "affinity")
    assert code == 0, err
    affinity = _rows(tmp_path / "report" / "torchport_report" / "affinity_api_call.csv")
    assert affinity[1:] == [["train.py", "7", "7", "optimizer", "torch.optim.SGD", "torch_npu.optim.NpuFusedSGD"]]
    written = {}
    for target in ("npu", "cpu"):
        code, _, err = cli("migrate", project, "-o", tmp_path / target, "-t", target, "--apply-affinity")
        assert code == 0, err
        written[target] = (tmp_path / target / "train.py").read_text()
    call = "(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)"
    assert f"optimizer = torch_npu.optim.NpuFusedSGD{call}" in written["npu"]
    assert "torchport" not in written["npu"] and "import torch_npu" in written["npu"]
    assert ("torch_npu.optim", "NpuFusedSGD") in DOTTED.findall(written["npu"]) and _missing(written["npu"]) == []
    assert f"optimizer = torchport.optim.FusedSGD{call}" in written["cpu"] and "import torchport.optim" in written["cpu"]
    assert "torch_npu" not in written["cpu"]


def test_without_apply_affinity_the_rewritten_code_is_the_same_as_before(tmp_path: Path) -> None:
    result = migrate_source(SGD_TRAINER.encode(), targets.get("npu"), "train.py")
    assert "torch.optim.SGD(model.parameters(), lr=0.1" in result.source.decode()
    assert "NpuFused" not in result.source.decode()


@lru_cache(maxsize=None)
def _on_npu(name: str, data: bytes):
    """`data` migrated to npu with --apply-affinity (its advice rows are those of a plain migration)."""
    return migrate_source(data, targets.get("npu"), name, apply_affinity=True)


def test_apply_affinity_output_uses_only_names_torch_npu_has() -> None:
    used = set()
    for path in SOURCES:
        text = _on_npu(path.name, path.read_bytes()).source.decode()
        assert _missing(text) == [], path.name
        used |= {name for module, name in DOTTED.findall(text) if module == "torch_npu.optim"}
    assert used, "the sources should have an optimizer --apply-affinity swaps"


# Every API an npu advice row names: dotted names, with `NpuFused*` standing for the family.
NAMED = re.compile(r"\b(?:torch_npu|torch|apex|optimizer)(?:\.\w+)+\*?")
TORCH_NPU_OPS = frozenset(load(NPU_KERNELS)["custom"])  # torch_npu binds every torch.ops.npu op as torch_npu.<op>


def _exists(dotted: str) -> bool:
    if dotted.endswith("*"):
        module, _, stem = dotted[:-1].rpartition(".")
        return bool(module) and any(_exists(f"{module}.{n}") for n in _names_of(module) if n.startswith(stem))
    module, _, name = dotted.rpartition(".")
    if module == "optimizer":
        return name in (npu_optim.CLIP, "zero_grad", "step")  # NpuFusedOptimizerBase's methods
    if module == "torch_npu" and name in TORCH_NPU_OPS:
        return True
    if module in load(NPU_SURFACE)["modules"]:
        return name in names(NPU_SURFACE, module)
    if module == "apex.optimizers":
        return name in NPU_FUSED
    try:
        value = importlib.import_module(dotted.split(".")[0])
        for part in dotted.split(".")[1:]:
            value = getattr(value, part)
    except (ImportError, AttributeError):
        return False
    return True


def _names_of(module: str) -> frozenset[str]:
    return frozenset(NPU_FUSED) if module == "apex.optimizers" else names(NPU_SURFACE, module)


def _npu_advice() -> list[tuple[str, str, str]]:
    """(where, text, the API the row is about) of every advice row migrate writes on npu for the examples, the goldens, the
    analyze fixture, an SGD trainer and an apex script, and of every row of npu's affinity table."""
    sources = [*SOURCES, *sorted((ROOT / "tests" / "analyze" / "fixture" / "project").glob("*.py"))]
    texts = [(p.name, p.read_bytes()) for p in sources] + [("sgd.py", SGD_TRAINER.encode())]
    from test_apex_npu_surface import SCRIPT

    texts.append(("apex.py", SCRIPT.encode()))
    advice = {Operation.PERFORMANCE, Operation.PRECISION, Operation.AFFINITY}
    found = []
    for name, data in texts:
        for finding in _on_npu(name, data).findings:
            if finding.operation in advice:
                found.append((f"{name}:{finding.start_line} {finding.code}", finding.message, finding.api))
    for row in targets.get("npu").advice.affinity:
        found.append((row.name, f"{row.replacement}: {row.note}", row.name))
    return found


def test_every_api_an_npu_advice_row_names_exists_on_npu() -> None:
    rows = _npu_advice()
    codes = {where.split()[1] for where, *_ in rows if " " in where}
    assert {"TP101", "TP110", "TP111", "TP117"} <= codes, codes  # (the corpus sets the advice off)
    missing = [(where, dotted) for where, text, api in rows for dotted in NAMED.findall(text)
               if dotted != api and not _exists(dotted)]
    assert missing == []


def test_mixed_precision_advice_spells_autocast_as_migrate_writes_it() -> None:
    npu = targets.get("npu")
    (row,) = [f for f in migrate_source(SGD_TRAINER.encode(), npu, "train.py").findings if f.code == "TP101"]
    amp = migrate_source(b"import torch\nwith torch.cuda.amp.autocast():\n    scaler = torch.cuda.amp.GradScaler()\n",
                         npu, "amp.py").source.decode()
    for name in ("torch.npu.amp.autocast()", "torch.npu.amp.GradScaler()"):
        assert name in row.message and name in amp
    assert "torch.autocast(" not in row.message


def _parameters_of(cls) -> list[str]:
    return [p.name for p in inspect.signature(cls).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)][1:]


def _installed_init(module: str, cls: str) -> list[str]:
    """The parameters of an installed library class's __init__, read from its source (timm and
    pytorch_pretrained_bert import torchvision or boto3 at the top: not installed here)."""
    spec = importlib.util.find_spec(module.split(".")[0])
    path = Path(spec.origin).parent.joinpath(*module.split(".")[1:]).with_suffix(".py")
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            init = next(f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__")
            return [a.arg for a in init.args.args[2:]] + [a.arg for a in init.args.kwonlyargs]
    raise AssertionError(f"{module}.{cls} not found")


ORIGINALS = {
    "pytorch_pretrained_bert.optimization.BertAdam": ("pytorch_pretrained_bert.optimization", "BertAdam"),
    "timm.optim.Lamb": ("timm.optim.lamb", "Lamb"),
    "torch.optim.SGD": ("torch.optim", "SGD"),
    "torch.optim.Adam": ("torch.optim", "Adam"),
    "torch.optim.AdamW": ("torch.optim", "AdamW"),
    "torch.optim.Adadelta": ("torch.optim", "Adadelta"),
    "torch.optim.RMSprop": ("torch.optim", "RMSprop"),
    "timm.optim.AdamP": ("timm.optim.adamp", "AdamP"),
    "timm.optim.RMSpropTF": ("timm.optim.rmsprop_tf", "RMSpropTF"),
}


def _original_parameters(original: str) -> list[str]:
    module, cls = ORIGINALS[original]
    if module == "torch.optim":
        return _parameters_of(getattr(importlib.import_module(module), cls))
    return _installed_init(module, cls)


@pytest.mark.parametrize("original", sorted(o for o, twin in npu_optim.TWINS.items() if twin.same))
def test_a_swapped_optimizers_kept_arguments_are_the_originals_in_its_order(original: str) -> None:
    """What npu_optim.py records of each twin against the optimizer it replaces, as installed: the
    arguments a swap keeps are parameters of both, the positional ones in the same places."""
    parameters = _original_parameters(original)
    twin = npu_optim.TWINS[original]
    assert set(twin.same) <= set(twin.parameters) and set(twin.same) <= set(parameters)
    assert list(twin.same[:twin.positional]) == parameters[:twin.positional] == list(twin.parameters[:twin.positional])
    assert twin.name in names(NPU_SURFACE, npu_optim.PACKAGE)
    assert re.fullmatch(r"[0-9a-f]{40}", twin.commit) and twin.path.startswith("torch_npu/optim/")


def test_every_npu_optimizer_row_names_a_class_torch_npu_has() -> None:
    rows = [row for row in targets.get("npu").advice.affinity if row.category == "optimizer"]
    assert {row.name for row in rows} == set(npu_optim.TWINS)
    assert all(row.replacement.removeprefix("torch_npu.optim.") in names(NPU_SURFACE, "torch_npu.optim") for row in rows)
    assert {row.replacement for row in rows if not row.safe} == {"torch_npu.optim.NpuFusedLamb", "torch_npu.optim.NpuFusedBertAdam"}
    others = [row for t in targets.names() if t != "npu" for row in targets.get(t).advice.affinity if row.category == "optimizer"]
    assert others and all(row.replacement.startswith("torchport.optim.") for row in others)


@pytest.mark.parametrize("original", sorted(ORIGINALS))
def test_torchport_optims_twins_keep_only_arguments_both_take(original: str) -> None:
    """The other targets' rows against torchport.optim's classes and the installed originals."""
    import torchport.optim

    (row,) = [r for r in targets.get("cpu").advice.affinity if r.name == original]
    twin = _parameters_of(getattr(torchport.optim, row.replacement.removeprefix("torchport.optim.")))
    parameters = _original_parameters(original)
    takes = row.takes
    assert set(takes.keywords) == set(twin) & set(parameters)
    assert list(takes.keywords[:takes.positional]) == parameters[:takes.positional] == twin[:takes.positional]
