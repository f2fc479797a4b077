"""`migrate --from npu`: the option and its choices, the step before the apex conversion (with a
stand-in conversion here: the real one is npu_to_cuda's, run end to end in test_from_npu_cli.py),
the detection of NPU code, and the cuda target it can go back to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _built_in_targets import BUILT_IN
from torchport import targets
from torchport.findings import Finding, Operation
from torchport.migrate import from_npu, migrate_source
from torchport.migrate.selection import RuleSelection
from torchport.migrate.workers import Choices, Job, migrate_one
from torchport.npu_to_cuda import driver
from torchport.npu_to_cuda.changes import CODES
from torchport.npu_to_cuda.driver import Conversion
from torchport.ops.check import backends
from torchport.targets.kernels import CUDA

NPU = targets.get("npu")
CHANGE = min(code for code in CODES if code != from_npu.NOTE.code)  # (any of the conversion's change codes)

NPU_TRAIN = f"""\
import torch
import {NPU.setup_import}

model = torch.nn.Linear(2, 2)
model = model.{NPU.tensor_method}()
"""
CUDA_TRAIN = """\
import torch

model = torch.nn.Linear(2, 2)
model = model.cuda()
torch.cuda.synchronize()
"""


def stand_in_conversion(text: str, path: str, target) -> Conversion:
    """Drops the setup import and writes `.cuda()` for the tensor method, with a row at each line
    it rewrites (at the line as read, as the real conversion writes them)."""
    lines, rows = [], []
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if line.strip() == f"import {NPU.setup_import}":
            continue
        if f".{NPU.tensor_method}()" in line:
            line = line.replace(f".{NPU.tensor_method}()", ".cuda()")
            rows.append(Finding(path, number, number, CHANGE, Operation.MODIFY, "to CUDA's dialect"))
        lines.append(line)
    return Conversion("".join(lines), rows, changed=bool(rows))


@pytest.fixture
def conversion(monkeypatch):
    monkeypatch.setattr(driver, "convert_source", stand_in_conversion)


def _migrated(text: str, target: str, **choices):
    return migrate_one(Job("train.py", text.encode()), Choices(target, **choices))


# --- the choices ---------------------------------------------------------------------------------

def test_the_default_reads_code_as_cudas_and_the_dialects_are_the_targets_names():
    assert Choices("cpu").source == from_npu.FROM_CUDA
    assert set(from_npu.SOURCES) <= set(targets.names())


@pytest.mark.parametrize(("source", "target", "said"), [
    (from_npu.FROM_NPU, NPU.name, "the code is already written for"),
    ("tpu", "cpu", "choose one of"),
])
def test_a_choice_that_cannot_be_made_is_refused(source, target, said):
    with pytest.raises(ValueError, match=said):
        Choices(target, source=source)


def test_cuda_code_may_go_to_cuda():
    assert from_npu.refusal(from_npu.FROM_CUDA, targets.get("cuda")) is None


def test_the_conversion_is_one_step_its_codes_all_selected_or_it_does_not_run():
    assert Choices("cpu", source=from_npu.FROM_NPU).converts_from == from_npu.FROM_NPU
    off = Choices("cpu", source=from_npu.FROM_NPU, rules=RuleSelection(ignore=(CHANGE,)))
    assert off.converts_from == from_npu.FROM_CUDA


# --- the step ------------------------------------------------------------------------------------

def test_npu_code_is_converted_then_migrated_with_rows_at_the_lines_as_read(conversion):
    result = _migrated(NPU_TRAIN, "xpu", source=from_npu.FROM_NPU)
    assert result.error is None
    assert "model = model.xpu()" in result.source.decode()
    assert NPU.setup_import not in result.source.decode()
    moved = [f for f in result.findings if f.operation.is_change and f.code != "TP000"]
    assert {f.code for f in moved} >= {CHANGE} and len({f.code for f in moved}) > 1  # the conversion's and a rule's
    assert {f.start_line for f in moved} == {5}  # the rule's row, at line 4 of the converted text, is line 5 as read
    assert from_npu.converted(result.findings)


def test_without_from_npu_nothing_is_converted(conversion):
    result = _migrated(NPU_TRAIN, "xpu")
    assert not any(f.code in CODES for f in result.findings)
    assert f".{NPU.tensor_method}()" in result.source.decode()


def test_a_file_that_says_nothing_of_the_npu_migrates_as_before(conversion):
    for target in ("cpu", "accelerator"):
        assert _migrated(CUDA_TRAIN, target, source=from_npu.FROM_NPU) == _migrated(CUDA_TRAIN, target)


def test_a_conversion_that_fails_costs_the_file_its_conversion_only(monkeypatch):
    def broken(text, path, target):
        raise KeyError("npu_format_cast")

    monkeypatch.setattr(driver, "convert_source", broken)
    result = _migrated(NPU_TRAIN, "cpu", source=from_npu.FROM_NPU)
    assert result.error is None
    notes = [f for f in result.findings if f.code == from_npu.NOTE.code]
    assert [(f.start_line, f.operation) for f in notes] == [(0, Operation.NOTE)]
    assert "internal error (KeyError: 'npu_format_cast')" in notes[0].message
    assert result.source.decode() == _migrated(NPU_TRAIN, "cpu").source.decode()  # migrated as read


def test_a_conversion_into_text_the_files_encoding_cannot_hold_is_not_made(monkeypatch):
    monkeypatch.setattr(driver, "convert_source", lambda text, path, target: Conversion(text + "# \u2603\n", [], True))
    source = "# -*- coding: latin-1 -*-\n" + NPU_TRAIN
    result = _migrated(source, "cpu", source=from_npu.FROM_NPU)
    assert [f.code for f in result.findings if f.code in CODES] == [from_npu.NOTE.code]
    assert "the file's encoding (iso-8859-1)" in result.findings[0].message


def test_rows_after_a_definition_the_conversion_inserts_keep_their_lines():
    """A kernel's torch computation is written after the imports, among rewritten lines: each
    rewritten line still stands for its own line as read, the inserted ones for the line after."""
    from torchport.distribute.lines import line_map

    before = f"import torch\nimport {NPU.setup_import}\n\nx = a.npu()\ny = b.npu()\n"
    after = "import torch\n\n\ndef kernel():\n    return 1\n\n\nx = a.cuda()\ny = b.cuda()\n"
    assert line_map(before, after, align_replaced=True) == [1, 3, 4, 4, 4, 4, 4, 4, 5]
    assert line_map(before, after)[-2:] == [5, 5]  # (by position, as --distributed's rows are mapped)


def test_what_the_conversion_listed_as_torch_npus_is_not_listed_again_as_an_unknown_torch_api():
    """torch.dropout_with_byte_mask: torch_npu 1.x's kernel on torch, no torch API misspelt."""
    result = _migrated("import torch\ny = torch.dropout_with_byte_mask(x, 0.1, True)\n", "cpu", source=from_npu.FROM_NPU)
    assert [(f.start_line, f.operation) for f in result.findings if f.api == "torch.dropout_with_byte_mask"] == [
        (2, Operation.UNSUPPORTED)]


