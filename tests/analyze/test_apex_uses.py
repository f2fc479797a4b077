"""analyze's apex listing: every apex use in the spellings public training code has (a module import,
aliases, names from submodules, optional apex in `try:`, star imports), each with what it becomes
per target: kept for Ascend's apex on npu, the native form from apis/apex.py elsewhere, the stand-in
where the conversion pointed the file at it."""

from __future__ import annotations

import pytest

from torchport import targets
from torchport.analyze.apex import apex_uses, becomes

# The spellings of NVIDIA's ImageNet example, timm and the DALI examples, cut down.
SCRIPT = b'''import torch
import apex
try:
    from apex import amp, optimizers
    from apex.parallel import DistributedDataParallel as DDP
    from apex.fp16_utils import *
    has_apex = True
except ImportError:
    amp = None
    has_apex = False
from apex.normalization.fused_layer_norm import FusedLayerNorm


def build(model, args):
    if has_apex and amp is not None:
        model = apex.parallel.convert_syncbn_model(model)
    norm = FusedLayerNorm(8)
    optimizer = optimizers.FusedLAMB(model.parameters(), lr=args.lr)
    model, optimizer = amp.initialize(model, optimizer,
                                      opt_level=args.opt_level)
    return DDP(model, delay_allreduce=True), optimizer
'''


def test_every_use_is_listed_at_its_lines_outermost_name_only():
    uses = [(u.line, u.end_line, u.api) for u in apex_uses(SCRIPT)]
    assert uses == [
        (6, 6, "apex.fp16_utils"),
        (15, 15, "apex.amp"),
        (16, 16, "apex.parallel.convert_syncbn_model"),
        (17, 17, "apex.normalization.fused_layer_norm.FusedLayerNorm"),
        (18, 18, "apex.optimizers.FusedLAMB"),
        (19, 19, "apex.amp.initialize"),
        (21, 21, "apex.parallel.DistributedDataParallel"),
    ]


def test_a_file_that_never_says_apex_or_cannot_be_read_lists_nothing():
    assert apex_uses(b"import torch\namp = make()\namp.initialize(m, o)\n") == []
    assert apex_uses(b"from apex import amp\nprint 'py2'\n") == []


@pytest.mark.parametrize(("api", "native"), [
    ("apex.optimizers.FusedLAMB", "torchport.optim.FusedLamb"),
    ("apex.optimizers.FusedAdam", "torchport.optim.FusedAdamW (torchport.optim.FusedAdam where adam_w_mode=False)"),
    ("apex.parallel.DistributedDataParallel", "torch.nn.parallel.DistributedDataParallel"),
    ("apex.parallel.convert_syncbn_model", "torch.nn.SyncBatchNorm.convert_sync_batchnorm"),
    ("apex.normalization.fused_layer_norm.FusedLayerNorm", "torch.nn.LayerNorm"),
    ("apex.amp.scale_loss", "scaler.scale(loss).backward(), the optimizer stepped by scaler.step(optimizer) and scaler.update()"),
    ("apex.optimizers.FusedNovoGrad", "torchport.compat.apex.optimizers.FusedNovoGrad (the stand-in package: no native twin)"),
])
def test_off_npu_a_use_becomes_its_native_form_then_the_targets(api, native):
    assert becomes(api, targets.get("cpu"), "native", "native") == f"{native}, then migrated to cpu"


def test_fp16_utils_gets_the_native_recipe():
    assert "torch.amp.GradScaler" in becomes("apex.fp16_utils", targets.get("xpu"), "native", "native")


def test_npu_keeps_it_for_ascends_apex_and_points_at_the_tuning_advice():
    npu = targets.get("npu")
    assert becomes("apex.amp.initialize", npu, "keep", "kept").endswith("TP117 in api_performance_advice.csv")
    assert becomes("apex.amp.scale_loss", npu, "keep", "kept") == "kept: Ascend's apex build has it on npu (install that apex)"
    assert becomes("apex.amp.scale_loss", npu, "native", "native").endswith("then migrated to npu")


def test_the_stand_in_and_a_file_left_as_it_was_are_said():
    cpu = targets.get("cpu")
    assert becomes("apex.amp.initialize", cpu, "native", "compat").startswith("torchport.compat.apex.amp.initialize: the stand-in")
    assert becomes("apex.amp.initialize", cpu, "native", "kept") == (
        "kept (the conversion could not rewrite this file): apex must be installed for cpu, and it builds only for CUDA")
    assert becomes("apex.amp.initialize", cpu, "keep", "kept").startswith("kept (--apex keep): apex must be installed for cpu")
