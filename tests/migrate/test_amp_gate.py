"""Migrated autocast runs on the CPU only where the CPU computes bfloat16 natively (elsewhere
bfloat16 runs several times slower than float32): on the cpu target, and on the accelerator
target where it falls back to the CPU. The outputs are run, with the CPU said to have native
bfloat16 and not to have it (`cpu_bf16`), never as this host has it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import native_bf16
from torchport import targets
from torchport.migrate import migrate_source
from torchport.targets.expressions import evaluate

# Each spelling leaves the dtype its autocast computed a Linear in.
CUDA_SCRIPT = '''\
import torch

layer = torch.nn.Linear(4, 4)
x = torch.randn(2, 4)
use_amp = True
amp_autocast = torch.cuda.amp.autocast
DTYPES = {}
with torch.cuda.amp.autocast():
    DTYPES["torch.cuda.amp.autocast()"] = layer(x).dtype
with torch.cuda.amp.autocast(enabled=use_amp):
    DTYPES["torch.cuda.amp.autocast(enabled=use_amp)"] = layer(x).dtype
with torch.autocast("cuda", dtype=torch.float16):
    DTYPES["torch.autocast('cuda', dtype=torch.float16)"] = layer(x).dtype
with torch.amp.autocast(device_type="cuda"):
    DTYPES["torch.amp.autocast(device_type='cuda')"] = layer(x).dtype
with amp_autocast():
    DTYPES["amp_autocast = torch.cuda.amp.autocast"] = layer(x).dtype
print(sorted(set(map(str, DTYPES.values()))))
'''


def migrated(target: str) -> str:
    result = migrate_source(CUDA_SCRIPT.encode(), targets.get(target), "train.py")
    assert result.error is None
    return result.source.decode()


@pytest.fixture
def no_accelerator(monkeypatch):
    """The accelerator target's output on a machine without one: it falls back to the CPU."""
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: False)


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
@pytest.mark.parametrize("native", [True, False], ids=["native-bf16", "no-native-bf16"])
def test_migrated_autocast_is_on_on_the_cpu_only_with_native_bfloat16(cpu_bf16, no_accelerator, target, native):
    cpu_bf16(native)
    namespace = {"__name__": "train"}
    exec(compile(migrated(target), "train.py", "exec"), namespace)
    expected = torch.bfloat16 if native else torch.float32
    assert namespace["DTYPES"] == dict.fromkeys(namespace["DTYPES"], expected)
    assert len(namespace["DTYPES"]) == 5


@pytest.mark.parametrize("native", [True, False], ids=["native-bf16", "no-native-bf16"])
def test_on_an_accelerator_the_cpu_does_not_matter(cpu_bf16, native):
    cpu_bf16(native)
    target = targets.get("accelerator")
    assert evaluate(target.autocast_enabled, "xpu", target.definitions) is True
    assert evaluate(target.autocast_enabled, "cpu", target.definitions) is native


@pytest.mark.parametrize("native", [True, False, None], ids=["native-bf16", "no-native-bf16", "unset"])
def test_a_process_the_test_starts_sees_the_cpu_the_test_set(tmp_path, cpu_bf16, native):
    """tests/cpu_bf16 reaches child processes (migrated scripts, `torchport run`): the
    accelerator output run as a script turns autocast on or off as the test says, and where the
    test says nothing, as the suite says (conftest.py: no native bfloat16), not as the host is."""
    if native is None:
        native = os.environ[native_bf16.ENV] == "1"
    else:
        cpu_bf16(native)
    (tmp_path / "train.py").write_text(migrated("accelerator"))
    child = "import runpy, sys; assert 'torch' not in sys.modules; runpy.run_path('train.py', run_name='__main__')"
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", child], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(["torch.bfloat16" if native else "torch.float32"])