# --- the detection -------------------------------------------------------------------------------

@pytest.mark.parametrize(("source", "npu"), [
    (NPU_TRAIN, True),
    ("import torch\nx = torch.ones(2).npu()\n", True),
    ("import torch\ntorch.npu.set_device(0)\n", True),
    (CUDA_TRAIN, False),
    # CUDA code with a bridge to the NPU (transfer_to_npu): CUDA code
    (f"import torch\nimport {NPU.setup_import}\nfrom {NPU.setup_import}.contrib import transfer_to_npu\nx.cuda()\n", False),
    ("import os\nprint('npu')\n", False),
], ids=["imports torch_npu", ".npu()", "torch.npu", "CUDA", "transfer_to_npu", "a word"])
def test_npu_code_is_what_uses_the_npu_and_never_cuda(source, npu):
    assert from_npu.is_npu_code(source.encode()) is npu


def _tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(NPU_TRAIN)
    (src / "plain.py").write_text("import os\n")
    return src


def test_migrate_says_when_a_tree_is_npu_code_and_the_summary_too(cli, tmp_path):
    src = _tree(tmp_path)
    status, _, err = cli("migrate", src, "-o", tmp_path / "out", "--target", "cpu")
    assert status == 0
    hint = f"{src} looks like NPU code (1 of 2 files use {NPU.setup_import}); migrate it with --from {from_npu.FROM_NPU}"
    assert err.splitlines() == [f"torchport migrate: {hint}"]
    summary = json.loads((tmp_path / "out" / "torchport_report" / "summary.json").read_text())
    assert summary["from"] == from_npu.FROM_CUDA
    assert summary["npu_code"] == {"files": ["train.py"], "converted": [], "hint": hint}


