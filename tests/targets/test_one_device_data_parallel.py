"""The DataParallel written into migrated files where torch's cannot run (fallbacks.py), run here:
it keeps what a script reads of a DataParallel and runs the module on its device, the inputs
moved there as torch's scatter moved them."""

from __future__ import annotations

import collections

import pytest
import torch

from _built_in_targets import BUILT_IN
from torchport import targets
from torchport.targets.fallbacks import (ONE_DEVICE_APPLY, ONE_DEVICE_APPLY_FUNCTION, ONE_DEVICE_DATA_PARALLEL,
                                         ONE_DEVICE_DATA_PARALLEL_CLASS)


@pytest.fixture(scope="module")
def defined():
    namespace = {"torch": torch}
    exec(ONE_DEVICE_DATA_PARALLEL_CLASS + "\n" + ONE_DEVICE_APPLY_FUNCTION, namespace)
    return namespace[ONE_DEVICE_DATA_PARALLEL], namespace[ONE_DEVICE_APPLY]


def test_it_reads_as_a_data_parallel(defined):
    one_device, _ = defined
    net = torch.nn.Linear(3, 2)
    model = one_device(net, device_ids=[0, 1], output_device=0)
    x = torch.randn(4, 3)
    assert isinstance(model, torch.nn.DataParallel) and model.module is net and model.device_ids == []
    assert torch.equal(model(x), net(x))
    assert sorted(model.state_dict()) == ["module.bias", "module.weight"]
    copy = one_device(torch.nn.Linear(3, 2))
    copy.load_state_dict(model.state_dict())  # a checkpoint of the wrapped model loads back
    assert torch.equal(copy(x), net(x))


class Pair(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2, device="meta")

    def forward(self, batch, extra):
        return self.fc(batch.x) + self.fc(extra["y"][0])


def test_the_inputs_go_to_the_modules_device(defined):
    """The meta device plays the accelerator's part: a CPU batch given to the wrapper lands there,
    through a named tuple, a dict and a list, as torch's scatter moved it."""
    one_device, _ = defined
    Batch = collections.namedtuple("Batch", "x")
    out = one_device(Pair())(Batch(torch.randn(4, 3)), extra={"y": [torch.randn(4, 3)]})
    assert out.device.type == "meta" and out.shape == (4, 2)


def test_data_parallel_the_function_applies_the_module_once(defined):
    _, apply = defined
    net = torch.nn.Linear(3, 2)
    x = torch.randn(4, 3)
    assert torch.equal(apply(net, x, device_ids=[0, 1]), net(x))
    assert torch.equal(apply(net, (x,)), net(x))
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        torch.nn.parallel.data_parallel(net, x)  # why the function is replaced on every target


def test_the_targets_that_keep_torchs_data_parallel():
    """torch's only wraps the module where it finds neither CUDA nor a device it would scatter over,
    and on CUDA itself it scatters over the GPUs."""
    kept = {name for name in BUILT_IN if targets.get(name).data_parallel is None}
    assert kept == {"cuda", "cpu", "mps"}
    assert targets.get("npu").data_parallel == ONE_DEVICE_DATA_PARALLEL
