"""A training script written for the NPU (npu_training/train_npu.py: torch_npu, set_device, .npu(),
NpuFusedSGD, torch.npu.amp, hccl, torch_npu kernels) runs under `torchport run --target cpu`, alone
and as two torchrun processes, with the losses of the same model written for the CPU by hand
(train_cpu.py), to 1e-4 relative; its log names the NPU calls it redirected."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torchport.targets.npu import TARGET as NPU

SCRIPTS = Path(__file__).resolve().parent / "npu_training"
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
RUN = ["-m", "torchport", "run", "--target", "cpu"]
RELATIVE = 1e-4


def losses(result) -> list[float]:
    assert result.returncode == 0, result.stderr[-3000:]
    found = [float(line.split()[-1]) for line in result.stdout.splitlines() if line.startswith("step ")]
    assert len(found) == 6, result.stdout
    return found


def assert_close(got: list[float], expected: list[float]) -> None:
    assert [abs(a - b) / abs(b) <= RELATIVE for a, b in zip(got, expected)] == [True] * len(expected), (got, expected)


@pytest.mark.fidelity
@pytest.mark.parametrize("launcher", [[sys.executable], TORCHRUN], ids=["one process", "torchrun, 2 processes"])
def test_an_npu_script_runs_on_the_cpu_with_the_losses_of_its_cpu_twin(run_tool, tmp_path, launcher, cpu_bf16):
    cpu_bf16(False)  # (autocast stays off, as the twin has none: bfloat16 would differ by more than 1e-4)
    by_hand = losses(run_tool([*launcher, str(SCRIPTS / "train_cpu.py")], cwd=tmp_path))
    ported = losses(run_tool([*launcher, *RUN, str(SCRIPTS / "train_npu.py")], cwd=tmp_path))
    assert_close(ported, by_hand)
    assert by_hand[-1] < by_hand[0]  # (it trains)
    log = next(tmp_path.glob("torchport_run*.log")).read_text()
    device_module = NPU.device_module
    for redirected in (f"import {NPU.setup_import} ->", f"{device_module}.set_device ->", f"{device_module}.amp.autocast ->",
                       f"torch.nn.Module.{NPU.tensor_method} ->", f"{NPU.setup_import}.optim.NpuFusedSGD ->",
                       f"{NPU.setup_import}.npu_rms_norm ->"):
        assert redirected in log
    if launcher is TORCHRUN:
        assert "init_process_group(backend='hccl') -> torch.distributed.init_process_group(backend='gloo') [same]" in log
    assert [line for line in log.splitlines() if line.startswith("# summary:")][0].endswith(" 0 unsupported")
