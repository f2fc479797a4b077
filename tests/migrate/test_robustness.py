"""`torchport migrate` on a tree made of every bad case at once (issue #12): it ends with a status,
never a traceback; the input is left as it was; every entry of SRC is accounted for, in OUT or in
the reports; a second run cannot write into an OUT in use; an interrupt leaves only whole files."""

from __future__ import annotations

import csv
import json
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

from torchport.migrate import engine

REPORT = "torchport_report"
CUDA = "import torch\nok = torch.cuda.is_available()\nx = torch.zeros(2).cuda()\n"


def build_bad_tree(root: Path) -> Path:
    src = root / "src"
    (src / "pkg").mkdir(parents=True)
    write = lambda name, data: (src / name).write_bytes(data if isinstance(data, bytes) else data.encode())  # noqa: E731
    write("train.py", CUDA)
    write("pkg/__init__.py", "")
    write("pkg/model.py", CUDA + "def f():\n    return torch.cuda.device_count()\n")
    write("nesting_bomb.py", CUDA + "y = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n")
    write("concat_bomb.py", CUDA + "s = " + " + ".join(f"'a{i}'" for i in range(1000)) + "\n")
    write("elif_bomb.py", CUDA + "v = 0\nif v == 0:\n    pass\n" + "".join(
        f"elif v == {i}:\n    n = torch.cuda.device_count()\n" for i in range(1, 400)))
    write("binary.py", bytes(range(256)) * 4)
    write("null_byte.py", b"import torch\nx = torch.cuda.is_available()\0\n")
    write("python2.py", "import torch\nprint torch.cuda.is_available()\n")
    write("python2_plain.py", "print 'no cuda here'\n")
    write("bom.py", b"\xef\xbb\xbf" + CUDA.encode())
    write("crlf.py", CUDA.replace("\n", "\r\n"))
    write("latin1.py", "# -*- coding: latin-1 -*-\n# caf\xe9\n".encode("latin-1") + CUDA.encode())
    write("data.bin", os.urandom(64))
    os.symlink("l2.py", src / "l1.py")  # a loop of links
    os.symlink("l1.py", src / "l2.py")
    os.symlink("self_loop", src / "self_loop")
    os.symlink("train.py", src / "alias.py")  # links that stay inside
    os.symlink("pkg", src / "pkg_alias")
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(CUDA)
    os.symlink(outside / "secret.py", src / "link_out.py")  # links that leave, or lead nowhere
    os.symlink(outside, src / "linked_out_folder")
    os.symlink("missing.py", src / "dangling.py")
    os.mkfifo(src / "pipe.py")
    venv = src / "env"  # a virtual environment under a name that is not a default one
    (venv / "lib").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr\n")
    (venv / "lib" / "torch_stuff.py").write_text(CUDA)
    (src / "build").mkdir()
    (src / "build" / "gen.py").write_text(CUDA)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(src)], check=True)
        (src / ".gitignore").write_text("outputs/\n")
        (src / "outputs").mkdir()
        (src / "outputs" / "run.py").write_text(CUDA)
    if os.geteuid() != 0:  # (root reads everything)
        (src / "locked").mkdir()
        (src / "locked" / "a.py").write_text(CUDA)
        (src / "locked").chmod(0)
        write("unreadable.py", CUDA)
        (src / "unreadable.py").chmod(0)
    return src


