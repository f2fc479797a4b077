"""apex code migrated to npu uses only names the target has (the torch_npu wheel's surface, as
test_npu_surface.py checks the other migrated code): kept (the npu default), apex stays and the
device code around it moves; with --apex native, no apex is left. The same holds for the apex
pattern projects of tests/fidelity/apex_projects/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_npu_surface import DOTTED, SURFACES
from torchport.migrate.apex import apex_import_line
from torchport.migrate.workers import Choices, Job, migrate_one

# The forms of the issue, in one script: O1 with clipping through master_params, amp state in a
# checkpoint, a fused optimizer, apex DDP after convert_syncbn_model, a fused LayerNorm.
SCRIPT = '''import torch
import torch.nn as nn
from apex import amp
from apex.optimizers import FusedAdam
from apex.parallel import DistributedDataParallel as DDP, convert_syncbn_model
from apex.normalization import FusedLayerNorm


def train(loader, epochs=1):
    model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), FusedLayerNorm(8)).cuda()
    model = convert_syncbn_model(model)
    optimizer = FusedAdam(model.parameters(), lr=1e-3)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    model = DDP(model)
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            optimizer.step()
        torch.save({"model": model.state_dict(), "amp": amp.state_dict()}, "checkpoint.pt")
    torch.cuda.synchronize()
'''
PROJECTS = Path(__file__).resolve().parents[1] / "fidelity" / "apex_projects" / "projects"
OPTIM = re.compile(r"\btorchport\.optim\.(\w+)|^from torchport\.optim import (\w+(?:, \w+)*)$", re.MULTILINE)


def _migrated(apex: str | None, source: str = SCRIPT) -> str:
    result = migrate_one(Job("train.py", source.encode()), Choices("npu", apex=apex))
    assert result.error is None
    return result.source.decode()


def _missing(text: str, exercised: bool = True) -> list[str]:
    used = set(DOTTED.findall(text))
    assert used or not exercised, "the script should exercise the target's device module"
    return sorted(f"{module}.{name}" for module, name in used if name not in SURFACES[module])


def test_npu_default_keeps_apex_and_uses_only_names_torch_npu_has():
    text = _migrated(None)
    assert "from apex import amp" in text and "torch.npu.synchronize()" in text and ".cuda(" not in text
    assert _missing(text) == []


def test_npu_with_apex_native_leaves_no_apex_and_uses_only_names_torch_npu_has():
    import torchport.optim

    text = _migrated("native")
    assert apex_import_line(text.encode()) is None
    assert not re.search(r"\bapex\b", text.replace("torchport.compat.apex", "")), text
    assert _missing(text) == []
    used = {name for dotted, imported in OPTIM.findall(text) for name in [dotted, *imported.split(", ")] if name}
    assert used and all(hasattr(torchport.optim, name) for name in used), used


@pytest.mark.parametrize("target", ["npu", "cpu"])
def test_migrating_the_native_output_again_changes_nothing(target):
    once = migrate_one(Job("train.py", SCRIPT.encode()), Choices(target, apex="native"))
    again = migrate_one(Job("train.py", once.source), Choices(target, apex="native"))
    assert once.apex in ("native", "compat") and again.source == once.source and not again.changed


@pytest.mark.parametrize("project", sorted(p.name for p in PROJECTS.glob("*.py")))
def test_each_apex_pattern_project_on_npu_uses_only_names_torch_npu_has(project):
    source = (PROJECTS / project).read_text()
    kept, native = _migrated(None, source), _migrated("native", source)
    assert apex_import_line(kept.encode()) is not None
    assert apex_import_line(native.encode()) is None
    assert _missing(kept, exercised=False) == [] and _missing(native, exercised=False) == []
    assert "torch.amp.GradScaler(\"npu\"" in native or "torchport.compat.apex" in native


@pytest.mark.parametrize(("target", "says"), [
    ("cuda", "apex kept: NVIDIA's apex builds for CUDA"),  # (keep is cuda's default: no --apex was asked)
    ("cpu", None),  # (converted: no note of a kept apex)
])
def test_the_note_of_a_kept_apex_says_what_the_target_asks(target, says):
    result = migrate_one(Job("train.py", SCRIPT.encode()), Choices(target))
    notes = [f.message for f in result.findings if f.code == "TP300"]
    assert (notes[0].startswith(says) and "--apex keep" not in notes[0]) if says else notes == []
