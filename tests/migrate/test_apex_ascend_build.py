"""On npu, apex is kept only where Ascend's own apex build has it (amp, combine tensors, the
NpuFused optimizers: apis/apex.py ASCEND_APEX); the rest of a file's apex (normalization, parallel,
NVIDIA's Fused* optimizers, contrib, multi_tensor_apply) takes the native rewrite, as on the cpu
target, with its rows, or the stand-in package where no confident rewrite exists. Under
`--apex keep` and npu's default alike."""

from __future__ import annotations

import ast

import pytest

from torchport import targets
from torchport.analyze.apex import becomes
from torchport.apis.apex import ASCEND_APEX, in_build
from torchport.migrate.workers import Choices, Job, migrate_one

SCRIPT = '''import torch
import torch.nn as nn
from apex import amp
from apex.optimizers import FusedAdam, NpuFusedSGD
from apex.parallel import DistributedDataParallel as DDP, convert_syncbn_model
from apex.normalization import FusedLayerNorm, FusedRMSNorm
from apex.contrib.combine_tensors import combine_npu


def train(loader):
    model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), FusedLayerNorm(8), FusedRMSNorm(8)).cuda()
    model = convert_syncbn_model(model)
    optimizer = NpuFusedSGD(model.parameters(), lr=0.1)
    side = FusedAdam(model.parameters(), lr=1e-3)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", combine_grad=True)
    model = DDP(model)
    flat = combine_npu([p.grad for p in model.parameters()])
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
'''


def _migrated(source: str, apex: str | None = None, target: str = "npu"):
    result = migrate_one(Job("train.py", source.encode()), Choices(target, apex=apex))
    assert result.error is None
    return result.source.decode(), result


def _imported(text: str) -> list[str]:
    """Each apex name the text imports: `from apex.x import y` -> apex.x.y; `import apex` -> apex."""
    names = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names if alias.name.split(".")[0] == "apex"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "apex":
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def test_the_catalogue_says_what_ascends_apex_has_and_the_npu_target_reads_it():
    assert targets.get("npu").apex_build == ASCEND_APEX
    assert not targets.get("cpu").keeps_apex and targets.get("npu").keeps_apex
    for kept in ("apex.amp.initialize", "apex.optimizers.NpuFusedAdamW", "apex.optimizers.npu_fused_sgd.NpuFusedSGD",
                 "apex.contrib.combine_tensors.combine_npu", "apex"):
        assert in_build(kept, ASCEND_APEX), kept
    for lacking in ("apex.normalization.FusedRMSNorm", "apex.normalization.FusedLayerNorm", "apex.parallel",
                    "apex.parallel.DistributedDataParallel", "apex.optimizers.FusedAdam", "apex.contrib.xentropy",
                    "apex.multi_tensor_apply.multi_tensor_applier", "apex.fp16_utils"):
        assert not in_build(lacking, ASCEND_APEX), lacking


@pytest.mark.parametrize("apex", [None, "keep"], ids=["npu default", "--apex keep"])
def test_npu_keeps_only_what_ascends_apex_has_and_rewrites_the_rest_natively(apex):
    text, result = _migrated(SCRIPT, apex)
    assert sorted(_imported(text)) == ["apex.amp", "apex.contrib.combine_tensors.combine_npu",
                                       "apex.optimizers.NpuFusedSGD"]
    assert "torch.nn.LayerNorm(8)" in text and "torch.nn.RMSNorm(8, eps=1e-5)" in text
    assert "torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)" in text
    assert "torch.nn.parallel.DistributedDataParallel(model)" in text and "FusedAdamW(" in text
    assert "amp.initialize(model, optimizer" in text and "with amp.scale_loss(loss, optimizer)" in text
    assert "NpuFusedSGD(model.parameters()" in text and "combine_npu([" in text
    rows = {(f.code, f.message.split(" ->")[0]) for f in result.findings}
    assert {("TP306", "FusedLayerNorm"), ("TP306", "FusedRMSNorm"), ("TP305", "DistributedDataParallel"),
            ("TP305", "convert_syncbn_model"), ("TP304", "FusedAdam")} <= rows
    note = next(f for f in result.findings if f.code == "TP300")
    assert note.start_line == 3 and "npu's own apex build (Ascend's) has it" in note.message
    assert result.apex == "kept"


def test_what_ascends_apex_lacks_is_written_on_npu_as_on_the_cpu():
    source = ("import torch\nfrom apex.parallel import DistributedDataParallel as DDP\n"
              "from apex.normalization import FusedRMSNorm\n\n\n"
              "def build(model):\n    return DDP(torch.nn.Sequential(model, FusedRMSNorm(8)).cuda())\n")
    npu, npu_result = _migrated(source)
    cpu, cpu_result = _migrated(source, target="cpu")
    assert "apex" not in npu and npu_result.apex == "native" == cpu_result.apex
    for native in ("torch.nn.RMSNorm(8, eps=1e-5)", "torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential"):
        assert native in npu and native in cpu


def test_a_file_with_only_ascends_apex_is_left_as_written_with_the_kept_row():
    source = "import torch\nfrom apex import amp\n\n\ndef setup(model, optimizer):\n" \
             "    return amp.initialize(model, optimizer, opt_level=\"O2\", combine_grad=True)\n"
    text, result = _migrated(source)
    assert text == source
    assert [f.code for f in result.findings if f.code.startswith("TP30")] == ["TP300"]


def test_what_has_no_native_rewrite_takes_the_stand_in_and_amp_stays_ascends():
    source = ("import torch\nimport apex\nfrom apex import amp\nfrom apex.contrib.xentropy import SoftmaxCrossEntropyLoss\n\n\n"
              "def step(model, optimizer, logits, labels):\n"
              "    model = apex.parallel.convert_syncbn_model(model)\n"
              "    model, optimizer = amp.initialize(model, optimizer)\n"
              "    return SoftmaxCrossEntropyLoss.apply(logits, labels, 0.1)\n")
    text, result = _migrated(source)
    assert "from apex import amp\n" in text
    assert "from torchport.compat.apex.contrib.xentropy import SoftmaxCrossEntropyLoss" in text
    assert "import torchport.compat.apex as apex" in text  # (apex.parallel through it: Ascend's has none)
    assert {f.code for f in result.findings} >= {"TP307", "TP300"}


def test_migrating_the_npu_output_again_changes_nothing():
    once, _ = _migrated(SCRIPT)
    twice, _ = _migrated(once)
    assert twice == once


def test_analyze_says_kept_for_ascends_names_and_the_native_form_for_the_rest():
    npu = targets.get("npu")
    assert becomes("apex.amp.scale_loss", npu, "keep", "kept").startswith("kept: Ascend's apex build has it on npu")
    assert becomes("apex.normalization.FusedRMSNorm", npu, "keep", "kept") == (
        "torch.nn.RMSNorm, then migrated to npu (not in npu's own apex build (Ascend's))")
    assert becomes("apex.parallel.DistributedDataParallel", npu, "keep", "kept").startswith(
        "torch.nn.parallel.DistributedDataParallel, then migrated to npu")


def test_an_nvidia_fused_optimizer_rewritten_on_npu_gets_the_advice_of_ascends_twin():
    _, result = _migrated(SCRIPT)
    advice = [(f.start_line, f.message) for f in result.findings if f.code == "TP117"]
    assert (14, "use apex.optimizers.NpuFusedAdamW: npu's own apex (Ascend's) fuses the same update, with "
                "combine_grad=True in amp.initialize") in advice
