"""Habits of Ascend's ModelZoo scripts that `migrate --from npu` must carry to the CPU (#34): int32
class labels, a profiler import with the file's own fallback, `torch.npu.current_stream().synchronize()`,
and `opt.device == 'npu'` against a command line that still says npu."""

from __future__ import annotations

import subprocess
import sys
from textwrap import dedent

import pytest

from torchport import targets
from torchport.findings import Operation
from torchport.migrate import migrate_source
from torchport.npu_to_cuda.changes import LABELS
from torchport.npu_to_cuda.driver import convert_source

CPU = targets.get("cpu")

TRAINER = dedent('''
    import argparse
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    if torch.__version__ >= "1.8":
        import torch_npu
    try:
        from torch_npu.utils.profiler import Profile
    except ImportError:
        class Profile:
            def __init__(self, *args, **kwargs):
                pass

            def start(self):
                pass

    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="npu", type=str, help="npu or gpu")


    def train(loader, model, criterion, optimizer, args):
        profile = Profile(start_step=10)
        for images, target in loader:
            profile.start()
            if args.device == "npu":
                target = target.to(torch.int32)
            images, target = images.to(args.loc, non_blocking=True), target.to(args.loc).to(torch.int32)
            loss = criterion(model(images), target) + F.nll_loss(F.log_softmax(model(images), 1), target.int())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            stream = torch.npu.current_stream()
            stream.synchronize()
            torch.npu.current_stream().synchronize()
            print("LOSS", round(loss.item(), 6), args.device)


    def main():
        args = parser.parse_args()
        args.loc = "npu:0"
        torch.manual_seed(0)
        model = nn.Linear(4, 3).to(args.loc)
        criterion = nn.CrossEntropyLoss().to(args.loc)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = [(torch.randn(2, 4), torch.tensor([0, 2])) for _ in range(2)]
        train(loader, model, criterion, optimizer, args)


    main()
''')


def _to_cpu(source: str) -> str:
    converted = convert_source(source, "train.py", CPU)
    return migrate_source(converted.source.encode(), CPU, "train.py").source.decode()


# (each is a training run in a process of its own: make test keeps --device npu, make fidelity all three)
@pytest.mark.parametrize("device", [pytest.param(None, marks=pytest.mark.fidelity), "npu",
                                    pytest.param("gpu", marks=pytest.mark.fidelity)],
                         ids=["default", "--device npu", "--device gpu"])
def test_a_modelzoo_style_trainer_runs_on_the_cpu_after_the_migration(tmp_path, device):
    (tmp_path / "train.py").write_text(_to_cpu(TRAINER))
    command = [sys.executable, "train.py", *(["--device", device] if device else [])]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert [line.split()[0] for line in result.stdout.splitlines()] == ["LOSS", "LOSS"]


def test_int32_casts_that_reach_a_loss_become_int64_and_others_stay():
    source = dedent('''
        import torch
        import torch.nn as nn
        import torch_npu

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.criterion = nn.NLLLoss().npu()

            def forward(self, x, labels, lengths):
                lengths = lengths.int()
                return self.criterion(x, labels.to(dtype=torch.int32)), lengths
    ''')
    converted = convert_source(source, "net.py", CPU)
    assert "self.criterion(x, labels.to(dtype=torch.int64))" in converted.source
    assert "lengths = lengths.int()" in converted.source  # (no loss reads it)
    rows = [f for f in converted.findings if f.code == LABELS.code]
    assert [(f.start_line, f.operation) for f in rows] == [(13, Operation.MODIFY)]
    assert convert_source(converted.source, "net.py", CPU).source == converted.source


def test_a_guarded_profiler_import_with_a_fallback_keeps_no_import_torch_npu():
    after = convert_source(TRAINER, "train.py", CPU)
    assert "import torch_npu\n" not in after.source
    assert "    from torch_npu.utils.profiler import Profile\n" in after.source  # (fails off the NPU: the fallback runs)
    kept = [f for f in after.findings if f.operation is Operation.UNSUPPORTED and f.api == "torch_npu"]
    assert [f.start_line for f in kept] == [9]


def test_an_option_compared_with_npu_accepts_both_spellings_and_converts_once():
    after = convert_source(TRAINER, "train.py", CPU).source
    assert 'if args.device in ("cuda", "npu"):' in after and 'default="cuda"' in after
    assert convert_source(after, "train.py", CPU).source == after
    negated = convert_source('import torch_npu\nok = "npu" != opt.device\n', "a.py", CPU).source
    assert negated == 'ok = opt.device not in ("cuda", "npu")\n'
    kept = convert_source('import torch\nsame = x.device.type == "npu"\n', "a.py", CPU).source
    assert kept == 'import torch\nsame = x.device.type == "cuda"\n'  # (torch's answer, not the command line's)


def test_the_cpu_migration_of_a_stream_synchronize_is_a_stream_that_has_it():
    migrated = _to_cpu(TRAINER)
    assert "stream = HostStream()" in migrated and "HostStream().synchronize()" in migrated
    assert "class HostStream(torch.cpu.Stream):" in migrated


def test_a_loss_passed_to_a_function_of_the_file_is_followed_to_its_parameter():
    """(timm-style trainers: validate(model, loader, validate_loss_fn) calls it loss_fn; a class named
    as torch names its class-index losses, LabelSmoothingCrossEntropy, counts as one)"""
    source = dedent('''
        import torch
        import torch.nn as nn
        import torch_npu
        from timm.loss import LabelSmoothingCrossEntropy


        def validate(model, loader, loss_fn):
            for input, target in loader:
                target = target.to(torch.int32)
                loss = loss_fn(model(input), target)


        def other(model, loader, loss_fn):
            for input, target in loader:
                target = target.to(torch.int32)
                loss = loss_fn(model(input), target)


        train_loss_fn = LabelSmoothingCrossEntropy(smoothing=0.1).npu()
        validate_loss_fn = nn.CrossEntropyLoss().npu()
        validate(None, [], validate_loss_fn)
        validate(None, [], loss_fn=train_loss_fn)
        other(None, [], lambda a, b: a)
    ''')
    after = convert_source(source, "train.py", CPU).source
    assert after.count("target = target.to(torch.int64)") == 1  # validate's; other() gets no loss
    assert after.count("target = target.to(torch.int32)") == 1


def test_torch_npu_1x_profile_context_becomes_cudas_device_profiler_and_the_import_goes():
    source = ("import torch\nimport torch.npu\n\n\ndef prof(path, run):\n"
              "    with torch.npu.profile(path):\n        run()\n")
    after = convert_source(source, "train.py", CPU)
    assert after.source == "import torch\n\n\ndef prof(path, run):\n    with torch.cuda.profiler.profile():\n        run()\n"
    assert not [f for f in after.findings if f.operation is Operation.UNSUPPORTED]