def test_with_from_npu_there_is_no_hint_and_the_summary_lists_what_was_converted(cli, tmp_path, conversion):
    src = _tree(tmp_path)
    status, _, err = cli("migrate", src, "-o", tmp_path / "out", "--target", "cpu", "--from", from_npu.FROM_NPU)
    assert status == 0 and err == ""
    summary = json.loads((tmp_path / "out" / "torchport_report" / "summary.json").read_text())
    assert summary["from"] == from_npu.FROM_NPU
    assert summary["npu_code"] == {"files": ["train.py"], "converted": ["train.py"], "hint": None}


def test_from_npu_to_the_npu_is_one_line_and_exit_2(cli, tmp_path):
    src = _tree(tmp_path)
    status, out, err = cli("migrate", src, "-o", tmp_path / "out", "--from", from_npu.FROM_NPU, "--target", NPU.name)
    assert (status, out) == (2, "") and len(err.splitlines()) == 1 and "already written for" in err
    assert not (tmp_path / "out").exists()


def test_the_configuration_key_from_sets_it(cli, tmp_path):
    src = _tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f'[tool.torchport]\nfrom = "{from_npu.FROM_NPU}"\ntarget = "{NPU.name}"\n')
    status, _, err = cli("migrate", src, "--diff")
    assert status == 2 and "already written for" in err


@pytest.mark.parametrize("command", ["migrate", "analyze", "check"])
def test_help_says_what_from_npu_does(cli, command):
    status, printed, _ = cli(command, "--help")
    assert status == 0 and "--from {cuda,npu}" in printed and "rewritten into CUDA's dialect first" in " ".join(printed.split())


# --- the cuda target -----------------------------------------------------------------------------

def test_cuda_code_runs_on_cuda_alone_as_written():
    assert [name for name in BUILT_IN if targets.get(name).runs_cuda_code] == ["cuda"]


def test_on_cuda_every_torch_cuda_api_is_itself():
    from torchport.targets.surface import cuda_apis

    cuda = targets.get("cuda")
    assert all(v.kind.value == "same" and v.replacement == v.api for v in cuda.verdicts(cuda_apis()).values())


def test_migrate_leaves_cuda_code_as_it_is_on_cuda_and_says_so(cli, tmp_path):
    assert migrate_source(CUDA_TRAIN.encode(), targets.get("cuda"), "t.py").source == CUDA_TRAIN.encode()
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(CUDA_TRAIN)
    status, out, err = cli("migrate", src, "-o", tmp_path / "out", "--target", "cuda")
    assert status == 0 and "0 changed" in out
    assert (tmp_path / "out" / "train.py").read_text() == CUDA_TRAIN
    assert err.startswith("torchport migrate: note: CUDA code runs on cuda as written")


def test_cuda_is_tried_first_by_auto_and_its_kernels_are_cudas_once():
    assert targets.auto_order()[0] == "cuda"
    assert [b.key for b in backends("cuda")] == [CUDA.key]
    needed = [b.key for b in backends("accelerator")]
    assert needed.count(CUDA.key) == 1 and needed[0] == CUDA.key

