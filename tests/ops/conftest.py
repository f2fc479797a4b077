"""A small CNN trained for two steps, seen three ways: a printed profiler table, a chrome trace
and a live capture. All three are made here, on the CPU, once per test session."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

STEPS = 2

SMALL_CNN = textwrap.dedent(
    """
    import sys
    import torch
    from torch import nn

    def build(dtype=torch.float32):
        torch.manual_seed(0)
        model = nn.Sequential(
            nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(36, 5),
        ).to(dtype)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        inputs = torch.randn(2, 3, 8, 8, dtype=dtype)
        labels = torch.tensor([1, 2])
        return model, optimizer, inputs, labels

    def step(model, optimizer, inputs, labels):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(inputs), labels)
        loss.backward()
        optimizer.step()
        return loss.detach()

    if __name__ == "__main__":
        steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
        model, optimizer, inputs, labels = build()
        for number in range(steps):
            loss = step(model, optimizer, inputs, labels)
            print(f"step {number} loss {float(loss):.6f}", flush=True)
    """
)


@dataclass
class Profiled:
    table: str  # what key_averages(group_by_input_shape=True).table() printed
    trace: Path  # export_chrome_trace
    captured: object  # the OpRecorder's calls, as an OpSet


def load_cnn(folder: Path):
    """The SMALL_CNN module, written to `folder` and imported from there."""
    import importlib.util

    pytest.importorskip("torch")
    path = folder / "small_cnn.py"
    path.write_text(SMALL_CNN)
    spec = importlib.util.spec_from_file_location("small_cnn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def cnn(tmp_path):
    """The SMALL_CNN module: build() and step()."""
    return load_cnn(tmp_path)


@pytest.fixture(scope="session")
def cnn_script(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cnn")
    load_cnn(folder)
    return folder / "small_cnn.py"


@pytest.fixture(scope="session")
def profiled(tmp_path_factory) -> Profiled:
    from torch.profiler import ProfilerActivity, profile

    from torchport.ops import kernels
    from torchport.ops.capture import to_opset
    from torchport.ops.recorder import OpRecorder

    folder = tmp_path_factory.mktemp("profiled")
    cnn = load_cnn(folder)
    built = cnn.build()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(STEPS):
            cnn.step(*built)
    table = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total", row_limit=-1)
    trace = folder / "trace.json"
    prof.export_chrome_trace(str(trace))
    built = cnn.build()
    with OpRecorder() as recorder:
        for _ in range(STEPS):
            cnn.step(*built)
    return Profiled(table, trace, to_opset(recorder.calls, kernels.default()))
