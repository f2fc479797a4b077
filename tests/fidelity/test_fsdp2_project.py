"""A torchtitan-style FSDP2 trainer (fsdp2/train.py: a process group with "cuda:nccl,cpu:gloo" and a
device id, a device mesh on "cuda", fully_shard per block and the root, fused AdamW), #37's first
"Done when": under torchrun with two processes it trains after `migrate` to cpu and to accelerator
(on this CPU host) and under `run --target cpu`, with the losses of the same script written by hand
for gloo (BY_HAND, its lines ported one by one); its npu output uses hccl, renames or reports each NCCL setting and
names only what torch_npu has."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _processes import execute
from _torchrun import ATTEMPTS, transient
from torchport.targets.surface import NPU_SURFACE, names

pytestmark = pytest.mark.fidelity  # two torchrun launches of two processes per mode

HERE = Path(__file__).resolve().parent / "fsdp2"
BIN = Path(sys.executable).parent
TORCHPORT = [str(BIN / "torchport")] if (BIN / "torchport").exists() else [sys.executable, "-m", "torchport.cli"]
TORCHRUN = shutil.which("torchrun", path=str(BIN)) or "torchrun"
TIMEOUT_S = 120
LOSS = re.compile(r"^step (\d+) loss (\d+\.\d+)$", re.MULTILINE)
STEPS = 8


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("TORCHPORT_TARGET", None)
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")
    return env


def _torchrun(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    command = [TORCHRUN, "--standalone", "--nproc_per_node", "2", *args]
    for _attempt in ATTEMPTS:  # (a launch that failed on its own, not on the script, is tried again)
        result = execute(command, cwd, _env(), TIMEOUT_S)
        if result.returncode == 0 or not transient(result.stderr):
            break
    return result


def _losses(result: subprocess.CompletedProcess) -> list[tuple[int, str]]:
    story = f"{' '.join(map(str, result.args))}\nexit {result.returncode}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    assert result.returncode == 0 and "FINAL" in result.stdout, story
    losses = [(int(step), loss) for step, loss in LOSS.findall(result.stdout)]
    assert [step for step, _ in losses] == list(range(STEPS)), story  # (rank 0 alone prints them)
    return losses


def _migrated(target: str, tmp_path: Path) -> Path:
    out = tmp_path / target
    result = subprocess.run([*TORCHPORT, "migrate", str(HERE / "train.py"), "-o", str(out), "--target", target, "--quiet"],
                            capture_output=True, text=True, env=_env(), timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    return out / "train.py"


# train.py as a person ports it to gloo on the CPU, line by line: the losses migrate and run must give.
BY_HAND = {
    '    os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"\n': "",
    '    os.environ.setdefault("NCCL_DEBUG", "WARN")\n': "",
    '    local_rank = int(os.environ["LOCAL_RANK"])\n': "",
    '    device = torch.device(f"cuda:{local_rank}")\n': '    device = torch.device("cpu")\n',
    "    torch.cuda.set_device(device)\n": "",
    '    dist.init_process_group(backend="cuda:nccl,cpu:gloo", device_id=device)\n': '    dist.init_process_group(backend="gloo")\n',
    'init_device_mesh("cuda", ': 'init_device_mesh("cpu", ',
}


@pytest.fixture(scope="module")
def by_hand(tmp_path_factory) -> list[tuple[int, str]]:
    folder = tmp_path_factory.mktemp("by_hand")
    text = (HERE / "train.py").read_text()
    for cuda, gloo in BY_HAND.items():
        assert text.count(cuda) == 1, cuda
        text = text.replace(cuda, gloo)
    code = text.split('"""', 2)[2]  # (past the docstring, which says what the script was written for)
    assert "cuda" not in code and "nccl" not in code.lower()
    (folder / "train_gloo.py").write_text(text)
    return _losses(_torchrun([str(folder / "train_gloo.py")], folder))


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_the_migrated_trainer_gives_the_losses_of_the_one_written_for_gloo(target, tmp_path, by_hand):
    script = _migrated(target, tmp_path)
    assert _losses(_torchrun([str(script)], script.parent)) == by_hand


def test_the_trainer_under_run_gives_the_losses_of_the_one_written_for_gloo(tmp_path, by_hand):
    script = tmp_path / "train.py"
    shutil.copy(HERE / "train.py", script)
    assert _losses(_torchrun(["-m", "torchport", "run", "--target", "cpu", str(script)], tmp_path)) == by_hand


def test_the_npu_output_uses_hccl_maps_or_reports_each_nccl_setting_and_only_names_torch_npu_has(tmp_path):
    script = _migrated("npu", tmp_path)
    text = script.read_text()
    assert 'backend="npu:hccl,cpu:gloo"' in text and 'init_device_mesh("npu"' in text and "cuda" not in text
    assert '"HCCL_ASYNC_ERROR_HANDLING"' in text  # (TORCH_NCCL_ASYNC_ERROR_HANDLING's twin)
    notes = (script.parent / "torchport_report" / "notes.csv").read_text()
    assert '"NCCL_DEBUG"' in text and "NCCL_DEBUG configures NCCL" in notes  # (no twin: left, with a row)
    used = set(re.findall(r"\btorch\.npu\.(\w+)", text))
    assert used and used <= set(names(NPU_SURFACE, "torch.npu"))
