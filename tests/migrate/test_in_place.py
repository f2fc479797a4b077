"""`migrate --in-place` (`--fix`): SRC rewritten where it lies, whole files only, nothing else touched;
a dirty git checkout refused; the reports outside SRC; and the command line's hygiene around it."""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _terminal import default_sigint
from _trees import snapshot

from torchport.migrate import in_place

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CUDA = "import torch\nx = torch.zeros(2).cuda()\ntorch.cuda.synchronize()\n"
PLAIN = "import torch\nx = torch.zeros(2)\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _git(root: Path, *args: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, "-C", str(root), *args], check=True, capture_output=True)


def _stray(root: Path) -> list[str]:
    return [str(p.relative_to(root)) for p in root.rglob(f"{in_place.TEMPORARY_PREFIX}*")]


@pytest.fixture
def src(tmp_path: Path) -> Path:
    return _tree(tmp_path / "src", {"a.py": CUDA, "b.py": CUDA, "c.py": CUDA, "plain.py": PLAIN, "notes.txt": "cuda\n"})


def test_in_place_on_the_examples_writes_what_o_writes_and_a_second_run_changes_nothing(cli, tmp_path):
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy)
    before = snapshot(copy)
    status, out, err = cli("migrate", copy, "--in-place", "-t", "cpu", "-o", tmp_path / "reports")
    assert status == 0, err
    assert "5 rewritten in place, 1 other files left as they were" in out
    migrated = tmp_path / "migrated"
    assert cli("migrate", EXAMPLES, "-o", migrated, "-t", "cpu", "-q")[0] == 0
    after = snapshot(copy)
    assert set(after) == set(before)  # no file more (no temporary file, no report), none less
    for name in after:
        if name.endswith(".py"):
            assert (copy / name).read_bytes() == (migrated / name).read_bytes(), name
            assert after[name][2] == before[name][2]  # its mode
        elif name != ".":
            assert after[name] == before[name], name  # README.md: not even its time changed
    assert (tmp_path / "reports" / "torchport_report" / "change_list.csv").exists()

    status, out, err = cli("migrate", copy, "--fix", "-t", "cpu", "-o", tmp_path / "again")
    assert status == 0, err
    assert "0 rewritten in place" in out
    assert snapshot(copy) == after


def test_the_mode_of_a_rewritten_file_is_kept(cli, src):
    (src / "a.py").chmod(0o750)
    assert cli("migrate", src / "a.py", "--in-place", "-t", "cpu", "-q")[0] == 0
    assert "cuda" not in (src / "a.py").read_text()
    assert (src / "a.py").stat().st_mode & 0o777 == 0o750


def test_an_interrupt_mid_way_leaves_each_file_whole_and_no_temporary_file(cli, src, monkeypatch, tmp_path):
    handler = signal.getsignal(signal.SIGINT)
    reports = tmp_path / "temporary-reports"
    monkeypatch.setattr(in_place, "temporary_reports", lambda: reports.mkdir() or reports)
    before = {name: (src / name).read_text() for name in ("a.py", "b.py", "c.py")}
    calls = []

    def fsync_then_interrupt(fd):
        calls.append(fd)
        if len(calls) == 2:  # the second file: written into its temporary file, not yet moved
            raise KeyboardInterrupt

    monkeypatch.setattr(in_place.os, "fsync", fsync_then_interrupt)
    status, _, err = cli("migrate", src, "--in-place", "-t", "cpu")
    assert status == 130
    assert "interrupted: each file of SRC is as it was or migrated, whole" in err
    after = {name: (src / name).read_text() for name in before}
    assert after["a.py"] != before["a.py"] and "cuda" not in after["a.py"]
    assert after["b.py"] == before["b.py"] and after["c.py"] == before["c.py"]
    assert _stray(src) == []
    assert not reports.exists()  # the temporary folder made for reports that were never written
    assert signal.getsignal(signal.SIGINT) == handler  # (not left ignored in this process)


