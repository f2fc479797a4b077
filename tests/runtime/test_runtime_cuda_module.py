"""torch.cuda and torch.cuda.amp: every API does what its verdict says; probes stay honest."""

from __future__ import annotations

import importlib
import os
import runpy
import time
import types

import pytest
import torch

from torchport.runtime import UnsupportedOnTarget
from torchport.targets.expressions import evaluate
from torchport.runtime.callers import honest_packages
from torchport.targets.surface import cuda_apis
from torchport.targets.verdict import Kind


def _lookup(api: str):
    module, name = api.rsplit(".", 1)
    return getattr(importlib.import_module(module), name, None)


def _called_from(package: str, source: str):
    """Evaluate `source` as if written in a module of `package`."""
    return eval(source, {"__name__": f"{package}.somewhere", "torch": torch})


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_every_cuda_api_follows_its_verdict(runtime_on, target):
    originals = {api: _lookup(api) for api in cuda_apis()}
    session = runtime_on(target)
    checked = {kind: 0 for kind in Kind}
    for api, original in originals.items():
        now = _lookup(api)
        if original is None or isinstance(original, types.ModuleType) or not callable(original):
            assert now is original, api  # modules and plain values are left alone
            continue
        assert now is not original, api
        verdict = session.target.verdict(api)
        guarded_off = verdict.guard and not evaluate(verdict.guard, session.device_type)
        if verdict.kind is Kind.UNSUPPORTED:
            with pytest.raises(UnsupportedOnTarget, match=f"{api}.*target {target}"):
                now()
        elif verdict.kind is Kind.NOOP or guarded_off:
            expected = session.evaluate(verdict.value) if verdict.value else None
            result = now()
            if verdict.value and verdict.value.removesuffix("()") in session.target.definitions:  # asked anew (free memory changes)
                assert type(result).__qualname__ == type(expected).__qualname__, api  # (a class defined anew by evaluate)
                continue
            # values compare equal; objects without value equality (a nullcontext) match by type
            assert result == expected or (type(result) is type(expected) and type(expected).__eq__ is object.__eq__), api
        checked[verdict.kind] += 1
    assert all(checked[kind] > 0 for kind in (Kind.SAME, Kind.ADAPTED, Kind.UNSUPPORTED)), checked


def test_submodules_share_the_replacement(runtime_on):
    runtime_on("cpu")
    import torch.cuda.memory

    assert torch.cuda.memory.empty_cache is torch.cuda.empty_cache
    assert torch.cuda.memory.empty_cache() is None


def test_seeding_goes_through_the_global_generator(runtime_on):
    runtime_on("cpu")
    torch.cuda.manual_seed_all(7)
    first = torch.rand(3)
    torch.manual_seed(7)
    assert torch.equal(first, torch.rand(3))
    assert torch.cuda.initial_seed() == 7


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_every_gpus_generator_state_round_trips_through_a_checkpoint(runtime_on, target, tmp_path):
    """A checkpoint's `torch.cuda.get_rng_state_all()`, restored by `set_rng_state_all`, draws the
    same numbers again: without a GPU it is the CPU generator's state, in a list of one."""
    runtime_on(target)
    torch.manual_seed(3)
    torch.save({"cuda_rng": torch.cuda.get_rng_state_all()}, tmp_path / "rng.pt")
    before = torch.rand(4)
    states = torch.load(tmp_path / "rng.pt")["cuda_rng"]
    assert len(states) == 1
    torch.cuda.set_rng_state_all(states)
    assert torch.equal(torch.rand(4), before)
    torch.cuda.set_rng_state_all([])  # (what CUDA's answers on a machine without GPUs): nothing to restore
    assert not torch.equal(torch.rand(4), before)


def test_is_available_is_true_for_the_script_and_real_for_probing_libraries(runtime_on):
    real = torch.cuda.is_available()
    assert real is False  # this machine has no CUDA: the truth to keep
    runtime_on("cpu")
    assert torch.cuda.is_available() is True
    assert torch.cuda.device_count() >= 1
    for package in ("accelerate", "transformers", "triton", "torch"):
        assert _called_from(package, "torch.cuda.is_available()") is real, package
        assert _called_from(package, "torch.cuda.device_count()") == 0, package
    assert _called_from("mytrainer", "torch.cuda.is_available()") is True


