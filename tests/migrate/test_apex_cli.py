"""migrate --apex, around the conversion (a stand-in for it here: `fake_convert`, the plain O1 form
only, so that the plumbing is tested on its own): the default per target, the conversion before
--distributed and the migration with every row at the line of the file as read, a failing
conversion that costs the file its conversion only, --apex keep's rows, summary.json and the
terminal's account, and `analyze`'s apex_api.csv."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _fake_distribute  # noqa: E402
from torchport.apex_to_torch import driver  # noqa: E402
from torchport.findings import Finding, Operation  # noqa: E402

TRAIN = '''import torch
from apex import amp


def main():
    model = torch.nn.Linear(2, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    loss = model(torch.zeros(1, 2).cuda()).sum()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()


if __name__ == "__main__":
    main()
'''
PLAIN = "import torch\nx = torch.zeros(1).cuda()\n"


def fake_convert(source: str, path: str = "<string>") -> driver.Converted:
    """What the conversion writes for TRAIN's form (its import dropped: a line less, so the rows
    after it move), with its rows at the lines as read."""
    out, rows, skip = [], [], False
    for number, line in enumerate(source.splitlines(keepends=True), 1):
        indent = line[: len(line) - len(line.lstrip())]
        if skip:
            skip = False
        elif line.strip() == "from apex import amp":
            rows.append(Finding(path, number, number, "TP301", Operation.DELETE, "apex's amp import dropped"))
        elif "amp.initialize(" in line:
            out.append(f'{indent}scaler = torch.amp.GradScaler("cuda")\n')
            rows.append(Finding(path, number, number, "TP301", Operation.MODIFY, "amp.initialize -> a GradScaler"))
        elif "amp.scale_loss(" in line:
            out.append(f"{indent}scaler.scale(loss).backward()\n")
            rows.append(Finding(path, number, number + 1, "TP302", Operation.MODIFY, "scale_loss -> scaler.scale"))
            skip = True
        else:
            out.append(line)
    return driver.Converted("".join(out), rows, "native" if rows else "")


@pytest.fixture
def fake_conversion(monkeypatch):
    monkeypatch.setattr(driver, "convert_source", fake_convert)


@pytest.fixture
def project(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(TRAIN)
    (src / "plain.py").write_text(PLAIN)
    return src


def _rows(out: Path, name: str = "change_list.csv") -> list[dict]:
    with open(out / "torchport_report" / name, newline="") as file:
        return list(csv.DictReader(file))


def _apex_summary(out: Path) -> dict:
    return json.loads((out / "torchport_report" / "summary.json").read_text())["apex"]


def test_help_explains_the_choice(cli):
    status, printed, _ = cli("migrate", "--help")
    assert status == 0
    assert "--apex {native,keep}" in printed and "default: keep on cuda, npu, else native" in " ".join(printed.split())


def test_a_file_without_apex_is_migrated_as_before_never_converted(cli, project, tmp_path, monkeypatch):
    def must_not_run(source, path="<string>"):
        raise AssertionError("the conversion read a file without apex")

    monkeypatch.setattr(driver, "convert_source", must_not_run)
    from torchport import targets
    from torchport.migrate import migrate_source

    for mode in ("native", "keep"):
        out = tmp_path / mode
        assert cli("migrate", project / "plain.py", "-o", out, "-t", "cpu", "--apex", mode, "-q")[0] == 0
        assert (out / "plain.py").read_bytes() == migrate_source(PLAIN.encode(), targets.get("cpu")).source


def test_native_converts_first_then_migrates_rows_at_the_lines_as_read(cli, project, tmp_path, fake_conversion):
    out = tmp_path / "out"
    status, printed, _ = cli("migrate", project, "-o", out, "-t", "cpu", "--apex", "native")
    assert status == 0
    text = (out / "train.py").read_text()
    assert "apex" not in text and 'scaler = torch.amp.GradScaler("cpu")' in text  # (the conversion's CUDA, migrated)
    rows = _rows(out)
    train = sorted((row["Start Line"], row["End Line"], row["Rule"]) for row in rows if row["File"] == "train.py")
    # the .cuda() calls are on lines 6 and 9 of the file as read (5 and 8 of the converted text)
    assert [(s, e) for s, e, rule in train if rule == "TP003"] == [("6", "6"), ("9", "9")]
    assert ("2", "2", "TP301") in train and ("10", "11", "TP302") in train
    assert _apex_summary(out) == {"mode": "native", "native": ["train.py"], "stand_in": [], "kept": []}
    assert "apex (native): 1 files converted to native torch, 0 on the stand-in" in printed
    assert "TP302     1  apex: scale_loss and the optimizer step -> the GradScaler's" in printed


def test_migrating_the_output_again_changes_nothing(cli, project, tmp_path, fake_conversion):
    once, twice = tmp_path / "once", tmp_path / "twice"
    cli("migrate", project, "-o", once, "-t", "cpu", "-q")
    cli("migrate", once, "-o", twice, "-t", "cpu", "-q", "--exclude", "torchport_report")
    assert (twice / "train.py").read_bytes() == (once / "train.py").read_bytes()


def test_native_then_distributed_then_migrated(cli, project, tmp_path, fake_conversion, monkeypatch):
    _fake_distribute.install(monkeypatch)
    out = tmp_path / "out"
    assert cli("migrate", project, "-o", out, "-t", "cpu", "--distributed", "-q")[0] == 0
    text = (out / "train.py").read_text()
    assert "LOCAL_RANK" in text and "scaler.scale(loss).backward()" in text and "apex" not in text
    rows = {(row["Rule"], row["Start Line"]) for row in _rows(out) if row["File"] == "train.py"}
    # the setup is reported at line 2 of the converted text (its import dropped): line 3 as read
    assert {("TP201", "3"), ("TP301", "8"), ("TP003", "6"), ("TP003", "9")} <= rows, rows


def test_a_failing_conversion_costs_only_the_conversion(cli, project, tmp_path, monkeypatch):
    def broken(source, path="<string>"):
        raise RuntimeError("a bug")

    monkeypatch.setattr(driver, "convert_source", broken)
    out = tmp_path / "out"
    assert cli("migrate", project, "-o", out, "-t", "cpu", "--apex", "native", "-q")[0] == 1  # (a bug of ours: loud)
    text = (out / "train.py").read_text()
    assert "from apex import amp" in text and ".cuda()" not in text  # migrated as without the conversion
    note = next(row for row in _rows(out, "notes.csv") if row["File"] == "train.py")
    assert note["Tips"].startswith("apex not converted: internal error (RuntimeError: a bug)")
    assert "apex must be installed for cpu" in note["Tips"]
    assert _apex_summary(out)["kept"] == ["train.py"]


def test_keep_off_npu_says_apex_must_be_installed(cli, project, tmp_path, fake_conversion):
    out = tmp_path / "out"
    status, printed, _ = cli("migrate", project, "-o", out, "-t", "cpu", "--apex", "keep")
    assert status == 0
    assert "from apex import amp" in (out / "train.py").read_text()
    notes = [(row["File"], row["Start Line"], row["Tips"]) for row in _rows(out, "notes.csv")]
    assert notes == [("train.py", "2", "apex kept (--apex keep): apex must be installed for cpu (it builds only for "
                                       "CUDA); --apex native rewrites it to torch.amp instead")]
    assert _apex_summary(out) == {"mode": "keep", "native": [], "stand_in": [], "kept": ["train.py"]}
    assert "apex (keep): 0 files converted to native torch, 0 on the stand-in torchport.compat.apex, 1 still importing apex" in printed


def test_npu_keeps_apex_by_default_and_advises_ascends(cli, project, tmp_path, fake_conversion):
    out = tmp_path / "out"
    assert cli("migrate", project, "-o", out, "-t", "npu", "-q")[0] == 0
    text = (out / "train.py").read_text()
    assert "from apex import amp" in text and "torch.nn.Linear(2, 2).npu()" in text
    advice = [(row["Start Line"], row["OP"]) for row in _rows(out, "api_performance_advice.csv") if "combine_grad" in row["Advice"]]
    assert advice == [("8", "apex.amp.initialize")]
    assert _apex_summary(out)["mode"] == "keep"


def test_npu_with_apex_native_converts(cli, project, tmp_path, fake_conversion):
    out = tmp_path / "out"
    assert cli("migrate", project, "-o", out, "-t", "npu", "--apex", "native", "-q")[0] == 0
    text = (out / "train.py").read_text()
    assert "apex" not in text and 'torch.amp.GradScaler("npu")' in text
    assert not [row for row in _rows(out, "api_performance_advice.csv") if row["OP"].startswith("apex")]


def test_analyze_lists_each_apex_use_with_what_it_becomes(cli, project, tmp_path, fake_conversion):
    npu, cpu = tmp_path / "npu", tmp_path / "cpu"
    status, printed, _ = cli("analyze", project, "-o", npu, "-t", "npu", "-m", "apis")
    assert status == 0 and "apex uses              2  (apex_api.csv)" in printed
    kept = [(row["Start Line"], row["OP"], row["Tips"]) for row in _rows(npu, "apex_api.csv")]
    assert kept == [
        ("8", "apex.amp.initialize", "kept: Ascend's apex build has it on npu (install that apex); how to tune it: "
                                     "TP117 in api_performance_advice.csv"),
        ("10", "apex.amp.scale_loss", "kept: Ascend's apex build has it on npu (install that apex)"),
    ]
    cli("analyze", project, "-o", cpu, "-t", "cpu", "-m", "apis")
    native = {row["OP"]: row["Tips"] for row in _rows(cpu, "apex_api.csv")}
    assert native["apex.amp.initialize"].startswith("torch.amp.autocast around the forward and a torch.amp.GradScaler")
    assert native["apex.amp.scale_loss"].endswith("then migrated to cpu")
    assert not (cpu / "train.py").exists()
