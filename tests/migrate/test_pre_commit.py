"""The hooks of .pre-commit-hooks.yaml, run by pre-commit itself (`pre-commit try-repo` against this
checkout, uncommitted changes included) in a project of two CUDA files, called as pre-commit calls
a hook: with many paths at once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
CUDA = "import torch\n\nx = torch.zeros(2).cuda()\ntorch.cuda.synchronize()\n"

pytestmark = pytest.mark.fidelity  # (pre-commit builds an environment and installs torchport into it)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """pre-commit's cache, shared by the tests here (it holds the hooks' environment)."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.torchport]\ntarget = "cpu"\n')
    (root / "train.py").write_text(CUDA)
    (root / "pkg" / "__init__.py").write_text(CUDA)
    (root / "notes.md").write_text("x.cuda()\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    return root


def _git(root: Path, *args: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, "-C", str(root), *args], check=True, capture_output=True)


def _try_repo(project: Path, home: Path, hook: str, *files: str) -> subprocess.CompletedProcess:
    assert PRE_COMMIT, "pre-commit is a test dependency ([test] extra): make venv installs it"
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [PRE_COMMIT, "try-repo", str(ROOT), hook, "--verbose", "--files", *files],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )


def test_the_fix_hook_rewrites_the_files_it_is_given_and_fails_the_commit(project, home):
    done = _try_repo(project, home, "torchport-fix", "train.py", "pkg/__init__.py")
    assert done.returncode == 1, done.stdout + done.stderr  # pre-commit: "files were modified by this hook"
    assert "files were modified by this hook" in done.stdout
    for name in ("train.py", "pkg/__init__.py"):
        text = (project / name).read_text()
        assert "cuda" not in text and "x = torch.zeros(2).cpu()" in text, name  # target from pyproject.toml
    assert (project / "notes.md").read_text() == "x.cuda()\n"
    status = subprocess.run(["git", "-C", str(project), "status", "--porcelain"], capture_output=True, text=True)
    assert sorted(status.stdout.split()) == ["M", "M", "pkg/__init__.py", "train.py"]  # nothing else made

    again = _try_repo(project, home, "torchport-fix", "train.py", "pkg/__init__.py")
    assert again.returncode == 0, again.stdout + again.stderr  # migrated: nothing more to do


def test_the_check_hook_lists_the_lines_to_change_and_fails_until_they_are(project, home):
    done = _try_repo(project, home, "torchport-check", "train.py", "pkg/__init__.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "train.py:3:" in done.stdout and "pkg/__init__.py:3:" in done.stdout
    assert (project / "train.py").read_text() == CUDA  # a check changes nothing
    fixed = _try_repo(project, home, "torchport-fix", "train.py", "pkg/__init__.py")
    assert fixed.returncode == 1
    clean = _try_repo(project, home, "torchport-check", "train.py", "pkg/__init__.py")
    assert clean.returncode == 0, clean.stdout + clean.stderr