@pytest.mark.fidelity  # (a real run, stopped by a real signal)
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["Ctrl-C", "SIGTERM"])
def test_a_signal_mid_run_leaves_each_file_as_it_was_or_migrated(tmp_path, how):
    src = tmp_path / "src"
    src.mkdir()
    slow = CUDA + "".join(f"def f{i}(x):\n    return x.cuda() + torch.cuda.device_count()\n" for i in range(4000))
    for i in range(6):
        (src / f"big{i}.py").write_text(slow)
    reports = tmp_path / "reports"
    process = subprocess.Popen(
        [sys.executable, "-m", "torchport", "migrate", str(src), "--in-place", "-o", str(reports), "-t", "cpu", "-j", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 60
    while not (reports / "torchport_report").exists() and time.monotonic() < deadline:  # work has started
        time.sleep(0.05)
    time.sleep(0.5)
    process.send_signal(how)
    _, err = process.communicate(timeout=180)  # (the outcome is what counts here, not how soon)
    assert process.returncode == 130, err
    assert err.splitlines() == ["torchport migrate: interrupted: each file of SRC is as it was or migrated, whole; no reports"]
    assert sorted(p.name for p in src.iterdir()) == [f"big{i}.py" for i in range(6)]  # no temporary file
    for path in src.iterdir():
        text = path.read_text()
        assert text == slow or ("cuda" not in text and text.rstrip().endswith('return x.to("cpu") + 1')), path


def test_a_file_that_cannot_be_written_is_listed_and_the_others_are_rewritten(cli, src, monkeypatch, tmp_path):
    real_replace = in_place.os.replace

    def full_disk_for_b(temporary, path):
        if Path(path).name == "b.py":
            raise OSError(28, "No space left on device")
        real_replace(temporary, path)

    monkeypatch.setattr(in_place.os, "replace", full_disk_for_b)
    status, out, err = cli("migrate", src, "--in-place", "-t", "cpu", "-o", tmp_path / "reports")
    assert status == 0, err
    assert f"skipped {src / 'b.py'}: could not be rewritten, left as it was: No space left on device" in out
    assert (src / "b.py").read_text() == CUDA
    assert "cuda" not in (src / "a.py").read_text() and "cuda" not in (src / "c.py").read_text()
    assert _stray(src) == []


def test_without_o_the_reports_go_to_a_temporary_folder_printed_at_the_end(cli, src):
    status, out, _ = cli("migrate", src, "--in-place", "-t", "cpu")
    assert status == 0
    printed = Path(out.split("reports: ")[1].strip())
    try:
        assert printed.name == "torchport_report" and (printed / "summary.json").exists()
        assert not printed.is_relative_to(src)
    finally:
        shutil.rmtree(printed.parent)


def test_a_reports_folder_inside_src_is_refused(cli, src):
    before = snapshot(src)
    status, _, err = cli("migrate", src, "--in-place", "-t", "cpu", "-o", src / "reports")
    assert status == 2
    assert "lies inside the input" in err
    assert snapshot(src) == before


def test_many_files_of_one_name_are_each_rewritten_and_named_from_the_current_folder(cli, tmp_path, monkeypatch):
    """pre-commit's call: many paths at once, `__init__.py` among them more than once."""
    _tree(tmp_path, {"pkg/a/__init__.py": CUDA, "pkg/b/__init__.py": CUDA})
    monkeypatch.chdir(tmp_path)
    status, _, err = cli("migrate", "pkg/a/__init__.py", "pkg/b/__init__.py", "--fix", "-t", "cpu", "-o", "reports")
    assert status == 0, err
    assert "cuda" not in (tmp_path / "pkg/a/__init__.py").read_text() + (tmp_path / "pkg/b/__init__.py").read_text()
    with open(tmp_path / "reports/torchport_report/change_list.csv", newline="") as table:
        files = {row["File"] for row in csv.DictReader(table)}
    assert files == {"pkg/a/__init__.py", "pkg/b/__init__.py"}


def test_a_link_stays_a_link_and_its_file_is_rewritten_once(cli, src, tmp_path):
    (src / "alias.py").symlink_to("a.py")
    status, out, err = cli("migrate", src, "--in-place", "-t", "cpu", "-o", tmp_path / "reports")
    assert status == 0, err
    assert os.readlink(src / "alias.py") == "a.py"
    assert "3 rewritten in place" in out


def test_a_dirty_checkout_is_refused_unless_allow_dirty(cli, src, tmp_path):
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "commit", "-q", "-m", "first")
    (src / "a.py").write_text(CUDA + "y = 1\n")
    (src / "new.py").write_text(CUDA)
    before = snapshot(src)
    status, _, err = cli("migrate", src, "--in-place", "-t", "cpu", "-o", tmp_path / "r1")
    assert status == 2
    assert err.strip() == (
        "torchport migrate: error: --in-place: 2 files under SRC have uncommitted changes (a.py, new.py): "
        "commit or stash them first, or pass --allow-dirty"
    )
    assert snapshot(src) == before
    status, _, err = cli("migrate", src / "b.py", "--in-place", "-t", "cpu", "-o", tmp_path / "r2")
    assert status == 0, err  # b.py alone is committed: its own changes are all `git diff` shows
    status, _, err = cli("migrate", src, "--in-place", "--allow-dirty", "-t", "cpu", "-o", tmp_path / "r3")
    assert status == 0, err
    assert "cuda" not in (src / "new.py").read_text()


def test_porcelain_paths_skip_where_a_rename_came_from():
    output = b" M a.py\0R  new name.py\0old.py\0?? dir/b.py\0"
    assert in_place._porcelain_paths(output) == ["a.py", "new name.py", "dir/b.py"]


# --- the command line's hygiene ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["-o", "x", "--diff"], "--diff writes nothing: drop -o OUT"),
        (["--in-place", "--diff"], "--diff previews what --in-place would write"),
        (["--allow-dirty", "-o", "x"], "--allow-dirty goes with --in-place"),
    ],
    ids=["-o with --diff", "--in-place with --diff", "--allow-dirty alone"],
)
def test_options_that_cannot_go_together_are_one_line_and_exit_2(cli, src, tmp_path, monkeypatch, extra, said):
    monkeypatch.chdir(tmp_path)
    before = snapshot(src)
    status, out, err = cli("migrate", src, "-t", "cpu", *extra)
    assert status == 2
    assert err.startswith("torchport migrate: error: ") and said in err and err.count("\n") == 1
    assert snapshot(src) == before and not (tmp_path / "x").exists()


