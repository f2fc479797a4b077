"""Suppression comments (# noqa, # noqa: TP003, # torchport: ignore[TP003], # torchport: skip-file):
the line stays as written, and only that line; what was suppressed is counted."""

from __future__ import annotations

import json

import pytest

from torchport.migrate.suppression import codes_of, of_text
from torchport.migrate.workers import Choices, Job, migrate_one

THREE = """\
import torch

a = torch.zeros(1).cuda()
b = torch.zeros(1).cuda(){comment}
c = torch.zeros(1).cuda()
"""


def _migrated(source: str, target: str = "npu"):
    return migrate_one(Job("train.py", source.encode()), Choices(target))


@pytest.mark.parametrize("comment", ["  # noqa: TP003", "  # noqa", "  # NOQA:TP003", "  # noqa: TP001, TP003",
                                     "  # torchport: ignore[TP003]", "  # torchport: ignore", "  # type: ignore  # noqa: TP0",
                                     "  # noqa is what flake8 reads"])
def test_a_suppressed_line_stays_as_written_and_only_that_line(comment):
    result = _migrated(THREE.format(comment=comment))
    lines = result.source.decode().splitlines()
    assert f"b = torch.zeros(1).cuda(){comment}" in lines
    assert "a = torch.zeros(1).npu()" in lines and "c = torch.zeros(1).npu()" in lines
    assert [(f.code, f.start_line) for f in result.suppressed] == [("TP003", 4)]
    assert 4 not in {f.start_line for f in result.findings if f.code == "TP003"}


@pytest.mark.parametrize("comment", ["  # noqa: TP004", "  # noqa: E501", "  # torchport: ignore[TP001]",
                                     "  # a word about noqa", "  # noqate"])
def test_a_comment_for_other_codes_or_no_directive_suppresses_nothing(comment):
    result = _migrated(THREE.format(comment=comment))
    assert f"b = torch.zeros(1).npu(){comment}" in result.source.decode().splitlines()
    assert not result.suppressed


def test_a_multi_line_statement_is_suppressed_by_its_first_or_last_line_only():
    first = "import torch\nx = torch.nn.Linear(  # noqa: TP003\n    2, 2,\n).cuda()\n"
    last = "import torch\nx = torch.nn.Linear(\n    2, 2,\n).cuda()  # noqa: TP003\n"
    middle = "import torch\nx = torch.nn.Linear(\n    2, 2,  # noqa: TP003\n).cuda()\n"
    assert _migrated(first).source.decode() == first
    assert _migrated(last).source.decode() == last
    assert ").npu()" in _migrated(middle).source.decode()


def test_a_with_header_comment_covers_the_header_not_the_block():
    source = ("import torch\nwith torch.cuda.amp.autocast():  # noqa\n"
              "    y = torch.zeros(1).cuda()\n")
    migrated = _migrated(source).source.decode()
    assert "with torch.cuda.amp.autocast():  # noqa" in migrated and "torch.zeros(1).npu()" in migrated


def test_a_noqa_inside_a_string_is_no_comment():
    source = 'import torch\nx = torch.zeros(1).cuda(); s = "# noqa"\n'
    assert _migrated(source).source.decode() == 'import torch\nimport torch_npu\nx = torch.zeros(1).npu(); s = "# noqa"\n'
    assert of_text(source) is None


def test_comments_parse_as_flake8_and_ruff_spell_them():
    assert codes_of("# noqa") is None
    assert codes_of("#noqa:TP003,TP005") == {"TP003", "TP005"}
    assert codes_of("# noqa: TP003 TP005") == {"TP003", "TP005"}
    assert codes_of("# torchport: ignore[tp003, TP1]") == {"TP003", "TP1"}
    assert codes_of("# just a comment") is False
    found = of_text("x = (1,\n  2)  # noqa: TP0\ny = 3\n")
    assert found.covers("TP003", 1) and found.covers("TP003", 2) and not found.covers("TP003", 3)
    assert not found.covers("TP101", 1)


def test_skip_file_copies_it_unchanged_and_the_summary_counts_what_was_suppressed(tmp_path, cli):
    src = tmp_path / "src"
    src.mkdir()
    skipped = "# torchport: skip-file\nimport torch\nx = torch.zeros(1).cuda()\n"
    (src / "vendored.py").write_text(skipped)
    (src / "train.py").write_text(THREE.format(comment="  # noqa: TP003"))
    status, out, _ = cli("migrate", src, "-o", tmp_path / "out", "-t", "npu", "--strict")
    assert status == 0  # (a file skipped on request is no trouble for --strict)
    assert (tmp_path / "out" / "vendored.py").read_text() == skipped
    summary = json.loads((tmp_path / "out" / "torchport_report" / "summary.json").read_text())
    assert summary["suppressed"] == 1 and summary["suppressed_by_rule"] == {"TP003": 1}
    assert summary["skipped_on_request"] == ["vendored.py"]
    assert "vendored.py" in {row["file"] for row in summary["skipped"]}
    assert "  suppressed 1 (TP003 1), files skipped on request 1" in out.splitlines()
    status, out, _ = cli("check", src, "-t", "npu")
    assert status == 1 and "vendored.py" not in out
    assert out.splitlines()[-1].endswith(", 1 suppressed, 1 files skipped (# torchport: skip-file)")


def test_what_a_suppressed_change_would_have_needed_is_not_added():
    source = "import torch\n\nx = torch.zeros(1).cuda()  # noqa\ntorch.cuda.synchronize()\n"
    assert _migrated(source, "accelerator").source.decode() == (
        "import torch\n\nx = torch.zeros(1).cuda()  # noqa\n"
        "if torch.accelerator.is_available():\n    torch.accelerator.synchronize()\n")


def test_the_rows_of_a_rule_that_reads_the_ast_apart_are_suppressed_too():
    source = ("import torch\nvalues, indices = torch.mode(torch.ones(3))  # noqa: TP027\n"
              "v, i = torch.mode(torch.ones(3))\n")
    result = _migrated(source, "mps")
    assert [(f.code, f.start_line) for f in result.suppressed] == [("TP027", 2)]
    assert [(f.code, f.start_line) for f in result.findings if f.code == "TP027"] == [("TP027", 3)]
