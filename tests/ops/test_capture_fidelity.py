"""A small YOLO-style trainer (multi-scale input, a varying number of boxes, the grid offsets of
`(w * 3.7) % 1.` that killed a real one at step 1 under `ops capture`) prints the same losses and
ends with the same weights plainly, under `torchport ops capture` and under `torchport shapes`."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

BIN = Path(sys.executable).parent

TRAINER = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class TinyYolo(nn.Module):
        def __init__(self, anchors=3):
            super().__init__()
            self.anchors = anchors
            self.body = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.SiLU(),
                                      nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU())
            self.head = nn.Conv2d(16, anchors * 5, 1)

        def forward(self, images):
            out = self.head(self.body(images))
            b, _, h, w = out.shape
            return out.view(b, self.anchors, 5, h, w).permute(0, 1, 3, 4, 2)


    def build_targets(pred, boxes):
        # grid cells of the boxes' centres, and their offsets in the cell: the trainer's own line
        h, w = pred.shape[2:4]
        gxy = boxes[:, 1:3] * torch.tensor([w, h])
        offsets = (gxy * 3.7) % 1.
        cells = gxy.long().clamp_(0, min(h, w) - 1)
        return cells, offsets


    def loss_of(pred, boxes):
        cells, offsets = build_targets(pred, boxes)
        image = boxes[:, 0].long()
        chosen = pred[image, 0, cells[:, 1], cells[:, 0]]
        xy = chosen[:, :2].sigmoid() * 2. - 0.5
        wh = (chosen[:, 2:4].sigmoid() * 2) ** 2
        box_loss = ((xy - offsets) ** 2).sum(1).mean() + (1. - wh.clamp(min=0.)).abs().mean()
        objectness = torch.zeros_like(pred[..., 4])
        objectness[image, 0, cells[:, 1], cells[:, 0]] = 1.
        obj_loss = F.binary_cross_entropy_with_logits(pred[..., 4], torch.where(objectness > 0, 1., 0.))
        return box_loss + 0.5 * obj_loss


    torch.manual_seed(0)
    model = TinyYolo()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True)
    sizes = [32, 48, 32, 64]
    counts = [3, 7, 1, 5]
    batches = [(torch.rand(2, 3, s, s), torch.cat([torch.randint(0, 2, (n, 1)).float(), torch.rand(n, 4)], 1))
               for s, n in zip(sizes, counts)]
    for step, (images, boxes) in enumerate(batches):
        loss = loss_of(model(images), boxes)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item()!r}", flush=True)
    print("weights", repr(sum(float(p.double().sum()) for p in model.parameters())))
    """
)


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.fidelity
def test_a_yolo_style_trainer_trains_the_same_under_ops_capture_and_shapes(tmp_path):
    (tmp_path / "train.py").write_text(TRAINER)
    plain = _run([sys.executable, "train.py"], tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.count("loss") == 4
    captured = _run([str(BIN / "torchport"), "ops", "capture", "-o", "out/ops.json", "train.py"], tmp_path)
    assert captured.returncode == 0, captured.stderr
    assert captured.stdout.startswith(plain.stdout), captured.stdout  # then its own line: "N ops ... -> out/ops.json"
    assert "aten::remainder" in (tmp_path / "out" / "ops.json").read_text()
    shapes = _run([str(BIN / "torchport"), "shapes", "-o", "reports", "train.py"], tmp_path)
    assert shapes.returncode == 0, shapes.stderr
    assert shapes.stdout == plain.stdout
    assert (tmp_path / "reports" / "dynamic_shape_report.csv").is_file()
