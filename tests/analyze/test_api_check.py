"""`analyze --mode apis` checks every torch API a project uses, not only torch.cuda: a misspelled
or removed one in unknown_api.csv (on every target: it exists nowhere), an op without a kernel in
unsupported_api.csv (on the targets that lack it only), each at its line; what the data says has
a kernel there (what another tool flags: Adam's step, var_mean, adaptive_max_pool2d) is not listed."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

TRAIN = '''import torch
import torch.nn as nn
import torch.nn.functional as F
from model import Net


def train(dataset, rank):
    model = Net().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    indices = torch.zeros([dataset.n], dtype=torch.int)
    if rank == 0:
        indices[:] = torch.from_tensor(dataset.indices, dtype=torch.int)
    for x, y in dataset:
        loss = F.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
'''
MODEL = '''import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=1)
        x = F.adaptive_max_pool2d(x, 1)
        x = F.adaptive_max_pool3d(x.unsqueeze(2), output_size=(1, 1, 1))
        return x.flatten(1)
'''
# (file, line, OP) of each report, per target
UNKNOWN = [["train.py", "12", "torch.from_tensor"]]
NO_MPS_KERNEL = [["model.py", "10", "torch.nn.functional.adaptive_max_pool3d"]]
EXPECTED = {
    "npu": {"unknown_api.csv": UNKNOWN, "unsupported_api.csv": []},
    "mps": {"unknown_api.csv": UNKNOWN, "unsupported_api.csv": NO_MPS_KERNEL},
    "xpu": {"unknown_api.csv": UNKNOWN, "unsupported_api.csv": []},
    "cpu": {"unknown_api.csv": UNKNOWN, "unsupported_api.csv": []},
}
NEVER = {"torch.optim.Adam", "torch.optim.Adam.step", "torch.var_mean", "torch.nn.functional.adaptive_max_pool2d"}


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))[1:]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pattern")
    (folder / "train.py").write_text(TRAIN, encoding="utf-8")
    (folder / "model.py").write_text(MODEL, encoding="utf-8")
    return folder


@pytest.mark.parametrize("target", sorted(EXPECTED))
def test_apis_lists_the_unknown_api_and_the_op_without_a_kernel_at_their_lines_on_the_right_targets(
    cli, project: Path, tmp_path: Path, target: str
) -> None:
    code, out, err = cli("analyze", project, "-o", tmp_path / "out", "-t", target, "-m", "apis", "-q")
    assert code == 0, err
    reports = tmp_path / "out" / "torchport_report"
    for name, expected in EXPECTED[target].items():
        found = [row[:2] + [row[3]] for row in _rows(reports / name) if row[3].startswith("torch.") and not row[3].startswith("torch.cuda")]
        assert found == expected, name
        assert not NEVER & {row[3] for row in _rows(reports / name)}
    (tip,) = [row[4] for row in _rows(reports / "unknown_api.csv") if row[3] == "torch.from_tensor"]
    assert tip == "torch.from_tensor does not exist in torch 2.13.0; nearest: torch.tensor"
