"""`migrate --amp`: where AMP is added (a float32 training step), where it never is (a script with
AMP of its own, evaluation-only code, an optimizer made elsewhere), in which form per mode, and
the default per target."""

from __future__ import annotations

import textwrap

import pytest

from torchport import targets
from torchport.migrate.workers import Choices, Job, migrate_one
from torchport.mixed_precision.changes import OFF, TORCH, default_mode

STEP = """
import torch


def main(loader):
    model = torch.nn.Linear(4, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "last.pt")
"""


def migrated(source: str, target: str = "cpu", amp: str | None = "torch"):
    source = textwrap.dedent(source).lstrip()
    result = migrate_one(Job("train.py", source.encode()), Choices(target, amp=amp))
    assert result.error is None
    return result.source.decode(), result.findings


def amp_rows(findings) -> list:
    return [f for f in findings if f.code.startswith("TP5")]


def test_a_float32_step_gets_autocast_a_scaler_and_the_scaler_in_its_checkpoint() -> None:
    text, findings = migrated(STEP)
    assert 'scaler = torch.amp.GradScaler("cpu")' in text
    assert 'with torch.amp.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):\n' \
           '            loss = torch.nn.functional.mse_loss(model(x.cpu()), y.cpu())' in text
    assert "scaler.scale(loss).backward()" in text and "scaler.step(optimizer)\n        scaler.update()" in text
    assert '"optimizer": optimizer.state_dict(), "amp": scaler.state_dict()}' in text
    assert {f.code for f in amp_rows(findings)} == {"TP500", "TP501", "TP502", "TP503"}
    assert all(f.start_line > 0 for f in amp_rows(findings))  # (each insertion at its line)
    assert migrated(text)[0] == text  # (migrated twice: no second AMP)


def test_apex_on_npu_writes_the_modelzoo_form() -> None:
    text, findings = migrated(STEP, "npu", "apex")
    assert "from apex import amp" in text
    assert ('    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0, '
            'combine_grad=True)\n') in text
    assert "with amp.scale_loss(loss, optimizer) as scaled_loss:\n            scaled_loss.backward()" in text
    assert '"amp": amp.state_dict()' in text


@pytest.mark.parametrize("own", [
    pytest.param("with torch.autocast('cuda'):\n            pass\n", id="autocast"),
    pytest.param("scaler = torch.cuda.amp.GradScaler()\n", id="torch.cuda.amp GradScaler"),
    pytest.param("model = model.half()\n", id="half precision"),
    pytest.param("from apex import amp\n", id="apex"),
    pytest.param("from accelerate import Accelerator\n", id="accelerate"),
    pytest.param("import deepspeed\n", id="DeepSpeed"),
    pytest.param("parser.add_argument('--fp16', action='store_true')\n", id="a flag that asks for it"),
])
def test_a_script_with_mixed_precision_of_its_own_gets_no_second(own: str) -> None:
    source = textwrap.dedent(STEP).lstrip().replace("    for x, y in loader:\n",
                                                    "    " + own.replace("\n", "\n    ").rstrip() + "\n    for x, y in loader:\n", 1)
    text, findings = migrated(source)
    assert "scaler.scale(" not in text and not amp_rows(findings)


@pytest.mark.parametrize("shard", [
    pytest.param(("from torch.distributed.fsdp import fully_shard", "fully_shard(model)"), id="FSDP2"),
    pytest.param(("from torch.distributed.fsdp import FullyShardedDataParallel as FSDP", "model = FSDP(model)"),
                 id="FSDP1"),
])
@pytest.mark.parametrize("target, amp", [("npu", "torch"), ("npu", "apex"), ("cpu", "torch")])
def test_a_model_sharded_with_fsdp_keeps_its_step_and_gets_fsdps_policy_named(shard, target, amp) -> None:
    """FSDP's mixed precision is its own policy (and FSDP1 needs its ShardedGradScaler): a
    GradScaler or amp.initialize around its step is not the form it documents."""
    imported, wrapped = shard
    source = textwrap.dedent(STEP).lstrip().replace("import torch\n", f"import torch\n{imported}\n", 1)
    source = source.replace("    optimizer = torch.optim", f"    {wrapped}\n    optimizer = torch.optim", 1)
    text, findings = migrated(source, target, amp)
    assert "scale" not in text and "autocast" not in text and "amp" not in text
    notes = [f for f in amp_rows(findings) if f.code == "TP500"]
    assert len(notes) == 1 and notes[0].start_line == source.splitlines().index("        loss.backward()") + 1
    assert "MixedPrecisionPolicy" in notes[0].message and not [f for f in amp_rows(findings) if f.code != "TP500"]


