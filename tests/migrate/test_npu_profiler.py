"""npu: torch_npu's profiler stands for torch's (TP020), as GPU2Ascend's rules make it; and the
NCCL backend spelled in capitals is the target's too (TP006)."""

from torchport import targets
from torchport.migrate import migrate_source

SOURCE = b"""import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, record_function
with torch.profiler.profile(activities=[ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                            schedule=torch.profiler.schedule(wait=1, warmup=1, active=1),
                            on_trace_ready=torch.profiler.tensorboard_trace_handler("./log")) as prof:
    prof.step()
dist.init_process_group(backend="NCCL")
"""


def _migrated(target: str) -> str:
    return migrate_source(SOURCE, targets.get(target), "p.py").source.decode()


def test_torch_profiler_becomes_torch_npu_profiler_on_npu():
    migrated = _migrated("npu")
    assert "with torch_npu.profiler.profile(activities=[ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU]," in migrated
    assert "schedule=torch_npu.profiler.schedule(wait=1" in migrated
    assert 'on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./log")' in migrated
    # torch_npu's profiler has no record_function: that import stays torch's, whole
    assert "from torch.profiler import ProfilerActivity, record_function" in migrated
    assert 'dist.init_process_group(backend="hccl")' in migrated


def test_other_targets_keep_torch_profiler():
    for target in ("xpu", "cpu", "accelerator"):
        migrated = _migrated(target)
        assert "torch_npu" not in migrated and "torch.profiler.schedule(" in migrated
    assert "torch.profiler.ProfilerActivity.XPU" in _migrated("xpu")


def test_the_npu_activity_is_read_only_from_torch_npus_class():
    """`from torch.profiler import ProfilerActivity, record_function` stays torch's (torch_npu has
    no record_function), and torch's ProfilerActivity has no NPU: the row says so instead."""
    source = b"from torch.profiler import ProfilerActivity, profile, record_function\nacts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]\n"
    result = migrate_source(source, targets.get("npu"), "p.py")
    assert b"ProfilerActivity.CUDA]" in result.source
    assert any(f.code == "TP017" and f.operation.value == "NOTE" for f in result.findings)
    moved = migrate_source(source.replace(b", record_function", b""), targets.get("npu"), "p.py").source
    assert b"from torch_npu.profiler import ProfilerActivity, profile\n" in moved and b"ProfilerActivity.NPU]" in moved


CONFIGURED = b"""import torch
import torch_npu
from torch.profiler import profile
from torch.profiler import profile as torch_profile, record_function
with torch.profiler.profile(with_flops=False, experimental_config=torch._C._profiler._ExperimentalConfig(verbose=True)) as a:
    pass
with profile(record_shapes=True, experimental_config=config) as b:
    pass
with torch_profile(experimental_config=config) as c:
    pass
with torch.profiler.profile(experimental_config=torch_npu.profiler._ExperimentalConfig()) as d:
    pass
"""


def test_torchs_experimental_config_goes_where_the_profile_becomes_torch_npus():
    result = migrate_source(CONFIGURED, targets.get("npu"), "p.py")
    lines = result.source.decode().splitlines()
    assert "with torch_npu.profiler.profile(with_flops=False) as a:" in lines
    assert "with profile(record_shapes=True) as b:" in lines  # (its import moves whole)
    assert "with torch_profile(experimental_config=config) as c:" in lines  # (still torch's: record_function)
    assert "with torch_npu.profiler.profile(experimental_config=torch_npu.profiler._ExperimentalConfig()) as d:" in lines
    assert sum("drop experimental_config" in f.message for f in result.findings) == 2
    assert "experimental_config=config" in migrate_source(CONFIGURED, targets.get("xpu"), "p.py").source.decode()