def entries(src: Path, out: Path) -> list[str]:
    """Every entry of SRC, found without the tool: a folder that OUT's reports list as left out
    or not taken counts once; any other folder counts as what it holds."""
    listed = {row[0] for row in read_csv(out / REPORT / "skipped_files.csv")[1:]}
    listed |= {entry["path"] for entry in json.loads((out / REPORT / "summary.json").read_text())["excluded"]}
    found = []

    def visit(folder: Path) -> None:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            relative = Path(entry.path).relative_to(src).as_posix()
            if entry.is_dir(follow_symlinks=False) and relative not in listed:
                visit(Path(entry.path))
            else:
                found.append(relative)

    visit(src)
    return found


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.fixture(scope="module")
def bad_tree(tmp_path_factory) -> Path:
    return build_bad_tree(tmp_path_factory.mktemp("bad"))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_tree_of_every_bad_case(torchport, bad_tree: Path, tmp_path: Path, jobs: str) -> None:
    src, out = bad_tree, tmp_path / "out"
    before = snapshot(src.parent)
    result = torchport("migrate", src, "-o", out, "-t", "cpu", "-j", jobs, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert snapshot(src.parent) == before  # the input, and what its links lead to, as they were

    skipped = {row[0]: row[1] for row in read_csv(out / REPORT / "skipped_files.csv")[1:]}
    summary = json.loads((out / REPORT / "summary.json").read_text())
    excluded = {entry["path"]: entry["reason"] for entry in summary["excluded"]}
    found = entries(src, out)
    written = [name for name in found if (out / name).is_file() and not (out / name).is_symlink()]
    linked = [name for name in found if (out / name).is_symlink()]
    for name in found:
        assert name in written or name in linked or name in skipped or name in excluded, name
    assert summary["entries"] == len(found)
    assert summary["files_written"] == len(written) and summary["links"] == len(linked)

    # the deep but valid files are migrated; the invalid ones are copied unchanged and listed
    for name in ("concat_bomb.py", "elif_bomb.py", "bom.py", "crlf.py", "latin1.py", "train.py", "pkg/model.py"):
        assert b"torch.cuda" not in (out / name).read_bytes(), name
        assert name not in skipped, skipped.get(name)
    for name in ("nesting_bomb.py", "binary.py", "null_byte.py", "python2.py", "python2_plain.py"):
        assert (out / name).read_bytes() == (src / name).read_bytes(), name
        assert skipped[name].startswith("not migrated, copied unchanged: "), name
    assert (out / "bom.py").read_bytes().startswith(b"\xef\xbb\xbf")
    assert b"\r\n" in (out / "crlf.py").read_bytes()
    assert "crashed" in skipped["nesting_bomb.py"] or "nested" in skipped["nesting_bomb.py"]
    for name in ("l1.py", "l2.py", "self_loop"):
        assert "loop of links" in skipped[name]
    for name in ("link_out.py", "linked_out_folder", "dangling.py", "pipe.py"):
        assert name in skipped and not os.path.lexists(out / name)
    assert os.readlink(out / "alias.py") == "train.py" and os.readlink(out / "pkg_alias") == "pkg"
    assert excluded["env"] == "a virtual environment" and "build" in excluded
    assert not (out / "env").exists() and not (out / "build").exists()
    if shutil.which("git"):
        assert excluded["outputs"] == "ignored by .gitignore" and not (out / "outputs").exists()
        assert excluded[".git"] and not (out / ".git").exists()
    assert not list(out.rglob(".torchport-*"))


def test_a_second_run_into_an_out_in_use_is_refused(cli, tmp_path: Path) -> None:
    fcntl = pytest.importorskip("fcntl")
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(CUDA)
    out = tmp_path / "out"
    out.mkdir()
    handle = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a run in progress holds it
        code, _, err = cli("migrate", src, "-o", out, "-t", "cpu")
    finally:
        os.close(handle)
    assert code == 2 and err.count("\n") == 1 and "another torchport migrate is writing into" in err
    assert list(out.iterdir()) == []
    assert cli("migrate", src, "-o", out, "-t", "cpu")[0] == 0  # once it has ended


def test_an_out_that_cannot_be_written_is_refused_before_any_work(cli, tmp_path: Path, monkeypatch) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(CUDA)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(engine.tempfile, "mkstemp", refuse)
    monkeypatch.setattr(engine, "scan", lambda *a, **k: pytest.fail("work started"))
    code, _, err = cli("migrate", src, "-o", tmp_path / "new", "-t", "cpu")
    assert code == 2 and err.count("\n") == 1 and "cannot write into" in err and "Permission denied" in err
    assert not (tmp_path / "new").exists()  # made by this run and empty: removed again
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "keep.txt").write_text("mine")
    code, _, err = cli("migrate", src, "-o", existing, "-t", "cpu", "--force")
    assert code == 2 and "cannot write into" in err
    assert [p.name for p in existing.iterdir()] == ["keep.txt"]


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_stops_promptly_and_leaves_only_whole_files(tmp_path: Path, how: signal.Signals) -> None:
    src = tmp_path / "src"
    src.mkdir()
    slow = CUDA + "".join(f"def f{i}(x):\n    return x.cuda() + torch.cuda.device_count()\n" for i in range(4000))
    for i in range(6):
        (src / f"big{i}.py").write_text(slow)
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "torchport", "migrate", str(src), "-o", str(out), "-t", "cpu", "-j", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 60
    while not (out / REPORT).exists() and time.monotonic() < deadline:  # work has started
        time.sleep(0.05)
    time.sleep(0.3)
    sent = time.monotonic()
    process.send_signal(how)
    _, err = process.communicate(timeout=60)
    took = time.monotonic() - sent
    assert took < 5, f"stopped {took:.1f} s after the signal, exit {process.returncode}:\n{err[-2000:]}"
    assert process.returncode == 130
    assert err.splitlines() == [f"torchport migrate: interrupted: {out} holds only whole files, and no reports"]
    assert not list(out.rglob(".torchport-*"))
    assert not (out / REPORT / "summary.json").exists()
    for path in out.glob("*.py"):  # whatever was written is a whole migrated file
        text = path.read_text()
        assert text.rstrip().endswith("return x.to(\"cpu\") + 1") or "def f3999" in text, path
    leftovers = subprocess.run(["pgrep", "-f", f"migrate {src}"], capture_output=True, text=True).stdout.split()
    assert leftovers == []  # no worker outlives the run


