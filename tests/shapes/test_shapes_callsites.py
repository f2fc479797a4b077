"""Rows are pinned to the innermost frame inside the project, never to a shim outside it (#24)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import torch

from torchport.shapes import ShapeDetector
from torchport.shapes.callsites import project_of, set_project
from torchport.shapes.report import rows

HERE = os.path.relpath(__file__)
SHIM = "import torch\n\n\ndef cat(tensors, dim=0):  # a wrapper, as site-wide shims install them\n    return torch.cat(tensors, dim)\n"


def _module(path: Path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"shim_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cat_rows(call) -> list[tuple[str, int]]:
    detector = ShapeDetector(save_at_exit=False)
    for n in detector.start([1, 2, 3]):
        call([torch.ones(n), torch.ones(2)])
    return [(row[1], row[2]) for row in rows(detector.sites) if row[0] == "torch.cat"]


def test_a_shim_outside_the_project_is_walked_past_to_the_projects_line(tmp_path):
    shim = _module(tmp_path / "site" / "shim.py", SHIM)
    line = sys._getframe().f_lineno + 1
    assert _cat_rows(lambda tensors: shim.cat(tensors)) == [(HERE, line)]  # the loop's folder is the project


def test_the_project_given_decides_and_its_site_packages_are_not_its(tmp_path):
    project = tmp_path / "project"
    installed = _module(project / ".venv" / "lib" / "site-packages" / "lib.py", SHIM)
    own = _module(project / "helper.py", "def join(lib, tensors):\n    return lib.cat(tensors)\n")
    with set_project(str(project)):
        found = _cat_rows(lambda tensors: own.join(installed, tensors))
    assert found == [(str(project / "helper.py"), 2)]  # the loop (this file) is outside that project


def test_the_help_says_what_the_project_is_and_a_missing_one_is_one_line(cli, tmp_path, monkeypatch):
    status, out, _ = cli("shapes", "--help")
    assert status == 0 and "The project is a folder and everything below it but site-packages" in " ".join(out.split())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('never run')\n")
    status, out, err = cli("shapes", "--project", "nowhere", "train.py")
    assert (status, out) == (2, "") and err.strip().splitlines() == [
        "torchport shapes: error: --project nowhere: no such folder"], err
    assert not (tmp_path / "dynamic_shape_report.csv").exists()


def test_a_scripts_project_is_its_repository_else_its_folder(tmp_path):
    (tmp_path / "repo" / "tools").mkdir(parents=True)
    (tmp_path / "repo" / "pyproject.toml").write_text("")
    (tmp_path / "loose").mkdir()
    assert project_of(str(tmp_path / "repo" / "tools" / "train.py")) == str(tmp_path / "repo")
    assert project_of(str(tmp_path / "loose" / "train.py")) == str(tmp_path / "loose")