def test_evaluation_only_code_is_left_alone() -> None:
    source = """
    import torch

    def evaluate(model, loader):
        model.eval()
        with torch.no_grad():
            return sum(model(x.cuda()).sum().item() for x in loader)
    """
    text, findings = migrated(source)
    assert "autocast" not in text and not amp_rows(findings)


def test_an_optimizer_made_in_another_file_is_a_note_and_no_change() -> None:
    source = """
    import torch

    def train_one_epoch(model, optimizer, loader):
        for x in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
    """
    text, findings = migrated(source)
    assert "scaler" not in text
    [note] = [f for f in amp_rows(findings) if f.operation.value == "NOTE"]
    assert note.start_line == 6 and "made in another file" in note.message


def test_a_library_owned_backward_is_not_scaled() -> None:
    source = """
    import torch

    def train(engine, optimizer, loader):
        for x in loader:
            loss = engine(x).sum()
            engine.backward(loss)
            optimizer.step()
    """
    text, findings = migrated(source)
    assert text.count("backward(loss)") == 1 and not amp_rows(findings)


def test_clipping_reads_unscaled_gradients() -> None:
    source = STEP.replace("        optimizer.step()\n",
                          "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n        optimizer.step()\n")
    text, _ = migrated(source)
    assert "scaler.scale(loss).backward()\n        scaler.unscale_(optimizer)\n        torch.nn.utils.clip_grad_norm_" in text


def test_off_changes_nothing_and_the_default_is_torch_on_npu_alone() -> None:
    assert not amp_rows(migrated(STEP, "cpu", OFF)[1])
    assert not amp_rows(migrated(STEP, "cpu", None)[1])
    assert "torch.amp.autocast(\"npu\", dtype=torch.float16)" in migrated(STEP, "npu", None)[0]
    defaults = {name: default_mode(target) for name, target in targets.all_targets().items()}
    assert defaults.pop("npu") == TORCH and set(defaults.values()) == {OFF}


def test_apex_elsewhere_than_npu_is_a_one_line_error(cli, tmp_path) -> None:
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(STEP))
    status, _, err = cli("migrate", script, "-o", tmp_path / "out", "-t", "cpu", "--amp", "apex")
    assert status == 2 and err.count("\n") == 1 and "--amp torch" in err
    assert not (tmp_path / "out").exists()


def test_apex_with_apply_affinity_drives_ascends_fused_optimizer_through_amp() -> None:
    source = textwrap.dedent(STEP).lstrip().replace("torch.optim.SGD(model.parameters(), lr=0.1)",
                                                    "torch.optim.AdamW(model.parameters(), lr=0.1)")
    result = migrate_one(Job("train.py", source.encode()), Choices("npu", apply_affinity=True, amp="apex"))
    text = result.source.decode()
    assert "optimizer = apex.optimizers.NpuFusedAdamW(model.parameters(), lr=0.1)\n" \
           "    model, optimizer = amp.initialize(" in text
    plain = migrate_one(Job("train.py", source.encode()), Choices("npu", apply_affinity=True, amp="off"))
    assert "apex.optimizers" not in plain.source.decode()  # (apex's twin steps through amp.initialize alone)


@pytest.mark.parametrize("source, why", [
    pytest.param("""
    import torch

    model = torch.nn.Linear(4, 2).cuda()
    if use_optimizer:
        optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
    for x in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        if use_optimizer:
            optimizer.step()
        else:
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-0.1)
    """, "another branch updates the weights without it", id="word_language_model's manual update"),
    pytest.param("""
    import torch

    model = torch.nn.Linear(4, 2).cuda()
    if args.sgd:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        optimizer.step()
    """, "is made only under `if args.sgd:`", id="an optimizer made under an if alone"),
    pytest.param("""
    import torch

    def make_optim(model, lr):
        optim = torch.optim.SGD(params=model.parameters(), lr=lr, momentum=0.9)
        return optim

    model = torch.nn.Linear(4, 2).cuda()
    for it, x in enumerate(loader):
        optim = make_optim(model, 0.1 * (1 - it / 100) ** 0.9)
        loss = model(x.cuda()).sum()
        optim.zero_grad()
        loss.backward()
        optim.step()
    """, "optim is made anew inside a loop", id="an optimizer made anew each iteration (RCF's poly rate)"),
])
def test_a_step_whose_gradients_are_used_without_the_scaler_is_left_in_float32(source: str, why: str) -> None:
    text, findings = migrated(source)
    assert "scaler" not in text
    [note] = [f for f in amp_rows(findings) if f.operation.value == "NOTE"]
    assert why in note.message


