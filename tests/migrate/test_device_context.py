"""`torch.cuda.device(d)` takes an index, None, a device or its name; on accelerator its
replacement, `torch.accelerator.device_index`, takes an index only: the rewrite and the patcher
both pass it the index that CUDA's context would switch to."""

import re

import pytest
import torch

from torchport import targets
from torchport.migrate import migrate_source
from torchport.runtime.patch_cuda_module import _taking_any_device

KINDS = [(None, None), (0, 0), (2, 2), ("cuda:1", 1), ("cuda", None), (torch.device("cuda", 3), 3)]


def _index_source(argument: str) -> tuple[str, dict]:
    """The source written for the index, and the file's definitions it needs (run here)."""
    source = f"import torch\nwith torch.cuda.device({argument}):\n    pass\n".encode()
    migrated = migrate_source(source, targets.get("accelerator"), "t.py").source.decode()
    index = re.search(r"torch\.accelerator\.device_index\((.*)\) if torch", migrated).group(1)
    namespace = {"torch": torch}
    exec(migrated.split("\nwith ")[0], namespace)  # (DEVICE_TYPE, "cpu" here, and accelerator_device)
    return index, namespace


@pytest.mark.parametrize(("value", "index"), KINDS)
def test_a_value_the_file_does_not_pin_down_gives_its_index(value, index):
    source, namespace = _index_source("where")
    assert source == "accelerator_device(where).index"
    assert eval(source, {**namespace, "where": value}) == index


def test_a_device_attribute_gives_its_index_and_an_integer_stays():
    source, namespace = _index_source("x.device")
    assert source == "torch.device(x.device).index"
    assert eval(source, {**namespace, "x": torch.ones(1, device="meta")}) is None
    assert _index_source("1")[0] == "1"


@pytest.mark.parametrize(("value", "index"), KINDS)
def test_under_run_the_replacement_is_called_with_the_index(value, index):
    called = []
    context = _taking_any_device(lambda i, *rest: called.append((i, rest)))
    context(value)
    context(value, "extra")
    assert called == [(index, ()), (index, ("extra",))]


def test_a_device_attribute_the_file_sets_from_anything_goes_through_the_device_function():
    """`self.device = device` (a parameter: any kind) is not known to hold a device, so its
    index is taken by the function that takes every kind, None included."""
    source = b"import torch\nclass T:\n    def __init__(self, device):\n        self.device = device\n" \
             b"    def run(self):\n        with torch.cuda.device(self.device):\n            pass\n"
    migrated = migrate_source(source, targets.get("accelerator"), "t.py").source.decode()
    assert "torch.accelerator.device_index(accelerator_device(self.device).index)" in migrated
