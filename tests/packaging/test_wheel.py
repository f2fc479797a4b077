"""The wheel as a pip user gets it: built from the files a build reads, installed by the README's
own Install steps (run as written, in a shell whose HOME is a temporary folder) into a fresh venv
that holds only torch 2.13.0, and into a venv without torch; `torchport` there writes what the
source tree's writes. Builds venvs and installs torch from pip's cache: `make fidelity`."""

from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import native_bf16  # (tests/cpu_bf16, put on sys.path by conftest)
import pytest

import torchport

pytestmark = pytest.mark.fidelity

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SUMMARY = Path("torchport_report", "summary.json")
BUILT_FROM = ["pyproject.toml", "LICENSE", "README.md", "docs/PYPI.md", "src"]  # what a build reads
LEFT_BEHIND = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
CUDA_SCRIPT = """\
import torch
x = torch.ones(3).cuda()
torch.cuda.synchronize()
print("sum", (x * 2).sum().item(), x.device.type)
"""


def install_steps() -> str:
    """The first shell block of the README's Install section, as a user would paste it."""
    section = (ROOT / "README.md").read_text().split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```sh\n(.*?)```", section, re.DOTALL).group(1)


def shell_env(home: Path, bin_dir: Path) -> dict[str, str]:
    """This environment, with a fresh HOME, no active venv, a PATH whose only `python` is this
    interpreter and a PYTHONPATH without the source tree (its torchport is on neither); pip's
    cache is the usual one."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pip"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    env.update(HOME=str(home), PATH=f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    env["PYTHONPATH"] = native_bf16.DIRECTORY  # (conftest's: the CPU's bfloat16 answer) and no source tree
    env.setdefault("PIP_CACHE_DIR", str(cache))
    return env


def sh(script: str, cwd: Path, env: dict[str, str], timeout: int = 900) -> subprocess.CompletedProcess:
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{script}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(clone, env, the venv with torch, the venv without it) after the README's Install steps."""
    home = tmp_path_factory.mktemp("home")
    clone = home / "clone"
    for name in BUILT_FROM:
        source, copy = ROOT / name, clone / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, copy, ignore=LEFT_BEHIND)
        else:
            shutil.copy2(source, copy)
    bin_dir = home / "bin"
    bin_dir.mkdir()
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    env = shell_env(home, bin_dir)
    sh(install_steps(), clone, env)
    bare = home / "bare"
    sh(f"python -m venv {bare} && {bare}/bin/pip install -q dist/torchport-*.whl", clone, env)
    return clone, env, home / ".venvs" / "port", bare


def torchport_in(venv: Path, env: dict[str, str], *args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / "torchport"), *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def from_source_tree(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchport", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def same_trees(left: Path, right: Path) -> list[str]:
    """The files that differ or are in one tree only (an empty list: the trees are the same);
    summary.json may differ only in the output folder it names."""
    differ = []
    summaries = [json.loads((tree / SUMMARY).read_text()) for tree in (left, right)]
    if [{**s, "output": None} for s in summaries] != [{**summaries[1], "output": None}] * 2:
        differ.append(str(SUMMARY))
    compared = filecmp.dircmp(left, right, ignore=[SUMMARY.name])
    stack = [(compared, "")]
    while stack:
        here, prefix = stack.pop()
        differ += [prefix + n for n in here.left_only + here.right_only + here.diff_files + here.funny_files]
        stack += [(sub, f"{prefix}{name}/") for name, sub in here.subdirs.items()]
    return differ


def test_the_wheel_holds_every_package_file_the_license_and_one_version(installed):
    clone, *_ = installed
    (wheel,) = (clone / "dist").glob("torchport-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(f"{info}/METADATA").decode())
        license_text = archive.read(f"{info}/licenses/LICENSE").decode()
    package = clone / "src" / "torchport"
    shipped = {f"torchport/{p.relative_to(package).as_posix()}" for p in package.rglob("*") if p.is_file()}
    assert shipped - names == set(), "package files the wheel lacks (package-data?)"
    assert "torchport/py.typed" in names
    assert license_text == (ROOT / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["Version"] == torchport.__version__
    assert wheel.name.startswith(f"torchport-{torchport.__version__}-")
    requires = metadata.get_all("Requires-Dist")
    assert not [r for r in requires if re.match(r"torch\b", r)], requires  # nor in any extra
    (libcst,) = [r for r in requires if r.startswith("libcst")]
    assert "<" in libcst, libcst
    assert metadata.get_payload().startswith((ROOT / "docs" / "PYPI.md").read_text()[:200])


def test_the_readme_steps_put_the_installed_torchport_on_path(installed):
    clone, env, venv, _ = installed
    done = sh(f". {venv}/bin/activate && command -v torchport && torchport --version"
              " && python -c 'import torchport; print(torchport.__file__)'", clone, env)
    where, version, imported = done.stdout.strip().splitlines()
    assert where == str(venv / "bin" / "torchport")
    assert version == f"torchport {torchport.__version__}"
    assert Path(imported).is_relative_to(venv / "lib"), imported  # the wheel's, not a source tree


@pytest.mark.parametrize("venv_name", ["with torch", "without torch"])
def test_migrate_from_the_wheel_writes_what_the_source_tree_writes(installed, tmp_path, venv_name):
    clone, env, with_torch, bare = installed
    venv = with_torch if venv_name == "with torch" else bare
    wheel_out, source_out = tmp_path / "wheel", tmp_path / "source"
    done = torchport_in(venv, env, "migrate", EXAMPLES, "-o", wheel_out, "--target", "npu", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert from_source_tree("migrate", EXAMPLES, "-o", source_out, "--target", "npu", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in wheel_out.glob("*.py")) == sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert same_trees(wheel_out, source_out) == []


def test_analyze_from_the_wheel_without_torch_writes_what_the_source_tree_writes(installed, tmp_path):
    clone, env, _, bare = installed
    assert subprocess.run([str(bare / "bin" / "python"), "-c", "import torch"], env=env,
                          capture_output=True).returncode != 0
    wheel_out, source_out = tmp_path / "wheel", tmp_path / "source"
    done = torchport_in(bare, env, "analyze", EXAMPLES, "-o", wheel_out, "--target", "npu", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert from_source_tree("analyze", EXAMPLES, "-o", source_out, "--target", "npu", cwd=tmp_path).returncode == 0
    assert list((wheel_out / "torchport_report").glob("*.csv"))
    assert same_trees(wheel_out, source_out) == []


def test_run_from_the_wheel_uses_the_venvs_torch(installed, tmp_path):
    clone, env, venv, _ = installed
    (tmp_path / "train.py").write_text(CUDA_SCRIPT)
    done = torchport_in(venv, env, "run", "--target", "cpu", "train.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "sum 6.0 cpu"


def test_the_wheels_torch_backends_entry_point_runs_cuda_code_on_the_target(installed, tmp_path):
    clone, env, venv, _ = installed
    (tmp_path / "train.py").write_text(CUDA_SCRIPT)
    done = subprocess.run([str(venv / "bin" / "python"), "train.py"], cwd=tmp_path, env={**env, "TORCHPORT_TARGET": "cpu"},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "sum 6.0 cpu"


def test_check_from_the_wheel_lists_the_pending_changes(installed, tmp_path):
    clone, env, venv, _ = installed
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    done = torchport_in(venv, env, "check", "examples", "--target", "npu", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    findings = [line for line in done.stdout.splitlines() if re.match(r"examples/\S+\.py:\d+:\d+: TP\d{3} ", line)]
    assert findings, done.stdout