def test_is_available_asked_about_another_packages_cuda_build_gets_torchs_own_answer(runtime_on, tmp_path):
    """(YOLOv5's export.py asked for onnxruntime-gpu and tensorflow under run --target cpu: the
    calls migrate keeps (TP011) answer as torch does; the device question in the same file does not)"""
    script = tmp_path / "export_like.py"
    script.write_text(
        "import torch\n"
        'device = "cuda" if torch.cuda.is_available() else "cpu"\n'
        "cuda = torch.cuda.is_available()\n"
        'runtime = "onnxruntime-gpu" if cuda else "onnxruntime"\n'
        "tf = f\"tensorflow{'' if torch.cuda.is_available() else '-cpu'}\"\n")
    runtime_on("cpu")
    found = runpy.run_path(str(script), run_name="__main__")
    assert (found["device"], found["runtime"], found["tf"]) == ("cuda", "onnxruntime", "tensorflow-cpu")


def test_the_honest_packages_are_configurable(runtime_on):
    runtime_on("cpu", honest_to="mylib")
    assert _called_from("mylib", "torch.cuda.is_available()") is False
    assert _called_from("accelerate", "torch.cuda.is_available()") is True


def test_the_honest_packages_come_from_the_environment(monkeypatch):
    """`TORCHPORT_HONEST_TO` (what `torchport run --honest-to` sets) replaces the default list."""
    monkeypatch.setenv("TORCHPORT_HONEST_TO", "mylib, otherlib")
    assert honest_packages() == {"mylib", "otherlib"}


def test_timing_events_read_the_host_clock(runtime_on):
    runtime_on("cpu")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    assert isinstance(start, torch.cuda.Event)
    start.record()
    time.sleep(0.05)
    end.record()
    end.synchronize()
    assert 40 <= start.elapsed_time(end) < 2000
    with pytest.raises(RuntimeError, match="recorded"):
        torch.cuda.Event().elapsed_time(end)


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_timing_events_kept_in_lists_and_dicts_read_the_host_clock(runtime_on, target, monkeypatch):
    runtime_on(target)
    ticks = iter(range(100))
    monkeypatch.setattr(time, "perf_counter", lambda: next(ticks) / 1000)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    marks = {"end": [torch.cuda.Event(enable_timing=True) for _ in range(2)]}
    for start, end in zip(starts, marks["end"]):
        start.record()
        end.record()
    torch.cuda.synchronize()
    assert [s.elapsed_time(e) for s, e in zip(starts, marks["end"])] == pytest.approx([1.0, 1.0])


def test_streams_become_the_targets_streams(runtime_on):
    runtime_on("cpu")
    stream = torch.cuda.Stream()
    assert isinstance(stream, torch.cpu.Stream) and isinstance(stream, torch.cuda.Stream)
    assert isinstance(torch.cuda.current_stream(), torch.cpu.Stream)


def test_unsupported_names_the_api_and_the_target(runtime_on):
    runtime_on("cpu")
    with pytest.raises(UnsupportedOnTarget, match=r"torch.cuda.make_graphed_callables is not supported on target cpu"):
        torch.cuda.make_graphed_callables(torch.nn.Linear(2, 2), (torch.ones(2),))


def test_every_query_has_an_answer_on_the_cpu(runtime_on):
    runtime_on("cpu")
    assert torch.cuda.is_bf16_supported() is True
    assert torch.cuda.get_device_capability(0) == (0, 0)
    properties = torch.cuda.get_device_properties(0)
    assert properties.total_memory > 2**20 and properties.multi_processor_count >= 1
    with torch.cuda.nvtx.range("step"):
        torch.cuda.nvtx.range_push("forward")
        torch.cuda.nvtx.range_pop()


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_a_memory_snapshot_records_nothing_where_no_device_allocator_records(runtime_on, target, tmp_path):
    """On a CPU-only torch, torch.cuda.memory's recorder raises AttributeError (torch._C has no CUDA)."""
    runtime_on(target)
    torch.cuda.memory._record_memory_history(max_entries=1000)
    torch.ones(4)
    assert torch.cuda.memory._snapshot() == {"segments": [], "device_traces": []}
    torch.cuda.memory._dump_snapshot(str(tmp_path / "snapshot.pickle"))
    torch.cuda.memory._record_memory_history(enabled=None)
    assert not (tmp_path / "snapshot.pickle").exists()


