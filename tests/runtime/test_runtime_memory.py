"""Pinned memory and visible devices."""

from __future__ import annotations

import os
import types
import warnings

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from torchport import targets
from torchport.runtime.calllog import CallLog
from torchport.runtime.patch_memory import _copy_visible_devices


def test_pin_memory_is_a_no_op_on_the_cpu(runtime_on):
    x = torch.ones(2)
    with pytest.raises(RuntimeError):  # plain torch: no accelerator to pin for
        x.pin_memory()
    runtime_on("cpu")
    assert x.pin_memory() is x


def test_data_loader_pin_memory_is_dropped_quietly(runtime_on):
    runtime_on("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loader = DataLoader(TensorDataset(torch.arange(6.0)), batch_size=2, pin_memory=True)
        assert loader.pin_memory is False
        assert [batch.tolist() for (batch,) in loader] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


def _stub_session(monkeypatch, target_name):
    return types.SimpleNamespace(
        target=targets.get(target_name), log=CallLog(None, "#"),
        set_env=lambda name, value: monkeypatch.setenv(name, value),
    )


def test_cuda_visible_devices_is_copied_to_the_targets_variable(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,3")
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    session = _stub_session(monkeypatch, "npu")
    _copy_visible_devices(session)
    assert os.environ["ASCEND_RT_VISIBLE_DEVICES"] == "1,3"
    assert session.log.sites[0][1].describe() == \
        "CUDA_VISIBLE_DEVICES=1,3 -> ASCEND_RT_VISIBLE_DEVICES=1,3 [same]"


def test_a_target_variable_already_set_wins(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monkeypatch.setenv("ZE_AFFINITY_MASK", "0")
    _copy_visible_devices(_stub_session(monkeypatch, "xpu"))
    assert os.environ["ZE_AFFINITY_MASK"] == "0"


def test_a_copy_inherited_from_a_launcher_is_logged_in_each_worker(monkeypatch):
    """torchrun's agent copies the variable and writes no log (it runs no user code); its workers
    inherit the copy, and each logs it."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,3")
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "1,3")
    session = _stub_session(monkeypatch, "npu")
    _copy_visible_devices(session)
    assert [verdict.describe() for _, verdict in session.log.sites] == [
        "CUDA_VISIBLE_DEVICES=1,3 -> ASCEND_RT_VISIBLE_DEVICES=1,3 [same]"]
