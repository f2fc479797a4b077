"""`torchport check`: migrate's own rows, listed as a linter lists findings, with nothing written."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCHEMA = Path(__file__).with_name("sarif-schema-2.1.0.json")  # source: sarif-schema-2.1.0.json.source
LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>TP\d{3}) (?P<message>.+)$")


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """A copy of the bundled examples, and `torchport.cli.main`, whose answers are kept: each
    command runs once however many tests read it (a run migrates the five files)."""
    from torchport.cli import main

    base = tmp_path_factory.mktemp("check")
    copy = base / "examples"
    shutil.copytree(EXAMPLES, copy)
    before = _snapshot(copy)
    answers: dict[tuple, tuple[int, str, str]] = {}

    def kept(*args):
        if args not in answers:
            answers[args] = _ask(main, *args)
        return answers[args]

    return base, copy, before, kept


_capture = None


@pytest.fixture(autouse=True)
def _captured(capsys):
    global _capture
    _capture = capsys
    yield
    _capture = None


def _ask(main, *args):
    _capture.readouterr()
    try:
        status = main([str(a) for a in args])
    except SystemExit as exit_:
        status = exit_.code
    out = _capture.readouterr()
    return status, out.out, out.err


def test_check_lists_exactly_the_rows_migrate_changes_and_writes_nothing(examples):
    base, copy, before, main = examples
    status, out, _ = main("check", copy, "--target", "npu", "--output-format", "json")
    assert status == 1
    listed = {(Path(f["file"]).relative_to(copy).as_posix(), f["line"], f["code"], f["message"])
              for f in json.loads(out)["findings"]}
    assert main("migrate", copy, "-o", base / "out", "--target", "npu", "-q")[0] == 0
    with open(base / "out" / "torchport_report" / "change_list.csv", newline="") as table:
        changes = {(r["File"], int(r["Start Line"]), r["Rule"], r["Message"]) for r in csv.DictReader(table)}
    assert listed == changes and len(listed) > 20
    status, diff, _ = main("migrate", copy, "--diff", "--target", "npu", "-q")
    touched = set(re.findall(r"^\+\+\+ b/(\S+)", diff, re.M))
    assert touched == {name for name, *_ in listed}
    findings = json.loads(out)["findings"]
    spans = {(Path(f["file"]).relative_to(copy).as_posix(), line) for f in findings if f["operation"] in ("MODIFY", "DELETE")
             for line in range(f["line"], f["end_line"] + 1)}
    removed = _removed_lines(diff)
    assert removed and {(name, line) for name, line, text in removed if text.strip()} <= spans
    assert _snapshot(copy) == before  # (check wrote nothing, beside SRC or in it)


def _removed_lines(diff: str) -> list[tuple[str, int, str]]:
    """(file, line in the old file, its text) of each line a unified diff removes."""
    removed, name, line = [], None, 0
    for text in diff.splitlines():
        if text.startswith("--- a/"):
            name = text[len("--- a/"):]
        elif hunk := re.match(r"@@ -(\d+)", text):
            line = int(hunk[1])
        elif text.startswith("-") and name:
            removed.append((name, line, text[1:]))
            line += 1
        elif text.startswith(" "):
            line += 1
    return removed


def test_text_rows_are_sorted_in_ruffs_format_with_a_summary_line(examples):
    _, copy, _, main = examples
    status, out, _ = main("check", copy, "-t", "npu")
    *rows, summary = out.splitlines()
    assert status == 1
    parsed = [LINE.match(row) for row in rows]
    assert all(parsed), [row for row, m in zip(rows, parsed) if not m][:3]
    keys = [(m["path"], int(m["line"]), int(m["col"])) for m in parsed]
    assert keys == sorted(keys)
    assert all(Path(m["path"]).is_file() for m in parsed)  # (a path the user can open, as SRC was spelled)
    first = parsed[0]
    text = Path(first["path"]).read_text().splitlines()[int(first["line"]) - 1]
    assert int(first["col"]) == len(text) - len(text.lstrip()) + 1
    assert summary.startswith(f"torchport check [npu]: {len(rows)} findings in 5 of 5 Python files")


def test_the_migrated_tree_checks_clean(examples):
    base, copy, _, main = examples
    out = base / "out"
    assert main("migrate", copy, "-o", out, "--target", "npu", "-q")[0] == 0
    status, text, _ = main("check", out, "-t", "npu")
    assert (status, text) == (0, "torchport check [npu]: 5 Python files, nothing to change\n")


def test_diff_is_the_patch_migrate_diff_prints(examples):
    _, copy, _, main = examples
    status, patch, _ = main("check", copy, "--target", "npu", "--diff")
    assert status == 1
    assert patch == main("migrate", copy, "--diff", "--target", "npu", "-q")[1] and patch.startswith("--- a/")


def test_sarif_output_validates_against_the_sarif_2_1_0_schema(examples):
    jsonschema = pytest.importorskip("jsonschema")  # ([test] extra)
    _, copy, _, main = examples
    status, out, err = main("check", copy, "-t", "npu", "--output-format", "sarif")
    log = json.loads(out)
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(log)
    results = log["runs"][0]["results"]
    rules = [rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]]
    assert status == 1 and len(results) == len(main("check", copy, "-t", "npu")[1].splitlines()) - 1
    assert err.startswith("torchport check [npu]: ")
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in results)
    broken = {**log, "runs": [{"results": results}]}  # (no tool: the schema must say no)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(broken)


def test_github_format_is_one_workflow_annotation_per_finding(examples):
    _, copy, _, main = examples
    text = "".join(main("check", copy, "-t", "npu")[1].splitlines(keepends=True)[:-1])
    _, annotations, _ = main("check", copy, "-t", "npu", "--output-format", "github")
    rows, lines = text.splitlines(), annotations.splitlines()
    assert len(rows) == len(lines)
    match = LINE.match(rows[0])
    assert lines[0] == (f"::warning file={match['path']},line={match['line']},col={match['col']},"
                        f"title={match['code']}::{match['message']}")


def test_an_empty_folder_or_one_without_python_is_a_warning_and_exit_1(tmp_path, cli):
    assert cli("check", tmp_path, "-t", "npu")[0] == 1
    (tmp_path / "README.md").write_text("torch.cuda\n")
    status, out, err = cli("check", tmp_path, "-t", "npu")
    assert (status, out) == (1, "")
    assert err == f"torchport check: warning: no Python files in {tmp_path}\n"


def test_an_unknown_code_prefix_is_a_one_line_usage_error(tmp_path, cli):
    (tmp_path / "a.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    for command in (["check", tmp_path], ["migrate", tmp_path, "--diff"], ["analyze", tmp_path, "-o", tmp_path / "r"]):
        status, out, err = cli(*command, "--select", "TP0,TP9")
        assert (status, out) == (2, "")
        assert err == f"torchport {command[0]}: error: 'TP9' is no rule code nor the beginning of one (e.g. TP0, TP11, TP003)\n"
    assert not (tmp_path / "r").exists()


def test_a_file_that_is_not_python_is_named_and_fails_the_check(tmp_path, cli):
    (tmp_path / "good.py").write_text("import torch\nx = 1\n")
    (tmp_path / "old.py").write_text("import torch\nprint 'x'\nx = torch.zeros(1).cuda()\n")
    status, out, err = cli("check", tmp_path, "-t", "cpu")
    assert status == 1
    assert f"torchport check: warning: {(tmp_path / 'old.py').as_posix()}: not migrated: " in err
    assert out.endswith("2 Python files, nothing to change, 1 files not checked\n")


def test_files_as_pre_commit_passes_them_two_of_one_name_included(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "utils.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    (tmp_path / "a" / "other.py").write_text("import torch\nx = torch.zeros(1)\n")
    status, out, _ = cli("check", "a/utils.py", "b/utils.py", "a/other.py", "a/utils.py", "-t", "npu", "--select", "TP003")
    assert status == 1
    assert out.splitlines() == [  # (TP000: the import the TP003 change needs, at its line in the new code)
        "a/utils.py:2:1: TP000 insert import torch_npu",
        "a/utils.py:2:1: TP003 replace .cuda() with .npu()",
        "b/utils.py:2:1: TP000 insert import torch_npu",
        "b/utils.py:2:1: TP003 replace .cuda() with .npu()",
        "torchport check [npu]: 4 findings in 2 of 3 Python files (4 to change, 0 unsupported)",
    ]


def test_sarif_locations_are_uris_relative_where_the_path_is():
    from torchport.check.formats import Row, sarif
    from torchport.findings import Operation

    rows = [Row("src/my model.py", 3, 5, 3, "TP003", "replace .cuda()", Operation.MODIFY),
            Row("/abs/train.py", 1, 1, 2, "TP009", "no twin", Operation.UNSUPPORTED)]
    results = json.loads(sarif(rows, {"TP003": ".cuda() calls"}))["runs"][0]["results"]
    where = [r["locations"][0]["physicalLocation"] for r in results]
    assert [w["artifactLocation"]["uri"] for w in where] == ["src/my%20model.py", "file:///abs/train.py"]
    assert where[0]["region"] == {"startLine": 3, "startColumn": 5, "endLine": 3}
    assert [r["level"] for r in results] == ["warning", "error"]


def test_after_migrate_in_place_check_is_clean_and_a_second_in_place_changes_nothing(tmp_path):
    """#25's round trip on a copy of the examples: check finds work, --in-place does it, check then
    exits 0, and --in-place again writes nothing."""
    from torchport.cli import main

    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy)
    assert _ask(main, "check", copy, "-t", "npu", "-q")[0] == 1
    assert _ask(main, "migrate", copy, "--in-place", "-t", "npu", "-o", tmp_path / "first", "-q")[0] == 0
    migrated = _snapshot(copy)
    assert migrated != _snapshot(EXAMPLES)
    status, out, _ = _ask(main, "check", copy, "-t", "npu")
    assert (status, out.splitlines()[-1]) == (0, "torchport check [npu]: 5 Python files, nothing to change")
    assert _ask(main, "migrate", copy, "--in-place", "-t", "npu", "-o", tmp_path / "second", "-q")[0] == 0
    assert _snapshot(copy) == migrated


def test_check_says_when_what_it_reads_as_cuda_code_is_npu_code(tmp_path, cli):
    source = tmp_path / "train.py"
    source.write_text("import torch\nimport torch_npu\n\nx = torch.ones(2).npu()\n")
    status, _, err = cli("check", source, "--target", "cpu")
    assert "looks like NPU code (1 of 1 files use torch_npu); migrate it with --from npu" in err
    status, out, err = cli("check", source, "--target", "cpu", "--from", "npu")
    assert status == 1 and "TP403" in out and "looks like NPU code" not in err


def test_rows_of_inserted_code_point_at_lines_of_the_file_as_read(tmp_path, cli):
    """An inserted line is not in the file a person reads: its row names the line it goes above
    there, as every other row names a line of the input (here two removed imports shift the new
    code's lines: they go above line 6, `scaler = GradScaler()`)."""
    (tmp_path / "train.py").write_text(
        "import os\n"
        "import torch\n"
        "from torch.cuda.amp import GradScaler\n"
        "from torch.cuda.amp import autocast\n"
        "import numpy as np\n"
        "scaler = GradScaler()\n"
        "x = torch.zeros(2).cuda()\n"
        "with autocast():\n"
        "    pass\n"
    )
    status, out, _ = cli("check", tmp_path / "train.py", "-t", "accelerator")
    inserted = [line for line in out.splitlines() if " TP000 insert" in line]
    assert len(inserted) == 3 and all(line.split(":")[1] == "6" for line in inserted), out