def test_the_capability_is_cudas_pair_on_the_device_agnostic_target(runtime_on):
    """torch.accelerator.get_device_capability answers a dict: CUDA code unpacks (major, minor)."""
    runtime_on("accelerator")
    major, minor = torch.cuda.get_device_capability()
    assert (major, minor) == (0, 0) and torch.cuda.get_device_capability(0)[0] < 8
    assert torch.cuda.is_bf16_supported() is True  # (the host's answer: torch.cpu has no such query)



def test_the_targets_own_code_gets_torchs_answers(runtime_on):
    """A definition of the target's (device_bf16_supported) asks the device module itself: on a GPU
    that is the patched torch.cuda's, which must not send it back to the definition (recursion)."""
    session = runtime_on("cpu")
    assert torch.cuda.is_available() is True  # (the script's answer on the cpu target)
    assert session.evaluate("torch.cuda.is_available()") is False  # (torch's own, to the target's code)


def test_a_replacement_that_answers_none_gives_the_verdicts_value(runtime_on, monkeypatch):
    """torch_npu's get_device_capability answers None unless TORCH_NPU_DEVICE_CAPABILITY is set:
    the npu verdict's or_value stands in (shown here with the cpu target's device module)."""
    import dataclasses

    from torchport import targets

    npu = targets.get("npu").verdict("torch.cuda.get_device_capability")
    assert npu.or_value == "(0, 0)" and npu.replacement == "torch.npu.get_device_capability"
    cpu = targets.get("cpu")
    stand_in = dataclasses.replace(npu, replacement="torch.cpu.current_device")  # (a replacement answering a value)
    verdict = type(cpu).verdict
    monkeypatch.setattr(type(cpu), "verdict", lambda self, api: stand_in if api == npu.api else verdict(self, api))
    monkeypatch.setattr(torch.cpu, "current_device", lambda *args: None)
    runtime_on("cpu")
    assert torch.cuda.get_device_capability() == (0, 0)


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_mem_get_info_is_the_hosts_memory_asked_anew_on_every_call(runtime_on, target, monkeypatch):
    runtime_on(target)
    free, total = torch.cuda.mem_get_info()
    assert isinstance(free, int) and 0 <= free <= total
    counts = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 1000, "SC_AVPHYS_PAGES": 250}
    monkeypatch.setattr(os, "sysconf_names", dict.fromkeys(counts, 0), raising=False)
    monkeypatch.setattr(os, "sysconf", counts.__getitem__, raising=False)
    assert torch.cuda.mem_get_info(0) == (4096 * 250, 4096 * 1000)


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_legacy_tensor_types_are_the_cpu_classes_on_the_cpu(runtime_on, target):
    """(accelerator: the device type's own classes; on a host without one, the CPU's)"""
    runtime_on(target)
    tensor_type = torch.cuda.FloatTensor
    x = torch.zeros(3, dtype=torch.float64).type(tensor_type)
    assert x.dtype == torch.float32 and isinstance(x, torch.cuda.FloatTensor)
    assert tensor_type(2, 3).shape == (2, 3) and torch.cuda.LongTensor([1, 2]).dtype == torch.int64


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_device_context_does_nothing_where_there_is_no_device_to_switch_to(runtime_on, target):
    runtime_on(target)
    with torch.cuda.device(1):
        x = torch.ones(2).cuda()
    assert x.device.type == "cpu"


def test_record_stream_on_a_cpu_tensor_does_nothing(runtime_on):
    runtime_on("cpu")
    x = torch.ones(2)
    x.record_stream(torch.cuda.current_stream())
    assert x.sum().item() == 2


def test_sync_batchnorm_keeps_batchnorm_on_the_cpu(runtime_on):
    runtime_on("cpu")
    model = torch.nn.Sequential(torch.nn.BatchNorm1d(3))
    converted = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert converted is model and isinstance(converted[0], torch.nn.BatchNorm1d)


def test_a_stream_on_the_device_agnostic_target_is_on_its_device(runtime_on):
    runtime_on("accelerator")
    stream = torch.cuda.Stream()
    assert isinstance(stream, torch.Stream) and stream.device.type == "cpu"  # no accelerator here
    with torch.cuda.stream(stream):
        x = torch.ones(2) * 2
    torch.cuda.current_stream().wait_stream(stream)
    assert x.sum().item() == 4


def test_device_properties_on_the_device_agnostic_target_are_the_hosts_without_an_accelerator(runtime_on):
    runtime_on("accelerator")
    properties = torch.cuda.get_device_properties(0)
    assert properties.total_memory > 2**20 and (properties.major, properties.minor) == (0, 0)
