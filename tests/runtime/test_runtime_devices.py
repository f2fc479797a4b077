"""Device values: the mapper, torch.device itself, factories, .to, .cuda and torch.load."""

from __future__ import annotations

import io
import warnings

import pytest
import torch

from torchport import runtime, targets
from torchport.runtime.devices import DeviceMapper


@pytest.mark.parametrize(
    "value, expected",
    [("cuda", "xpu"), ("cuda:1", "xpu:1"), (2, "xpu:2"), ("cpu", None), ("cuda_best.pt", None),
     ("ckpt/cuda:1", None), (True, None), (1.0, None)],
)
def test_mapper_keeps_the_index_where_the_target_does(value, expected):
    mapper = DeviceMapper("xpu", targets.get("xpu").keeps_device_index, torch.device)
    assert mapper.map(value) == expected


def test_mapper_drops_the_index_on_the_cpu_and_keeps_torch_devices_as_devices():
    mapper = DeviceMapper("cpu", targets.get("cpu").keeps_device_index, torch.device)
    assert mapper.map("cuda:3") == "cpu"
    mapped = mapper.map(torch.device("cuda", 1))
    assert type(mapped) is torch.device and mapped == torch.device("cpu")


def test_torch_device_builds_the_target_device_and_stays_a_type(runtime_on):
    real = torch.device
    runtime_on("cpu")
    assert torch.device is not real
    for spelling in (("cuda",), ("cuda:1",), ("cuda", 1), (0,)):
        made = torch.device(*spelling)
        assert type(made) is real and made.type == "cpu"
    assert torch.device(type="cuda", index=0).type == "cpu"
    assert torch.device("meta").type == "meta"
    assert isinstance(torch.zeros(1).device, torch.device)
    assert issubclass(real, torch.device)


def test_torch_itself_keeps_its_cuda_literals(runtime_on):
    runtime_on("cpu")
    namespace = {"__name__": "torch.distributed.fake", "torch": torch}
    exec("made = torch.device('cuda')", namespace)
    assert namespace["made"].type == "cuda"


def test_factories_tensor_methods_and_to(runtime_on):
    runtime_on("cpu")
    assert torch.zeros(2, device="cuda").device.type == "cpu"
    assert torch.randn(2, device=torch.device("cuda:0")).device.type == "cpu"
    x = torch.ones(2)
    assert x.new_zeros(3, device="cuda:0").device.type == "cpu"
    assert x.to("cuda").device.type == "cpu"
    assert x.to(0, non_blocking=True).device.type == "cpu"
    assert x.to(device="cuda", dtype=torch.float64).dtype == torch.float64
    assert x.to(torch.float16).dtype == torch.float16  # dtype-only calls pass through
    layer = torch.nn.Linear(2, 2, device="cuda")
    assert layer.to("cuda:0") is layer and layer.weight.device.type == "cpu"


def test_cuda_methods_move_to_the_target(runtime_on):
    runtime_on("cpu")
    x = torch.ones(2)
    assert x.cuda().device.type == "cpu"
    assert x.cuda(1, non_blocking=True).device.type == "cpu"
    module = torch.nn.Linear(2, 2)
    assert module.cuda() is module and module.cuda(0) is module


def test_load_maps_map_location_but_never_file_names(runtime_on, tmp_path):
    runtime_on("cpu")
    path = tmp_path / "cuda_best.pt"  # "cuda" in a path must survive
    torch.save({"w": torch.arange(3)}, path)
    for location in ("cuda:0", torch.device("cuda"), {"cuda:0": "cuda:1"}):
        assert torch.equal(torch.load(path, map_location=location)["w"], torch.arange(3))


def _saved_as_if_on_cuda(tensor, save_on_gpu) -> bytes:
    """A checkpoint whose storages say they were on cuda:0, as one saved on a GPU machine does."""
    buffer = io.BytesIO()
    save_on_gpu({"w": tensor}, buffer)
    return buffer.getvalue()


def test_load_restores_cuda_checkpoints_on_the_target(runtime_on, save_on_gpu):
    data = _saved_as_if_on_cuda(torch.arange(4.0), save_on_gpu)
    with pytest.raises(RuntimeError):  # plain torch on a machine without CUDA
        torch.load(io.BytesIO(data))
    runtime_on("cpu")
    loaded = torch.load(io.BytesIO(data))
    assert loaded["w"].device.type == "cpu" and torch.equal(loaded["w"], torch.arange(4.0))


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_a_storage_moved_with_cuda_in_map_location_goes_to_the_target(runtime_on, save_on_gpu, target):
    data = _saved_as_if_on_cuda(torch.arange(4.0), save_on_gpu)
    runtime_on(target)
    for location in (lambda storage, loc: storage.cuda(), lambda storage, loc: storage.cuda(0)):
        loaded = torch.load(io.BytesIO(data), map_location=location)
        assert loaded["w"].device.type == "cpu" and torch.equal(loaded["w"], torch.arange(4.0))


def test_jit_load_loads_onto_the_target(runtime_on, tmp_path):
    path = tmp_path / "scripted.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), path)
    log = tmp_path / "run.log"
    runtime_on("cpu", log=str(log))
    for location in ((), ("cuda:0",)):
        assert torch.jit.load(path, *location).weight.device.type == "cpu"
    runtime.undo()  # (the log is written out)
    text = log.read_text()
    assert "torch.jit.load(map_location=None) -> torch.jit.load(map_location='cpu')" in text
    assert "torch.jit.load(map_location='cuda:0') -> torch.jit.load(map_location='cpu')" in text


def test_generators_for_cuda_are_made_for_the_target(runtime_on):
    real = torch.Generator
    runtime_on("cpu")
    generator = torch.Generator(device="cuda").manual_seed(3)
    assert type(generator) is real and isinstance(generator, torch.Generator)
    assert generator.device.type == "cpu"
    assert torch.equal(torch.rand(2, generator=generator), torch.rand(2, generator=real().manual_seed(3)))


def test_set_default_device_and_device_context(runtime_on):
    runtime_on("cpu")
    try:
        torch.set_default_device("cuda")
        assert torch.empty(1).device.type == "cpu"
    finally:
        torch.set_default_device(None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with torch.device("cuda"):
            assert torch.ones(1).device.type == "cpu"
