"""A script written for the NPU, under `run` where no torch_npu is installed: the stand-in
torch_npu (and torch.npu) maps every call to the target, logged; a real torch_npu is left alone;
undo() takes everything back. In-process (the cpu target applied and undone by each test)."""

from __future__ import annotations

import os
import sys
import types

import pytest
import torch

import torchport.optim
from torchport.runtime.calllog import CallLog
from torchport.runtime.devices import dialect_of
from torchport.runtime.patch_distributed import dialect_backend
from torchport.runtime.patch_memory import _copy_visible_devices
from torchport.targets import get
from torchport.targets.npu import TARGET as NPU

HERE = os.path.basename(__file__)
PACKAGE, DEVICE = NPU.setup_import, NPU.device_type  # torch_npu, npu
DEVICE_ATTRIBUTE = NPU.device_module.rpartition(".")[2]  # torch.npu


def logged(session) -> list[str]:
    """What the log says of this file's call sites (the served imports apart), in order:
    `api -> replacement [kind] note`."""
    return [verdict.describe() for site, verdict in session.log.sites
            if site.split(":")[0].endswith(HERE) and not verdict.api.startswith("import ")]


def npu_import(name: str):
    """`import <name>` as the script would write it (the names come from the npu target)."""
    __import__(name)
    return sys.modules[name]


@pytest.fixture
def npu_session(runtime_on):
    """The cpu target applied with the stand-in served (this machine has no torch_npu)."""
    session = runtime_on("cpu")
    assert DEVICE in session.mapper.sources
    return session


def test_torch_npu_and_torch_npu_are_the_stand_in_until_undo(npu_session):
    from torchport import runtime
    import torchport.compat.torch_npu as stand_in

    assert DEVICE_ATTRIBUTE not in vars(torch)  # (as before the real one is imported; reading it imports it)
    torch_npu = npu_import(PACKAGE)
    device_module = npu_import(NPU.device_module)
    assert torch_npu is stand_in and device_module is stand_in.npu is getattr(torch, DEVICE_ATTRIBUTE)
    assert npu_import(f"{PACKAGE}.{DEVICE}.amp") is stand_in.npu.amp
    assert npu_import(f"{PACKAGE}.contrib.transfer_to_{DEVICE}").__name__.startswith(stand_in.__name__)
    device_module.synchronize()
    assert "synchronize" in vars(stand_in.npu)
    runtime.undo()
    assert not [name for name in sys.modules if name.split(".")[0] == PACKAGE or name.startswith(NPU.device_module)]
    assert not hasattr(torch, DEVICE_ATTRIBUTE) and "synchronize" not in vars(stand_in.npu)
    assert not hasattr(torch.Tensor, DEVICE) and not hasattr(torch.nn.Module, DEVICE)
    assert not hasattr(torch.Tensor, f"is_{DEVICE}")
    with pytest.raises(ImportError):
        npu_import(PACKAGE)
    with pytest.raises(RuntimeError):
        torch.device(DEVICE)  # torch itself knows no such device type


def test_npu_device_values_become_the_targets(npu_session):
    x = torch.ones(2)
    module = torch.nn.Linear(2, 2)
    assert torch.device(DEVICE) == torch.device(f"{DEVICE}:0") == torch.device(DEVICE, 1) == torch.device("cpu")
    assert torch.zeros(2, device=DEVICE).device.type == "cpu"
    assert x.to(f"{DEVICE}:0").device.type == "cpu"
    assert getattr(x, DEVICE)().device.type == "cpu" and getattr(module, DEVICE)() is module
    assert getattr(x, f"is_{DEVICE}") is x.is_cuda is False
    with torch.autocast(DEVICE) as context:
        assert context.device == "cpu"
    assert torch.amp.GradScaler(DEVICE)._device == "cpu"
    assert logged(npu_session) == [
        f"torch.device('{DEVICE}') -> torch.device('cpu') [same]",
        f"torch.device('{DEVICE}:0') -> torch.device('cpu') [adapted] the device index is dropped: one cpu device",
        f"torch.device('{DEVICE}:1') -> torch.device('cpu') [adapted] the device index is dropped: one cpu device",
        f"torch.zeros(device='{DEVICE}') -> torch.zeros(device='cpu') [same]",
        f"torch.Tensor.to('{DEVICE}:0') -> torch.Tensor.to('cpu') [adapted] the device index is dropped: one cpu device",
        f"torch.Tensor.{DEVICE} -> torch.Tensor.cpu [same] device 'cpu'",
        f"torch.nn.Module.{DEVICE} -> torch.nn.Module.cpu [same] device 'cpu'",
        f"torch.Tensor.is_{DEVICE} -> torch.Tensor.is_cuda [adapted] tensors live on cpu: answers as is_cuda does",
        f"torch.autocast('{DEVICE}') -> torch.autocast('cpu') [adapted] off: this cpu has no native torch.bfloat16, "
        "float32 is faster",
        f"torch.amp.GradScaler('{DEVICE}') -> torch.amp.GradScaler('cpu') [same]",
    ]


