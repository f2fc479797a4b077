"""`migrate --amp torch` and `run --amp` on three float32 trainers written in the style of real
ones (projects/): each runs after it, on the CPU with native bfloat16 simulated both ways, and its
loss stays within the AMP tolerance of the float32 run over 20 steps; the tolerance tells a wrong
placement (the loss scaled twice). The scripts run in this process (torch is imported once)."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import sys
from pathlib import Path

import pytest

from torchport import runtime
from torchport.migrate.workers import Choices, Job, migrate_one
from torchport.runtime import amp_training

pytestmark = pytest.mark.fidelity  # whole pattern projects trained in every mode: make fidelity

PROJECTS = Path(__file__).parent / "projects"
NAMES = ("imagenet_classifier", "yolo_detector", "lstm_language_model")
TOLERANCE = 0.01  # relative, per step: bfloat16 rounds at 2**-8, and 20 steps let it drift
STEPS = 20


def losses(script: Path, cwd: Path, monkeypatch) -> list[float]:
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", [str(script)])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(script), run_name="__main__")
    return [float(x) for x in re.findall(r" loss (\S+)", out.getvalue())]


def within_tolerance(amp: list[float], reference: list[float]) -> bool:
    return len(amp) == len(reference) == STEPS and all(abs(a - r) <= TOLERANCE * abs(r) for a, r in zip(amp, reference))


def migrated(name: str, tmp_path: Path, amp: str = "torch") -> Path:
    source = PROJECTS / f"{name}.py"
    result = migrate_one(Job(source.name, source.read_bytes()), Choices("cpu", amp=amp))
    assert result.error is None
    out = tmp_path / "migrated" / source.name
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(result.source)
    return out


@pytest.fixture
def run_target(monkeypatch):
    """`run --target cpu [--amp]` in this process: (the session's AMP or None), undone after."""
    sessions = []

    def apply(amp: bool):
        session = runtime.apply("cpu", log=None)
        sessions.append(session)
        return amp_training.install(session) if amp else None

    yield apply
    runtime.undo()


def reference_losses(name: str, tmp_path: Path, monkeypatch, run_target) -> list[float]:
    run_target(amp=False)
    reference = losses(PROJECTS / f"{name}.py", tmp_path, monkeypatch)
    runtime.undo()
    return reference


@pytest.mark.parametrize("name", NAMES)
def test_migrate_amp_torch_trains_within_the_amp_tolerance_and_is_off_without_native_bf16(
        name, tmp_path, monkeypatch, cpu_bf16, run_target):
    cpu_bf16(True)
    reference = reference_losses(name, tmp_path, monkeypatch, run_target)
    script = migrated(name, tmp_path)
    text = script.read_text()
    assert "torch.amp.autocast(" in text and "scaler.scale(loss).backward()" in text
    amp = losses(script, tmp_path, monkeypatch)
    assert within_tolerance(amp, reference) and amp != reference  # (bfloat16 computed it: not the same numbers)
    cpu_bf16(False)
    assert losses(script, tmp_path, monkeypatch) == reference  # (autocast off; the scale is a power of two)


@pytest.mark.parametrize("name", NAMES)
def test_run_amp_trains_within_the_amp_tolerance_and_is_off_without_native_bf16(
        name, tmp_path, monkeypatch, cpu_bf16, run_target):
    cpu_bf16(True)
    reference = reference_losses(name, tmp_path, monkeypatch, run_target)
    assert run_target(amp=True) is not None
    amp = losses(PROJECTS / f"{name}.py", tmp_path, monkeypatch)
    assert within_tolerance(amp, reference) and amp != reference
    runtime.undo()
    cpu_bf16(False)
    assert run_target(amp=True) is None  # (off: a CPU without native bfloat16 runs float32 faster)
    assert losses(PROJECTS / f"{name}.py", tmp_path, monkeypatch) == reference


@pytest.mark.parametrize("name", ["yolo_detector", "imagenet_classifier"])
def test_the_tolerance_tells_a_loss_scaled_twice(name, tmp_path, monkeypatch, cpu_bf16, run_target):
    cpu_bf16(True)
    reference = reference_losses(name, tmp_path, monkeypatch, run_target)
    script = migrated(name, tmp_path)
    text = script.read_text()
    script.write_text(text.replace("scaler.scale(loss).backward()", "scaler.scale(scaler.scale(loss)).backward()"))
    assert not within_tolerance(losses(script, tmp_path, monkeypatch), reference)


def test_run_amp_scales_float16_gradients_and_unscales_them_before_clipping(tmp_path, monkeypatch, run_target):
    """Where the target computes in float16 (the NPU), run --amp's GradScaler stands around backward
    and step: simulated here with float16 autocast on the CPU."""
    import torch
    from torchport.runtime.session import Session

    reference = reference_losses("imagenet_classifier", tmp_path, monkeypatch, run_target)
    monkeypatch.setattr(Session, "autocast_dtype", lambda self, dtype: torch.float16)
    monkeypatch.setattr(Session, "autocast_allowed", lambda self: True)
    clipped = []
    original = torch.nn.utils.clip_grad.clip_grad_norm_

    def spy(parameters, *args, **kwargs):  # (what the clip reads, under run --amp's own wrapper)
        parameters = list(parameters)
        clipped.append(max(p.grad.abs().max().item() for p in parameters if p.grad is not None))
        return original(parameters, *args, **kwargs)

    monkeypatch.setattr(torch.nn.utils.clip_grad, "clip_grad_norm_", spy)
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", spy)
    amp = run_target(amp=True)
    assert amp.scaler is not None
    amp_losses = losses(PROJECTS / "imagenet_classifier.py", tmp_path, monkeypatch)
    assert within_tolerance(amp_losses, reference)
    assert amp.scaler.get_scale() >= 2.0 ** 10 and clipped and max(clipped) < 100  # (scaled, then unscaled first)


def test_run_amp_adds_nothing_to_a_script_with_autocast_of_its_own(tmp_path, monkeypatch, cpu_bf16, run_target):
    cpu_bf16(True)
    script = tmp_path / "own.py"
    script.write_text(
        "import torch\n"
        "model = torch.nn.Linear(4, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scaler = torch.amp.GradScaler('cpu')\n"
        "for step in range(3):\n"
        "    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "        loss = model(torch.ones(2, 4)).float().pow(2).mean()\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n"
        "    print(f'step {step} loss {loss.item():.6f}')\n")
    amp = run_target(amp=True)
    assert len(losses(script, tmp_path, monkeypatch)) == 3
    assert amp.own


def test_run_amp_leaves_a_closures_backward_inside_the_step_unscaled(tmp_path, monkeypatch, run_target):
    """LBFGS calls its closure (and its backward) inside step: scaled there, its gradients would
    never be unscaled. Simulated float16 on the CPU, as above."""
    import torch
    from torchport.runtime.session import Session

    script = tmp_path / "lbfgs.py"
    script.write_text(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "model = torch.nn.Linear(3, 1)\n"
        "x, y = torch.randn(16, 3), torch.randn(16, 1)\n"
        "optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5)\n"
        "for step in range(3):\n"
        "    def closure():\n"
        "        optimizer.zero_grad()\n"
        "        loss = torch.nn.functional.mse_loss(model(x), y)\n"
        "        loss.backward()\n"
        "        return loss\n"
        "    loss = optimizer.step(closure)\n"
        "    print(f'step {step} loss {loss.item():.6f}')\n")
    reference = losses(script, tmp_path, monkeypatch)
    monkeypatch.setattr(Session, "autocast_dtype", lambda self, dtype: torch.float16)
    monkeypatch.setattr(Session, "autocast_allowed", lambda self: True)
    run_target(amp=True)
    amp = losses(script, tmp_path, monkeypatch)
    assert len(amp) == 3 and all(abs(a - r) <= 0.05 * abs(r) for a, r in zip(amp, reference))
