"""The catalogue's answers per target: what the rules and the run-time patches both read."""

import pytest

from _built_in_targets import BUILT_IN, added
from torchport import targets
from torchport.apis import cuda_module, graphs
from torchport.apis.devices import Presence, device_presence
from torchport.apis.distributed import ddp_device_ids, sync_batchnorm
from torchport.apis.memory import pinned_memory
from torchport.apis.profiler import drops_cuda_activity
from torchport.apis.streams import record_stream
from torchport.targets.surface import TORCH_SURFACE, load

PRESENCE = {"npu": Presence.ALWAYS, "xpu": Presence.ALWAYS, "mps": Presence.ALWAYS, "cpu": Presence.NEVER,
            "accelerator": Presence.AT_RUN_TIME}




def _presence(name: str) -> Presence:
    """A built-in target's, as written above; an added one's, as its data says (always with a
    device and no run-time guard, never without a device, at run time with a guard)."""
    if name in PRESENCE:
        return PRESENCE[name]
    target = targets.get(name)
    return Presence.NEVER if not target.has_device else Presence.AT_RUN_TIME if target.guard is not None else Presence.ALWAYS


@pytest.mark.parametrize("name", [*sorted(PRESENCE), *added()])
@pytest.mark.parametrize("decision", [device_presence, record_stream, pinned_memory, sync_batchnorm, ddp_device_ids])
def test_a_call_that_needs_a_device_has_one_on_device_targets_never_on_the_cpu_and_at_run_time_on_accelerator(
        name, decision):
    assert decision(targets.get(name)) is _presence(name)


@pytest.mark.parametrize(("presence", "on_host", "there"), [
    (Presence.ALWAYS, False, True), (Presence.ALWAYS, True, True),
    (Presence.NEVER, False, False), (Presence.NEVER, True, False),
    (Presence.AT_RUN_TIME, False, True), (Presence.AT_RUN_TIME, True, False),
])
def test_at_run_time_the_device_agnostic_target_has_a_device_where_its_device_type_is_not_the_hosts(
        presence, on_host, there):
    assert presence.here(on_host) is there


def _nothing_records(name: str) -> bool:
    """A device type known before the script runs, and neither a profiler activity nor a profiler of its own."""
    target = targets.get(name)
    return target.device_type is not None and target.profiler_activity is None and target.profiler_module is None


def test_the_cuda_profiler_activity_goes_where_nothing_records_the_device():
    dropping = [name for name, target in targets.all_targets().items() if drops_cuda_activity(target)]
    assert [name for name in dropping if name in BUILT_IN] == ["mps", "cpu"]
    assert [name for name in dropping if name not in BUILT_IN] == [name for name in added() if _nothing_records(name)]


@pytest.mark.parametrize(("name", "device_type", "twin"), [
    ("CUDAGraph", "npu", "NPUGraph"), ("CUDAPluggableAllocator", "xpu", "XPUPluggableAllocator"), ("Stream", "npu", None),
])
def test_a_class_cuda_names_after_itself_has_its_twin_named_after_the_device(name, device_type, twin):
    assert graphs.twin(name, device_type) == twin


def test_run_patches_the_torch_cuda_apis_whose_kind_the_surface_calls_patched():
    """What `run` replaces at run time (by the object's kind) is what analyze says it reaches (by the
    surface's kind): the two read one rule, and agree for every name of this torch."""
    import importlib

    surface = load(TORCH_SURFACE)["modules"]
    for module in cuda_module.MODULES:
        owner = importlib.import_module(module)
        for name, entry in surface[module].items():
            if hasattr(owner, name):
                assert cuda_module.kind(getattr(owner, name)) == entry["kind"], f"{module}.{name}"
    assert cuda_module.is_patched("function") and cuda_module.is_patched("class")
    assert not cuda_module.is_patched("module") and not cuda_module.is_patched("value")
