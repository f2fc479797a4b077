"""Which target a run may take here: a device target whose device is not here is refused with the
reason (one line for the CLI), the host and the device-agnostic target always run."""

from __future__ import annotations

import pytest
import torch

from torchport import targets
from torchport.runtime.choose import TargetError, resolve, unavailable_reason


def test_a_device_target_whose_device_is_not_here_says_so(monkeypatch):
    monkeypatch.setattr(torch.xpu, "is_available", lambda: False)
    assert unavailable_reason(targets.get("xpu")) == "torch.xpu.is_available() is False"
    with pytest.raises(TargetError, match=r"^target xpu is not available here: torch\.xpu\.is_available\(\) is False$"):
        resolve("xpu")


def test_the_host_and_the_device_agnostic_target_always_run(monkeypatch):
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: False)
    assert unavailable_reason(targets.get("cpu")) is None
    assert unavailable_reason(targets.get("accelerator")) is None
    assert resolve("accelerator")[1] == "cpu"