@pytest.mark.parametrize("source, expected", [
    pytest.param("""
    import torch

    if __name__ == "__main__":
        model = torch.nn.Linear(4, 2).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
    """, '    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    model, optimizer = amp.initialize(',
        id="a script under its __main__ guard"),
    pytest.param("""
    import torch

    def main(name):
        model = torch.nn.Linear(4, 2).cuda()
        if name == "sgd":
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        elif name == "adam":
            optimizer = torch.optim.Adam(model.parameters())
        for x in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
    """, '        optimizer = torch.optim.Adam(model.parameters())\n    model, optimizer = amp.initialize(',
        id="an optimizer chosen by if/elif with no else"),
    pytest.param("""
    import torch

    def main(name):
        model = torch.nn.Linear(4, 2).cuda()
        if name == "sgd":
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        elif name == "adam":
            optimizer = torch.optim.Adam(model.parameters())
        else:
            raise NotImplementedError(name)
        for x in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
    """, '        raise NotImplementedError(name)\n    model, optimizer = amp.initialize(',
        id="an optimizer chosen by if/elif whose else raises (nested UNet's)"),
    pytest.param("""
    import sys
    import torch

    def main(name):
        model = torch.nn.Linear(4, 2).cuda()
        if name == "sgd":
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        else:
            print("unknown optimizer", name)
            sys.exit(1)
        for x in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
    """, '        sys.exit(1)\n    model, optimizer = amp.initialize(',
        id="an optimizer whose else ends the script"),
    pytest.param("""
    import torch

    def make_optimizer(model):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        return optimizer

    def main():
        model = torch.nn.Linear(4, 2).cuda()
        optimizer = make_optimizer(model)
        for x in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
    """, '    optimizer = make_optimizer(model)\n    model, optimizer = amp.initialize(',
        id="an optimizer from a factory of the file: after the call, once"),
    pytest.param("""
    import torch

    def main(net):
        optimizer = torch.optim.Adam([{"params": conv_weights(net.model0)}, {"params": net.cpm.parameters()}])
        for k, x in enumerate(loader):
            loss = net(x.cuda()).sum()
            loss.backward()
            if k % 4 == 3:
                optimizer.step()
                optimizer.zero_grad()
            else:
                continue
    """, "    net, optimizer = amp.initialize(net, optimizer, ",
        id="accumulation with else: continue, parameter groups of one model"),
    pytest.param("""
    import torch

    def main(resume):
        model = torch.nn.DataParallel(torch.nn.Linear(4, 2)).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if resume:
            checkpoint = torch.load(resume)
            optimizer.load_state_dict(checkpoint["optimizer"])
        for x in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
    """, 'model.module, optimizer = amp.initialize(model.module, optimizer, opt_level="O2"',
        id="a DataParallel model: apex takes it unwrapped"),
    pytest.param("""
    import torch

    def main(resume):
        model = torch.nn.Linear(4, 2).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if resume:
            checkpoint = torch.load(resume)
            optimizer.load_state_dict(checkpoint["optimizer"])
        for x in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
    """, '        optimizer.load_state_dict(checkpoint["optimizer"])\n        if "amp" in checkpoint:\n'
         '            amp.load_state_dict(checkpoint["amp"])\n', id="resumed: amp's state restored where it was saved"),
    pytest.param("""
    import torch

    def main(gpus):
        net = Net()
        if gpus > 1:
            net = torch.nn.DataParallel(net).cuda()
        else:
            net = net.cuda()
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        for x in loader:
            loss = net(x.cuda()).sum()
            loss.backward()
            optimizer.step()
    """, '    _, optimizer = amp.initialize(getattr(net, "module", net), optimizer, opt_level="O2"',
        id="a DataParallel model under a condition: apex takes what it wraps, cast in place"),
    pytest.param("""
    import torch

    def main():
        net = Net()
        optimizer = torch.optim.Adam(net.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20)
        net = torch.nn.DataParallel(net).cuda()
        for x in loader:
            loss = net(x.cuda()).sum()
            loss.backward()
            optimizer.step()
    """, "    net.cuda()\n    net, optimizer = amp.initialize(net, optimizer, ",
        id="a model moved to its device later: moved before amp.initialize"),
])
def test_apex_placement_follows_the_modelzoo_ports(source: str, expected: str) -> None:
    text, findings = migrated(source, "npu", "apex")
    expected = expected.replace(".cuda()", ".npu()")  # (written in CUDA's dialect, then migrated)
    assert expected in text and "with amp.scale_loss(loss, optimizer) as scaled_loss:" in text
    assert text.count("amp.initialize(") == 1  # (apex refuses an optimizer passed through it twice)