def test_an_unknown_option_prints_the_commands_usage(cli, src):
    status, _, err = cli("migrate", src, "--bogus", "-t", "cpu")
    assert status == 2
    assert err.startswith("usage: torchport migrate ")
    assert err.strip().endswith("torchport migrate: error: unrecognized arguments: --bogus")


def test_an_empty_folder_is_a_warning_and_exit_1(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    status, _, err = cli("migrate", tmp_path / "empty", "--diff", "-q")
    assert status == 1
    assert err == f"torchport migrate: warning: no Python files in {tmp_path / 'empty'}: nothing to migrate\n"


def test_a_file_that_is_not_python_is_a_warning(cli, src, tmp_path):
    status, _, err = cli("migrate", src / "notes.txt", "-o", tmp_path / "out", "-q")
    assert status == 1
    assert f"warning: {src / 'notes.txt'} is not a Python file (.py): copied as it was" in err
    assert "no Python files" in err
    status, _, err = cli("migrate", src / "notes.txt", src / "a.py", "--diff", "-q")
    assert status == 0  # a Python file was migrated: the warning alone
    assert err == f"torchport migrate: warning: {src / 'notes.txt'} is not a Python file (.py): not migrated\n"


TRAINER = """\
import torch


def main():
    model = torch.nn.Linear(2, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in torch.utils.data.DataLoader(torch.zeros(8, 2), batch_size=2):
        loss = model(x.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
"""


def test_distributed_makes_its_launcher_in_place_but_never_over_a_file_of_that_name(cli, tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text(TRAINER)
    monkeypatch.chdir(tmp_path)
    status, out, err = cli("migrate", "train.py", "--in-place", "--distributed", "-t", "cpu", "-o", "r1")
    assert status == 0, err
    assert "launcher: wrote run_distributed.sh for train.py" in out
    assert os.access(tmp_path / "run_distributed.sh", os.X_OK) and "torchrun" in (tmp_path / "run_distributed.sh").read_text()

    (tmp_path / "train.py").write_text(TRAINER)
    (tmp_path / "run_distributed.sh").write_text("# mine\n")
    status, out, err = cli("migrate", "train.py", "--in-place", "--distributed", "-t", "cpu", "-o", "r2")
    assert status == 0, err
    assert (tmp_path / "run_distributed.sh").read_text() == "# mine\n"
    assert "skipped run_distributed.sh: a file of that name exists: not made in place" in out
    assert _stray(tmp_path) == []
