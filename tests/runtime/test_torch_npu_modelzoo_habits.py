"""Habits of Ascend's ModelZoo scripts that the stand-in torch_npu meets under run (#34): int32
class labels given to torch's losses, torch.npu read without `import torch_npu` (torch 1.5's
Ascend build had it built in), and a stream's synchronize(). In-process, the cpu target applied."""

from __future__ import annotations

import importlib

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from torchport.targets.npu import TARGET as NPU

HERE = __file__.rsplit("/", 1)[-1]
ATTRIBUTE = NPU.device_module.rpartition(".")[2]  # torch.npu


def logged(session) -> list[str]:
    return [verdict.describe() for site, verdict in session.log.sites if site.split(":")[0].endswith(HERE)]


def test_int32_labels_reach_the_losses_as_int64(runtime_on):
    torch.manual_seed(0)
    logits, labels = torch.randn(4, 3), torch.tensor([0, 2, 1, 2])
    expected = F.cross_entropy(logits, labels), F.nll_loss(F.log_softmax(logits, 1), labels)
    with pytest.raises(RuntimeError, match="Long"):  # (what the CPU says without the run)
        F.cross_entropy(logits, labels.int())
    session = runtime_on("cpu")
    got = (nn.CrossEntropyLoss()(logits, labels.to(torch.int32)), F.nll_loss(F.log_softmax(logits, 1), labels.int()))
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1])
    assert [line.split(" [")[0] for line in logged(session)] == [
        "torch.nn.functional.cross_entropy (int32 target) -> target.long()",
        "torch.nn.functional.nll_loss (int32 target) -> target.long()"]
    F.cross_entropy(logits, labels)  # (an int64 target: nothing to log)
    assert len(logged(session)) == 2


def test_torch_npu_without_import_torch_npu_is_the_stand_in(runtime_on):
    import torchport.compat.torch_npu as stand_in

    session = runtime_on("cpu")
    assert ATTRIBUTE not in vars(torch)
    device_module = getattr(torch, ATTRIBUTE)  # a torch 1.5-era script: no import torch_npu before it
    assert device_module is stand_in.npu
    device_module.set_device(f"{NPU.device_type}:0")
    assert logged(session)[0].startswith(f"{NPU.device_module} -> torchport.compat.torch_npu [adapted]")


def test_a_library_probing_the_hardware_finds_no_torch_npu(runtime_on):
    runtime_on("cpu")
    probe = compile(f"hasattr(torch, {ATTRIBUTE!r})", "<probe>", "eval")
    assert eval(probe, {"__name__": "transformers.utils", "torch": torch}) is False
    assert ATTRIBUTE not in vars(torch)


def test_the_current_stream_can_be_synchronized(runtime_on):
    runtime_on("cpu")
    npu = importlib.import_module(NPU.setup_import).npu
    stream = npu.current_stream()
    stream.synchronize()
    side = npu.Stream()
    with npu.stream(side):
        pass
    npu.current_stream().wait_stream(side)
    assert side.query() is True and type(stream) is type(side)  # (one class for every API standing for it)


def test_the_autograd_profilers_use_npu_keyword_is_taken(runtime_on):
    session = runtime_on("cpu")
    with torch.autograd.profiler.profile(**{f"use_{NPU.device_type}": True}) as prof:
        torch.ones(2).sum()
    assert prof.function_events is not None
    assert logged(session) == [f"torch.autograd.profiler.profile(use_{NPU.device_type}=) -> (removed) [no-op] "
                               "torch_npu's keyword; the CPU is profiled anyway"]
