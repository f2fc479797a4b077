"""`x.device == torch.device("cuda")` asks "is x on the GPU?": after migration the answer on this
CPU-only host is the original's (no), on the cpu and the device-agnostic targets alike."""

import pytest

from torchport import targets
from torchport.migrate import migrate_source

SOURCE = b'''import torch

x = torch.zeros(2)
taken = []
if x.device == torch.device("cuda"):
    taken.append("gpu branch")
if x.device != torch.device('cuda'):
    taken.append("cpu branch")
d = torch.device("cuda")
'''


def run(source: bytes) -> dict:
    scope: dict = {}
    exec(compile(source, "train.py", "exec"), scope)
    return scope


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_a_device_object_comparison_keeps_its_answer(target: str) -> None:
    original = run(SOURCE.replace(b'd = torch.device("cuda")', b""))
    result = migrate_source(SOURCE, targets.get(target), "train.py")
    assert result.error is None
    migrated = run(result.source)
    assert migrated["taken"] == original["taken"] == ["cpu branch"]
    assert migrated["d"].type == "cpu"  # a device to place on is still ported


def test_on_a_device_target_the_comparison_names_the_device() -> None:
    result = migrate_source(SOURCE, targets.get("npu"), "train.py").source.decode()
    assert 'x.device == torch.device("npu")' in result and "x.device != torch.device('npu')" in result
