"""undo() puts back every original object: checked attribute by attribute."""

from __future__ import annotations

import sys

import pytest
import torch
import torch.distributed
import torch.utils.data

from torchport import runtime
from torchport.runtime.patchbook import ABSENT


def _owners():
    """Every module and class the runtime may patch, and the torch.cuda submodules."""
    owners = [torch, torch.Tensor, torch.nn.Module, torch.amp, torch.amp.autocast, torch.amp.GradScaler,
              torch.serialization, torch.nn.parallel.DataParallel,
              torch.nn.parallel.DistributedDataParallel, torch.utils.data.DataLoader,
              torch.distributed, torch.distributed.distributed_c10d, torch.amp.autocast_mode,
              torch.nn.SyncBatchNorm, torch.nn.parallel, sys.modules["torch.nn.parallel.data_parallel"]]
    owners += [m for name, m in sys.modules.items() if m is not None and
               (name == "torch.cuda" or name.startswith("torch.cuda."))]
    return owners


def _snapshot():
    return {id(owner): (owner, dict(vars(owner))) for owner in _owners()}


@pytest.mark.parametrize("targets", [["cpu"], ["accelerator"], ["cpu", "accelerator"]])
def test_undo_restores_every_patched_attribute(tmp_path, targets):
    before = _snapshot()
    for name in targets:  # a second apply() with another target undoes the first
        session = runtime.apply(name, log=str(tmp_path / "log.txt"))
    patched = session.book.patched()
    assert len(patched) > 200  # devices, torch.cuda, amp, distributed, memory
    runtime.undo()
    assert runtime.active() is None
    for owner, name, original in patched:
        if original is ABSENT:
            assert name not in vars(owner), (owner, name)
        else:
            assert vars(owner)[name] is original, (owner, name)
    after = _snapshot()
    for key, (owner, attributes) in before.items():
        now = after[key][1]
        changed = [n for n in set(attributes) | set(now) if attributes.get(n, "absent") is not now.get(n, "absent")]
        assert changed == [], f"{owner!r}: {changed}"


def test_patched_objects_really_differ_while_applied(runtime_on):
    originals = (torch.device, torch.zeros, torch.Tensor.to, torch.cuda.synchronize, torch.load)
    runtime_on("cpu")
    for original, now in zip(originals, (torch.device, torch.zeros, torch.Tensor.to,
                                         torch.cuda.synchronize, torch.load)):
        assert now is not original


def test_apply_is_idempotent_for_the_same_target(runtime_on):
    first = runtime_on("cpu")
    assert runtime_on("cpu") is first