def test_checkpoints_load_from_npu_locations(npu_session, tmp_path):
    path = tmp_path / "checkpoint.pt"
    torch.save({"w": torch.ones(2)}, path)
    assert torch.load(path, map_location=f"{DEVICE}:0")["w"].device.type == "cpu"
    assert torch.load(path, map_location=lambda storage, location: getattr(storage, DEVICE)())["w"].device.type == "cpu"
    assert logged(npu_session) == [
        f"torch.load(map_location='{DEVICE}:0') -> torch.load(map_location='cpu') [adapted] the device index is dropped: "
        "one cpu device",
        f"torch.UntypedStorage.{DEVICE} -> torch.UntypedStorage.cpu [same] device 'cpu'",
    ]


def test_torch_npu_calls_go_where_the_runs_torch_cuda_calls_go(npu_session):
    device_module = npu_import(PACKAGE).npu
    device_module.set_device(f"{DEVICE}:0")
    device_module.synchronize()
    assert device_module.current_device() == torch.cuda.current_device()
    assert device_module.device_count() == torch.cuda.device_count()
    assert device_module.is_available() is torch.cuda.is_available() is True
    with device_module.amp.autocast():
        pass
    assert isinstance(device_module.amp.GradScaler(), torch.amp.GradScaler)
    assert logged(npu_session)[:2] == [
        "torch.npu.set_device -> (removed) [no-op] there is one CPU device",
        "torch.npu.synchronize -> (removed) [no-op] CPU work is synchronous",
    ]
    shown = [line.split(" ->")[0] for line in logged(npu_session)]
    assert [name for name in shown if name.startswith(NPU.device_module)] == [
        f"{NPU.device_module}.{name}" for name in ("set_device", "synchronize", "current_device", "device_count",
                                                  "is_available", "amp.autocast", "amp.GradScaler")]


def test_npu_only_tuning_is_a_logged_no_op(npu_session):
    device_module = npu_import(NPU.device_module)
    assert device_module.set_compile_mode(jit_compile=False) is None
    device_module.set_option({"ACL_OP_COMPILER_CACHE_MODE": "enable"})
    device_module.config.allow_internal_format = False
    device_module.matmul.allow_hf32 = True
    assert device_module.config.allow_internal_format is False and device_module.conv.allow_hf32 is None
    assert [line.split(" [")[1] for line in logged(npu_session)] == [
        "no-op] NPU-only: nothing to do on cpu (returns None)"] * 2 + ["no-op] NPU-only setting: nothing to set on cpu"] * 2


def test_a_name_torch_npu_lacks_is_an_error_naming_it(npu_session):
    torch_npu = npu_import(PACKAGE)
    with pytest.raises(AttributeError, match=rf"^{PACKAGE}\.{DEVICE}_foo has no stand-in in torchport; port the call by hand$"):
        getattr(torch_npu, f"{DEVICE}_foo")
    with pytest.raises(AttributeError, match=rf"{NPU.device_module}\.no_such_thing has no stand-in"):
        torch_npu.npu.no_such_thing  # noqa: B018
    assert [line.split(" [")[1] for line in logged(npu_session)] == ["unsupported] not in torchport's stand-in torch_npu"] * 2