def test_several_sources_each_go_to_their_own_folder(cli, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "train.py").write_text(CUDA)
    (tmp_path / "lib" / "b").mkdir(parents=True)
    (tmp_path / "lib" / "b" / "util.py").write_text(CUDA)
    (tmp_path / "one.py").write_text(CUDA)
    out = tmp_path / "out"
    code, stdout, _ = cli("migrate", tmp_path / "a", tmp_path / "lib" / "b", tmp_path / "one.py", "-o", out, "-t", "cpu")
    assert code == 0 and "3 Python files, 3 changed" in stdout
    for name in ("a/train.py", "b/util.py", "one.py"):
        assert b"torch.cuda" not in (out / name).read_bytes(), name
    changed = {row[0] for row in read_csv(out / REPORT / "change_list.csv")[1:]}
    assert changed == {"a/train.py", "b/util.py", "one.py"}

    (tmp_path / "other" / "a").mkdir(parents=True)
    code, _, err = cli("migrate", tmp_path / "a", tmp_path / "other" / "a", "-o", tmp_path / "out2", "-t", "cpu")
    assert code == 2 and err.count("\n") == 1 and "would both be written to a" in err
    assert not (tmp_path / "out2").exists()

    code, stdout, err = cli("migrate", tmp_path / "a", tmp_path / "one.py", "--diff", "-t", "cpu")
    assert code == 0 and "+++ b/a/train.py" in stdout and "+++ b/one.py" in stdout
    assert "2 would change, 0 other files; nothing written (--diff)" in err


def test_an_internal_error_is_loud_exit_1_and_counted(cli, tmp_path: Path, monkeypatch) -> None:
    """A bug of ours costs the file its migration, never the run, but it is not a quiet skip: the
    summary counts it, summary.json lists it, and the exit status is 1 (with or without --strict)."""
    from torchport.migrate.rules import cuda_method

    def broken(self, node):
        raise TypeError("'IndentedBlock' object is not iterable")

    monkeypatch.setattr(cuda_method.CudaMethodRule, "visit_Call", broken)
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    (src / "fine.py").write_text("import torch\ntorch.backends.cudnn.benchmark = True\n")
    out = tmp_path / "out"
    status, said, _ = cli("migrate", src, "-o", out, "-t", "cpu", "--jobs", "1")
    assert status == 1
    assert "internal errors 1: bugs in torchport" in said
    assert "    train.py: not migrated, copied unchanged: internal error (TypeError: 'IndentedBlock' object is not iterable)" in said
    assert (out / "train.py").read_bytes() == (src / "train.py").read_bytes()  # left as it was
    summary = json.loads((out / "torchport_report" / "summary.json").read_text())
    assert [row["file"] for row in summary["internal_errors"]] == ["train.py"]
    monkeypatch.undo()
    status, said, _ = cli("migrate", src, "-o", tmp_path / "again", "-t", "cpu", "--jobs", "1")
    assert status == 0 and "internal errors" not in said
