"""The knowledge base: every torch.cuda API has a verdict on every target, derived from the data."""

import platform
import sys
import types

import pytest

from _built_in_targets import BUILT_IN
from torchport import targets
from torchport.targets.expressions import evaluate
from torchport.targets import fallbacks
from torchport.targets.base import modules_used
from torchport.targets.surface import NPU_SURFACE, TORCH_SURFACE, cuda_apis, names
from torchport.targets.verdict import Kind

APIS = cuda_apis()


def test_the_six_targets_are_discovered_from_their_modules():
    assert [name for name in targets.names() if name in BUILT_IN] == ["cuda", "npu", "xpu", "mps", "cpu", "accelerator"]
    assert all(targets.origin(name) is None for name in BUILT_IN)  # (none comes from another package)


def test_unknown_target_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown target 'tpu'; choose one of: cuda, npu, xpu"):
        targets.get("tpu")


def test_every_public_torch_cuda_name_is_covered():
    modules = ("torch.cuda", "torch.cuda.amp")
    nvtx = [api for api in APIS if api.startswith("torch.cuda.nvtx.")]
    snapshots = [api for api in APIS if api.startswith("torch.cuda.memory._")]
    assert len(APIS) == sum(len(names(TORCH_SURFACE, m)) for m in modules) + len(nvtx) + len(snapshots)
    assert "torch.cuda.nvtx.range_push" in nvtx
    assert sorted(snapshots) == ["torch.cuda.memory._dump_snapshot", "torch.cuda.memory._record_memory_history",
                                 "torch.cuda.memory._snapshot"]
    assert "torch.cuda.synchronize" in APIS and "torch.cuda.amp.GradScaler" in APIS


@pytest.mark.parametrize("name", targets.names())
def test_every_api_gets_exactly_one_verdict_with_what_it_needs(name):
    target = targets.get(name)
    for api in APIS:
        verdict = target.verdict(api)
        assert verdict.api == api
        if verdict.kind in (Kind.SAME, Kind.ADAPTED):
            assert verdict.replacement, verdict
        if verdict.kind is Kind.UNSUPPORTED:
            assert verdict.replacement is None and verdict.note
    assert sum(target.counts(APIS).values()) == len(APIS)


def test_verdicts_follow_the_generated_surface():
    npu, xpu = targets.get("npu"), targets.get("xpu")
    # torch_npu has synchronize and the memory statistics: a 1:1 rename.
    assert npu.verdict("torch.cuda.max_memory_allocated").replacement == "torch.npu.max_memory_allocated"
    assert npu.verdict("torch.cuda.synchronize").kind is Kind.SAME
    # torch.xpu has no jiterator.
    assert xpu.verdict("torch.cuda.jiterator").kind is Kind.UNSUPPORTED


def test_cpu_drops_what_has_no_meaning_and_keeps_values_where_results_are_used():
    cpu = targets.get("cpu")
    assert cpu.verdict("torch.cuda.synchronize").kind is Kind.NOOP
    memory = cpu.verdict("torch.cuda.max_memory_allocated")
    assert (memory.kind, memory.value) == (Kind.NOOP, "0")
    seed = cpu.verdict("torch.cuda.manual_seed_all")
    assert (seed.kind, seed.replacement) == (Kind.ADAPTED, "torch.manual_seed")
    assert cpu.verdict("torch.cuda.make_graphed_callables").kind is Kind.UNSUPPORTED


def test_every_query_has_an_answer_on_the_cpu():
    cpu = targets.get("cpu")
    for query in ("is_bf16_supported", "get_device_capability", "get_device_properties", "device_count"):
        assert cpu.verdict(f"torch.cuda.{query}").kind is not Kind.UNSUPPORTED, query
    properties = cpu.verdict("torch.cuda.get_device_properties").value
    host = evaluate(properties, "cpu", cpu.definitions)
    assert host.total_memory > 2**20 and host.multi_processor_count >= 1 and (host.major, host.minor) == (0, 0)


def test_the_hosts_properties_are_read_on_windows_too(monkeypatch):
    """Windows has no os.sysconf: the written function asks the kernel for the installed memory."""

    class Kernel32:
        @staticmethod
        def GetPhysicallyInstalledSystemMemory(pointer):  # noqa: N802 (the Windows API's name)
            pointer.value = 16 * 2**20  # kilobytes

    fake_ctypes = types.SimpleNamespace(c_ulonglong=lambda: types.SimpleNamespace(value=0), byref=lambda value: value,
                                        windll=types.SimpleNamespace(kernel32=Kernel32))
    monkeypatch.setitem(sys.modules, "ctypes", fake_ctypes)
    windows_os = types.SimpleNamespace(name="nt", cpu_count=lambda: 8)  # (and no sysconf)
    namespace = {"os": windows_os, "types": types, "platform": platform}
    exec(fallbacks.HOST_PROPERTIES_FUNCTION, namespace)
    host = namespace["host_properties"]()
    assert (host.total_memory, host.multi_processor_count) == (16 * 2**30, 8)


def test_the_hosts_properties_are_one_function_that_every_target_can_write():
    for name in targets.names():
        assert targets.get(name).definitions["host_properties"] == fallbacks.HOST_PROPERTIES_FUNCTION
    assert modules_used(fallbacks.HOST_PROPERTIES_FUNCTION) == {"os", "platform", "types"}  # (ctypes: imported inside)


def test_legacy_tensor_types_are_the_cpu_classes_on_the_cpu():
    verdict = targets.get("cpu").verdict("torch.cuda.HalfTensor")
    assert (verdict.kind, verdict.replacement) == (Kind.SAME, "torch.HalfTensor")


