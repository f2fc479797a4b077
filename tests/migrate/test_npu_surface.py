"""Every torch.npu / torch_npu name that migrated code uses exists in the committed torch_npu surface,
and every torch.<device module> name exists in torch's own surface."""

import re
from pathlib import Path

import pytest

from torchport import targets
from torchport.migrate import migrate_source
from torchport.targets.surface import NPU_SURFACE, TORCH_SURFACE, names
from torchport.targets.verdict import Kind

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "examples").glob("*.py")) + sorted((Path(__file__).parent / "golden").glob("*.py"))
DOTTED = re.compile(r"\b(torch\.(?:npu\.amp|npu|xpu|mps|cpu|accelerator|amp)|torch_npu)\.(\w+)")
SURFACES = {
    "torch.npu": names(NPU_SURFACE, "torch.npu") | {"amp"},  # torch.npu.amp: a submodule, below
    "torch.npu.amp": names(NPU_SURFACE, "torch.npu.amp"),
    "torch_npu": names(NPU_SURFACE, "torch_npu"),
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