def test_fused_kernels_and_optimizers_are_torchports(npu_session):
    torch_npu = npu_import(PACKAGE)
    x, weight, bias = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5)
    assert torch.equal(getattr(torch_npu, f"{DEVICE}_linear")(x, weight, bias), torch.nn.functional.linear(x, weight, bias))
    optim = npu_import(f"{PACKAGE}.optim")
    assert optim.NpuFusedSGD is torchport.optim.NpuFusedSGD and optim.NpuFusedAdamW is torchport.optim.NpuFusedAdamW
    assert logged(npu_session)[-2:] == [
        "torch_npu.optim.NpuFusedSGD -> torchport.optim.NpuFusedSGD [same] flat-buffer fused optimizer, any device",
        "torch_npu.optim.NpuFusedAdamW -> torchport.optim.NpuFusedAdamW [same] flat-buffer fused optimizer, any device",
    ]


def test_the_profiler_is_torchs_with_the_targets_activity(npu_session):
    profiler = npu_import(f"{PACKAGE}.profiler")
    activity = getattr(profiler.ProfilerActivity, NPU.profiler_activity)
    assert activity is torch.profiler.ProfilerActivity.CPU  # (the cpu target records no device)
    assert profiler.schedule is torch.profiler.schedule
    config = profiler._ExperimentalConfig(export_type=profiler.ExportType.Text, profiler_level=profiler.ProfilerLevel.Level0)
    prof = profiler.profile(activities=[profiler.ProfilerActivity.CPU, activity], experimental_config=config)
    assert isinstance(prof, torch.profiler.profile) and prof.activities == {torch.profiler.ProfilerActivity.CPU}
    assert "torch_npu.profiler.profile -> torch.profiler.profile [adapted] experimental_config (NPU trace options) dropped" \
        in logged(npu_session)


def test_hccl_and_the_npus_visible_devices_read_as_nccl_and_cudas(npu_session, monkeypatch):
    dialects = npu_session.mapper.dialects
    assert dialect_backend(NPU.dist_backend.strip('"'), "gloo", "cpu", dialects) == "gloo"
    assert dialect_backend(f"{DEVICE}:{NPU.dist_backend.strip(chr(34))},cpu:gloo", "gloo", "cpu", dialects) == "gloo"
    assert dialect_backend("mpi", "gloo", "cpu", dialects) is None
    monkeypatch.setenv(NPU.visible_devices_env, "2,3")
    monkeypatch.delenv("ZE_AFFINITY_MASK", raising=False)
    xpu = types.SimpleNamespace(target=get("xpu"), log=CallLog(None, "#"), set_env=monkeypatch.setenv)
    _copy_visible_devices(xpu, dialect_of(NPU).visible_devices_env)
    assert os.environ["ZE_AFFINITY_MASK"] == "2,3"


def test_hardware_probes_find_no_torch_npu(npu_session):
    """A library that probes the hardware (transformers, accelerate) must not take the NPU path."""
    probe = {"__name__": "transformers.utils.import_utils"}
    with pytest.raises(ImportError):
        exec(f"import {PACKAGE}", probe)
    device_module = npu_import(PACKAGE).npu  # (the script's import)
    exec(f"import {PACKAGE}\nanswer = {PACKAGE}.npu.is_available(), {PACKAGE}.npu.device_count()", probe)
    assert probe["answer"] == (False, 0) and device_module.is_available() is True


def test_a_real_torch_npu_is_left_alone(runtime_on, tmp_path, monkeypatch):
    real = tmp_path / PACKAGE
    real.mkdir()
    (real / "__init__.py").write_text("REAL = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    session = runtime_on("cpu")
    try:
        assert session.mapper.sources == ("cuda",)
        assert npu_import(PACKAGE).REAL and not hasattr(torch, DEVICE_ATTRIBUTE)
    finally:
        sys.modules.pop(PACKAGE, None)