def test_device_agnostic_target_guards_device_calls_but_not_probes():
    accelerator = targets.get("accelerator")
    sync = accelerator.verdict("torch.cuda.synchronize")
    assert sync.guard == "torch.accelerator.is_available()"
    assert accelerator.verdict("torch.cuda.is_available").guard is None
    assert accelerator.verdict("torch.cuda.current_device").replacement == "torch.accelerator.current_device_index"


def test_describe_is_the_log_and_report_format():
    verdict = targets.get("npu").verdict("torch.cuda.synchronize")
    assert verdict.describe() == "torch.cuda.synchronize -> torch.npu.synchronize [same]"


def test_the_registry_is_the_targets_own_data():
    assert [name for name in targets.auto_order() if name in BUILT_IN] == ["cuda", "npu", "xpu", "mps"]
    # any target, built in or added: listed by its rank, tried by `auto` where it says so
    found = [targets.get(name) for name in targets.names()]
    assert [(t.rank, t.name) for t in found] == sorted((t.rank, t.name) for t in found)
    assert targets.auto_order() == [t.name for t in found if t.auto]


def test_a_target_without_surface_data_is_refused_when_it_is_built():
    from dataclasses import replace

    with pytest.raises(ValueError, match="no surface data"):
        replace(targets.get("xpu"), surface=frozenset())


def _graph_apis() -> list[str]:
    """CUDA's graph APIs, as torch.cuda.graphs exports them (read from torch, not listed here)."""
    torch_cuda_graphs = pytest.importorskip("torch.cuda.graphs")
    return [f"torch.cuda.{name}" for name in sorted(torch_cuda_graphs.__all__)]


def _device_twin(target, cuda_name: str) -> str | None:
    """What the target's surface calls `cuda_name`: the same name, or the device's for a class
    CUDA names after itself (CUDAGraph -> NPUGraph); None where the surface has neither."""
    if cuda_name in target.surface:
        return cuda_name
    if target.device_type is not None and cuda_name.startswith("CUDA"):
        twin = target.device_type.upper() + cuda_name[len("CUDA"):]
        return twin if twin in target.surface else None
    return None


@pytest.mark.parametrize("name", targets.names())
def test_cuda_graphs_are_what_the_targets_device_module_has(name):
    target = targets.get(name)
    graph_apis = _graph_apis()
    assert "torch.cuda.CUDAGraph" in graph_apis and "torch.cuda.graph" in graph_apis
    for api in graph_apis:
        twin = _device_twin(target, api.rsplit(".", 1)[1])
        verdict = target.verdict(api)
        if twin is None:
            assert verdict.kind is Kind.UNSUPPORTED, verdict
        else:
            assert (verdict.kind, verdict.replacement) == (Kind.SAME, f"{target.device_module}.{twin}"), verdict


def test_torch_npus_graph_class_is_cudagraphs_twin():
    assert "NPUGraph" in names(NPU_SURFACE, "torch.npu")
    assert targets.get("npu").verdict("torch.cuda.CUDAGraph").replacement == "torch.npu.NPUGraph"
    assert targets.get("cpu").verdict("torch.cuda.CUDAGraph").kind is Kind.UNSUPPORTED


def _host_memory_info(os_module):
    """The target's host_memory_info, run against `os_module` (a stand-in for one system's os)."""
    namespace = {"os": os_module}
    exec(fallbacks.DEFINITIONS["host_memory_info"], namespace)
    return namespace["host_memory_info"]()


def _system(counts: dict[str, int] | None):
    """An `os` whose sysconf knows `counts` (None: a system without sysconf, such as Windows)."""
    if counts is None:
        return types.SimpleNamespace()
    return types.SimpleNamespace(sysconf_names=dict.fromkeys(counts, 0), sysconf=counts.__getitem__)


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        pytest.param({"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 1000, "SC_AVPHYS_PAGES": 250}, (4096 * 250, 4096 * 1000),
                     id="Linux counts free pages"),
        pytest.param({"SC_PAGE_SIZE": 16384, "SC_PHYS_PAGES": 1000}, (16384 * 1000, 16384 * 1000),
                     id="macOS does not: free is the total"),
        pytest.param(None, (0, 0), id="Windows has no sysconf: nothing is known"),
    ],
)
def test_mem_get_info_is_the_hosts_free_and_total_memory(counts, expected):
    assert _host_memory_info(_system(counts)) == expected


@pytest.mark.parametrize("name", ["cpu", "mps", "accelerator"])
def test_mem_get_info_has_an_answer_where_the_device_module_has_none(name):
    verdict = targets.get(name).verdict("torch.cuda.mem_get_info")
    assert verdict.kind is not Kind.UNSUPPORTED
    assert verdict.value == "host_memory_info()" and "host_memory_info" in targets.get(name).definitions
@pytest.mark.parametrize("name", fallbacks.TORCH_CLASSES)
def test_the_torch_classes_torch_cuda_reexports_are_torchs_own_on_every_target(name):
    """torch.cuda.OutOfMemoryError is not in torch.cuda's `__all__` (so not in its surface), but it
    is torch.OutOfMemoryError: the same class everywhere, never an unknown API."""
    import torch

    assert getattr(torch.cuda, name) is getattr(torch, name) and name not in torch.cuda.__all__
    for target in targets.names():
        verdict = targets.get(target).verdict(f"torch.cuda.{name}")
        assert (verdict.kind, verdict.replacement) == (Kind.SAME, f"torch.{name}"), target
