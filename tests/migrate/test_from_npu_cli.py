"""`torchport migrate --from npu` end to end, as a person runs it: a small tree written for the
Ascend NPU (ModelZoo's way: set_device, `.npu()`, torch.npu.amp, an NpuFused optimizer, fused
kernels, NPU-only tuning) migrated to the CPU and back to CUDA, the reports read, the CPU copy
run. Python processes: in make fidelity."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from torchport import targets
from torchport.npu_to_cuda.changes import CODES

pytestmark = pytest.mark.fidelity

NPU = targets.get("npu")

TRAIN = f'''\
import os

import torch
import {NPU.setup_import}

os.environ["{NPU.visible_devices_env}"] = "0"
torch.npu.set_compile_mode(jit_compile=False)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = {NPU.setup_import}.npu_format_cast(self.fc(x), 2)
        return {NPU.setup_import}.npu_rms_norm(y, torch.ones(8))[0]


def main():
    torch.manual_seed(0)
    device = torch.device("{NPU.device_type}:0")
    torch.npu.set_device(device)
    model = Net().{NPU.tensor_method}()
    optimizer = {NPU.setup_import}.optim.NpuFusedSGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 8).to(device)
    for _ in range(3):
        with torch.npu.amp.autocast(enabled=False):
            loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.npu.synchronize()
    print(f"loss {{loss.item():.6f}}")


if __name__ == "__main__":
    main()
'''
HELPER = "import os\n\n\ndef data_root():\n    return os.environ.get('DATA', '.')\n"
CUDA_TRAIN = "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\ntorch.cuda.synchronize()\n"


def _torchport(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchport", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore"})


def _rows(out: Path, name: str) -> list[dict]:
    with open(out / "torchport_report" / name, newline="") as file:
        return list(csv.DictReader(file))


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    root = tmp_path_factory.mktemp("from_npu")
    npu, cuda = root / "npu_project", root / "cuda_project"
    npu.mkdir()
    cuda.mkdir()
    (npu / "train.py").write_text(TRAIN)
    (npu / "data.py").write_text(HELPER)
    (cuda / "train.py").write_text(CUDA_TRAIN)
    return root, npu, cuda


@pytest.fixture(scope="module")
def migrated(trees):
    root, npu, cuda = trees
    done = {}
    for target in ("cpu", "cuda"):
        out = root / f"out_{target}"
        done[target] = out, _torchport("migrate", npu, "-o", out, "--from", "npu", "--target", target, cwd=root)
    out = root / "out_cuda_code"
    done["cuda code"] = out, _torchport("migrate", cuda, "-o", out, "--target", "cpu", cwd=root)
    return done


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_npu_code_migrates_with_the_reports_a_cuda_migration_writes(migrated, trees, target):
    out, done = migrated[target]
    assert done.returncode == 0, done.stderr
    reports = {p.name for p in (out / "torchport_report").iterdir()}
    assert reports == {p.name for p in (migrated["cuda code"][0] / "torchport_report").iterdir()}
    rows = _rows(out, "change_list.csv")
    codes = {row["Rule"] for row in rows}
    assert {"TP401", "TP402", "TP403", "TP404", "TP407", "TP408", "TP409"} <= codes <= set(CODES) | {
        code for code in codes if not code.startswith("TP4")}
    assert all(row["File"] == "train.py" and int(row["Start Line"]) >= 1 for row in rows)
    source = trees[1] / "train.py"
    lines = source.read_text().splitlines()
    imports = [row for row in rows if row["Rule"] == "TP401"]
    assert [lines[int(row["Start Line"]) - 1] for row in imports] == [f"import {NPU.setup_import}"]  # (the line as read)
    summary = json.loads((out / "torchport_report" / "summary.json").read_text())
    assert (summary["from"], summary["npu_code"]["converted"]) == ("npu", ["train.py"])
    assert (out / "data.py").read_bytes() == (trees[1] / "data.py").read_bytes()


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_nothing_of_the_npu_is_left(migrated, target):
    text = (migrated[target][0] / "train.py").read_text()
    # (torchport.optim.NpuFusedSGD, torch_npu's signature on torchport's optimizer, may stay: it runs anywhere)
    for npu_name in (NPU.setup_import, f"{NPU.device_module}.", f".{NPU.tensor_method}(", f'"{NPU.device_type}:',
                     NPU.visible_devices_env):
        assert npu_name not in text, npu_name


def test_the_cpu_copy_runs_as_the_same_model_written_for_the_cpu(migrated, trees):
    out, _ = migrated["cpu"]
    ran = subprocess.run([sys.executable, "train.py"], cwd=out, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    hand = trees[0] / "by_hand.py"
    hand.write_text(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "fc = torch.nn.Linear(8, 8)\n"
        "optimizer = torch.optim.SGD(fc.parameters(), lr=0.1)\n"
        "x = torch.randn(4, 8)\n"
        "for _ in range(3):\n"
        "    y = fc(x)\n"
        "    loss = (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-6)).pow(2).mean()\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "print(f'loss {loss.item():.6f}')\n"
    )
    expected = subprocess.run([sys.executable, hand], capture_output=True, text=True, timeout=300)
    assert float(ran.stdout.split()[-1]) == pytest.approx(float(expected.stdout.split()[-1]), rel=1e-4)


def test_the_cuda_copy_is_cuda_code_that_cuda_migrates_no_further(migrated, trees):
    out, _ = migrated["cuda"]
    text = (out / "train.py").read_text()
    assert ".cuda()" in text and "torch.cuda.set_device" in text and "torch.optim.SGD" in text
    again = _torchport("migrate", out, "-o", trees[0] / "again", "--target", "cuda", cwd=trees[0])
    assert again.returncode == 0
    assert (trees[0] / "again" / "train.py").read_text() == text
    assert "CUDA code runs on cuda as written" in again.stderr


def test_migrate_without_from_npu_suggests_it(trees):
    root, npu, _ = trees
    done = _torchport("migrate", npu, "-o", root / "plain", "--target", "cpu", cwd=root)
    assert done.returncode == 0
    assert f"{npu} looks like NPU code (1 of 2 files use {NPU.setup_import}); migrate it with --from npu" in done.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is here")
def test_run_on_cuda_without_a_gpu_is_one_line(trees):
    root, _, cuda = trees
    done = _torchport("run", "--target", "cuda", cuda / "train.py", cwd=root)
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["torchport run: error: target cuda is not available here: torch.cuda.is_available() is False"]
