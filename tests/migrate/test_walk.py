"""The scan of the input tree: every entry is accounted for, and files are chosen as linters do.

Each test builds a small tree in tmp_path and checks, besides its own point, the invariant of
issue #12: every entry an independent os.walk finds is in exactly one of files / links / skipped
/ excluded, or lies below a folder that is excluded, skipped or a link.
"""

from __future__ import annotations

import argparse
import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from torchport.migrate import walk as walk_module
from torchport.migrate.walk import (
    GITIGNORED,
    LINK_AWAY,
    NOT_INCLUDED,
    NOT_REGULAR,
    Selection,
    Tree,
    add_selection_arguments,
    scan,
    selection_from,
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


# --- helpers ------------------------------------------------------------------------------


def make(root: Path, *names: str) -> Path:
    """Files (with a line of code each) and folders (names ending in "/") under `root`."""
    for name in names:
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {name}\n")
    return root


def link(path: Path, text: str | Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(text, path)


def project(tmp_path: Path) -> Path:
    src = tmp_path / "project"
    src.mkdir()
    return src.resolve()


def placed(tree: Tree) -> dict[str, str]:
    """Relative path -> the list it is in; fails if an entry is in two lists or twice in one."""
    where: dict[str, str] = {}
    entries = [
        *((p.as_posix(), "files") for p in tree.files),
        *((p.as_posix(), "links") for p, _ in tree.links),
        *((p, "skipped") for p, _ in tree.skipped),
        *((p, "excluded") for p, _ in tree.excluded),
    ]
    for relative, kind in entries:
        assert relative not in where, f"{relative} is in {where[relative]} and in {kind}"
        where[relative] = kind
    return where


def assert_accounted(src: Path, tree: Tree) -> dict[str, str]:
    where = placed(tree)
    covering = {p for p, kind in where.items() if kind in ("skipped", "excluded", "links")}
    for folder, dirs, names in os.walk(src, followlinks=False):
        for name in [*dirs, *names]:
            path = Path(folder, name)
            relative = path.relative_to(src).as_posix()
            parts = relative.split("/")
            if any("/".join(parts[:n]) in covering for n in range(1, len(parts))):
                assert relative not in where, f"{relative} is listed below a folder left out or linked"
            else:  # a folder that is walked is accounted for by what it holds
                walked = path.is_dir() and not path.is_symlink()
                assert relative in where or walked, f"{relative} is not accounted for"
    for relative in where:
        assert relative == "." or os.path.lexists(src / relative), relative
    return where


def reasons(entries: list[tuple[str, str]]) -> dict[str, str]:
    return dict(entries)


def files(tree: Tree) -> list[str]:
    return [p.as_posix() for p in tree.files]


def links(tree: Tree) -> dict[str, str]:
    return {p.as_posix(): text for p, text in tree.links}


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def quiet_git(monkeypatch, tmp_path: Path) -> None:
    """A git that reads no configuration from this machine."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


# --- the walk -----------------------------------------------------------------------------


def test_files_come_in_walk_order(tmp_path: Path) -> None:
    src = make(project(tmp_path), "z.py", "a/y.py", "a/b/x.py", "a/b/data.bin", "c/w.py", "empty/")
    tree = scan(src)
    assert files(tree) == ["z.py", "a/y.py", "a/b/data.bin", "a/b/x.py", "c/w.py"]
    assert tree.links == tree.skipped == tree.excluded == []
    assert_accounted(src, tree)


def test_a_file_named_as_src_is_taken_whatever_the_selection(tmp_path: Path) -> None:
    file = make(tmp_path, "build/gen_pb2.py") / "build" / "gen_pb2.py"
    tree = scan(file, Selection(excludes=("*_pb2.py",), includes=("*.txt",)))
    assert tree == Tree(files=[Path("gen_pb2.py")])


def test_a_folder_named_as_src_is_walked_even_if_it_would_be_excluded(tmp_path: Path) -> None:
    src = make(tmp_path / "build", "pyvenv.cfg", "a.py").resolve()
    tree = scan(src)
    assert files(tree) == ["a.py", "pyvenv.cfg"]
    assert_accounted(src, tree)


def test_fifo_is_skipped_not_read(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    src = make(project(tmp_path), "a.py")
    os.mkfifo(src / "pipe.py")
    tree = scan(src)
    assert reasons(tree.skipped) == {"pipe.py": NOT_REGULAR}
    assert files(tree) == ["a.py"]
    assert_accounted(src, tree)


def test_an_unreadable_file_is_taken_the_engine_reads_it(tmp_path: Path) -> None:
    src = make(project(tmp_path), "secret.py")
    (src / "secret.py").chmod(0)
    try:
        assert files(scan(src)) == ["secret.py"]
    finally:
        (src / "secret.py").chmod(0o644)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any folder")
def test_an_unreadable_folder_is_skipped(tmp_path: Path) -> None:
    src = make(project(tmp_path), "a.py", "locked/b.py")
    (src / "locked").chmod(0)
    try:
        tree = scan(src)
        assert reasons(tree.skipped) == {"locked": "could not be read: Permission denied"}
        assert files(tree) == ["a.py"]
        assert_accounted(src, tree)
    finally:
        (src / "locked").chmod(0o755)


def test_a_folder_that_cannot_be_listed_is_skipped_with_the_reason(tmp_path: Path, monkeypatch) -> None:
    """The same as above, for a run as root: the listing is made to fail."""
    src = make(project(tmp_path), "a.py", "locked/b.py", "locked/deeper/c.py")
    real = os.scandir

    def scandir(path):
        if Path(path).name == "locked":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(walk_module.os, "scandir", scandir)
    tree = scan(src)
    monkeypatch.setattr(walk_module.os, "scandir", real)
    assert reasons(tree.skipped) == {"locked": "could not be read: Permission denied"}
    assert files(tree) == ["a.py"]
    assert_accounted(src, tree)


def test_an_unlistable_src_is_one_skipped_entry(tmp_path: Path, monkeypatch) -> None:
    src = make(project(tmp_path), "a.py")

    def scandir(path):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(walk_module.os, "scandir", scandir)
    tree = scan(src, Selection(gitignore=False))
    assert tree == Tree(skipped=[(".", "could not be read: Permission denied")])


# --- links --------------------------------------------------------------------------------


def test_a_loop_of_links_is_skipped_without_a_traceback(tmp_path: Path) -> None:
    src = make(project(tmp_path), "a.py")
    link(src / "l1.py", "l2.py")
    link(src / "l2.py", "l1.py")
    link(src / "me.py", "me.py")
    link(src / "pkg" / "loop", "../pkg/loop")
    tree = scan(src)
    assert reasons(tree.skipped) == {
        "l1.py": "a loop of links: not followed",
        "l2.py": "a loop of links: not followed",
        "me.py": "a loop of links: not followed",
        "pkg/loop": "a loop of links: not followed",
    }
    assert files(tree) == ["a.py"]
    assert_accounted(src, tree)


def test_links_out_of_src_or_to_nothing_are_skipped(tmp_path: Path) -> None:
    outside = make(tmp_path / "outside", "secret.py", "lib/x.py").resolve()
    src = make(project(tmp_path), "a.py")
    link(src / "out.py", outside / "secret.py")
    link(src / "out_relative.py", "../outside/secret.py")
    link(src / "lib", outside / "lib")
    link(src / "gone.py", "nowhere.py")
    link(src / "through_a_file.py", "a.py/x")
    tree = scan(src)
    assert reasons(tree.skipped) == {
        name: LINK_AWAY for name in ("gone.py", "lib", "out.py", "out_relative.py", "through_a_file.py")
    }
    assert files(tree) == ["a.py"] and tree.links == []
    assert_accounted(src, tree)


def test_file_links_inside_src_keep_a_relative_text(tmp_path: Path) -> None:
    src = make(project(tmp_path), "pkg/a.py")
    link(src / "a.py", "pkg/a.py")
    link(src / "tools" / "absolute.py", src / "pkg" / "a.py")
    link(src / "tools" / "chain.py", "../a.py")  # a link to a link: to the file itself
    tree = scan(src)
    assert links(tree) == {"a.py": "pkg/a.py", "tools/absolute.py": "../pkg/a.py", "tools/chain.py": "../pkg/a.py"}
    assert files(tree) == ["pkg/a.py"]
    assert_accounted(src, tree)


def test_folder_links_inside_src_are_kept_and_not_walked(tmp_path: Path) -> None:
    src = make(project(tmp_path), "pkg/a.py", "pkg/sub/b.py")
    link(src / "lib", "pkg")
    link(src / "tools" / "lib", src / "pkg")
    link(src / "pkg" / "sub" / "up", "../..")  # to SRC itself
    tree = scan(src)
    assert links(tree) == {"lib": "pkg", "tools/lib": "../pkg", "pkg/sub/up": "../.."}
    assert files(tree) == ["pkg/a.py", "pkg/sub/b.py"]  # once each, in their own place
    assert_accounted(src, tree)


def test_a_link_that_leaves_src_and_comes_back_is_a_link_inside(tmp_path: Path) -> None:
    src = make(project(tmp_path), "pkg/a.py")
    link(tmp_path / "outside" / "back", src)
    link(src / "via.py", tmp_path / "outside" / "back" / "pkg" / "a.py")
    assert links(scan(src)) == {"via.py": "pkg/a.py"}


def test_a_link_to_something_left_out_follows_its_target(tmp_path: Path) -> None:
    src = make(project(tmp_path), "a.py", "build/gen.py", "docs/x.py")
    if hasattr(os, "mkfifo"):
        os.mkfifo(src / "pipe")
    link(src / "gen.py", "build/gen.py")
    link(src / "docs_link", "docs")
    link(src / "pipe_link", "pipe")
    tree = scan(src, Selection(excludes=("docs",)))
    assert reasons(tree.excluded)["gen.py"] == "a link to build/gen.py, which is left out (a default exclude (build))"
    assert reasons(tree.excluded)["docs_link"] == "a link to docs, which is left out (matches --exclude 'docs')"
    if hasattr(os, "mkfifo"):
        assert reasons(tree.skipped)["pipe_link"] == f"a link to pipe, which is left out ({NOT_REGULAR})"
    assert tree.links == []
    assert_accounted(src, tree)


def test_a_link_is_chosen_by_its_own_name_too(tmp_path: Path) -> None:
    src = make(project(tmp_path), "a.py")
    link(src / "a_pb2.py", "a.py")
    link(src / "a.txt", "a.py")
    tree = scan(src, Selection(excludes=("*_pb2.py",), includes=("*.py",)))
    assert reasons(tree.excluded) == {"a_pb2.py": "matches --exclude '*_pb2.py'", "a.txt": NOT_INCLUDED}
    assert_accounted(src, tree)


# --- default excludes ---------------------------------------------------------------------


def test_environments_are_excluded_whatever_their_name_and_never_entered(tmp_path: Path, monkeypatch) -> None:
    src = make(
        project(tmp_path), "train.py", "myenv/pyvenv.cfg", "myenv/lib/site.py", "tools/conda/conda-meta/",
        "tools/conda/lib/x.py", "pkg/.venv/lib/y.py", "pkg/venv/z.py",
    )
    listed = []
    real = os.scandir
    monkeypatch.setattr(walk_module.os, "scandir", lambda path: listed.append(Path(path)) or real(path))
    tree = scan(src)
    monkeypatch.setattr(walk_module.os, "scandir", real)
    assert reasons(tree.excluded) == {
        "myenv": "a virtual environment",
        "tools/conda": "a conda environment",
        "pkg/.venv": "a default exclude (.venv)",
        "pkg/venv": "a default exclude (venv)",
    }
    assert files(tree) == ["train.py"]
    assert not [path for path in listed if {"myenv", "conda", ".venv", "venv"} & set(path.parts)]
    assert_accounted(src, tree)


def test_build_folders_and_caches_are_excluded_at_any_depth(tmp_path: Path) -> None:
    src = make(
        project(tmp_path), "a.py", "build/lib/a.py", "dist/a.whl", "web/node_modules/x.js", "pkg/__pycache__/a.pyc",
        ".git/HEAD", ".mypy_cache/x", "docs/_build/index.html", "sub/.git", "build.py",
    )
    tree = scan(src)
    assert reasons(tree.excluded) == {
        ".git": "version-control metadata",
        ".mypy_cache": "a default exclude (.mypy_cache)",
        "build": "a default exclude (build)",
        "dist": "a default exclude (dist)",
        "docs/_build": "a default exclude (_build)",
        "pkg/__pycache__": "a bytecode cache",
        "sub/.git": "version-control metadata",  # a submodule's .git file
        "web/node_modules": "a default exclude (node_modules)",
    }
    assert files(tree) == ["a.py", "build.py"]  # the names are folders' names only
    assert_accounted(src, tree)


def test_no_default_excludes_enters_them_but_not_vcs_metadata_or_bytecode(tmp_path: Path) -> None:
    src = make(
        project(tmp_path), "a.py", "build/b.py", "myenv/pyvenv.cfg", "node_modules/x.js", ".git/HEAD",
        "__pycache__/a.pyc",
    )
    tree = scan(src, Selection(default_excludes=False, gitignore=False))
    assert files(tree) == ["a.py", "build/b.py", "myenv/pyvenv.cfg", "node_modules/x.js"]
    assert reasons(tree.excluded) == {".git": "version-control metadata", "__pycache__": "a bytecode cache"}
    assert_accounted(src, tree)


# --- --exclude and --include --------------------------------------------------------------


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    return make(
        project(tmp_path), "README.md", "setup.py", "tests/test_a.py", "pkg/m.py", "pkg/m_pb2.py",
        "pkg/tests/test_b.py", "pkg/data/table.csv", "docs/conf.py",
    )


@pytest.mark.parametrize(
    ("globs", "excluded"),
    [
        (("tests",), {"tests": "tests", "pkg/tests": "tests"}),
        (("tests/*",), {"tests/test_a.py": "tests/*"}),
        (("tests/",), {"tests": "tests/", "pkg/tests": "tests/"}),
        (("pkg/tests",), {"pkg/tests": "pkg/tests"}),
        (("*_pb2.py",), {"pkg/m_pb2.py": "*_pb2.py"}),
        (("./docs", "*.md"), {"README.md": "*.md", "docs": "./docs"}),
        (("**/tests",), {"tests": "**/tests", "pkg/tests": "**/tests"}),
        (("**/m.py",), {"pkg/m.py": "**/m.py"}),
        (("pkg/*",), {"pkg/m.py": "pkg/*", "pkg/m_pb2.py": "pkg/*", "pkg/tests": "pkg/*", "pkg/data": "pkg/*"}),
    ],
)
def test_exclude_matches_the_relative_path_or_the_name(layout: Path, globs, excluded) -> None:
    tree = scan(layout, Selection(excludes=globs))
    assert reasons(tree.excluded) == {path: f"matches --exclude {glob!r}" for path, glob in excluded.items()}
    assert_accounted(layout, tree)


def test_an_excluded_folder_is_not_entered(layout: Path, monkeypatch) -> None:
    listed = []
    real = os.scandir
    monkeypatch.setattr(walk_module.os, "scandir", lambda path: listed.append(Path(path)) or real(path))
    scan(layout, Selection(excludes=("pkg",)))
    monkeypatch.setattr(walk_module.os, "scandir", real)
    assert layout / "tests" in listed
    assert not [path for path in listed if layout / "pkg" in [path, *path.parents]]


def test_a_folder_only_glob_leaves_files_of_that_name(tmp_path: Path) -> None:
    src = make(project(tmp_path), "tests", "pkg/tests/a.py")
    tree = scan(src, Selection(excludes=("tests/",)))
    assert files(tree) == ["tests"]
    assert reasons(tree.excluded) == {"pkg/tests": "matches --exclude 'tests/'"}


def test_include_takes_only_matching_files_and_lists_the_rest(layout: Path) -> None:
    tree = scan(layout, Selection(includes=("*.py",)))
    assert files(tree) == [
        "setup.py", "docs/conf.py", "pkg/m.py", "pkg/m_pb2.py", "pkg/tests/test_b.py", "tests/test_a.py",
    ]
    assert reasons(tree.excluded) == {"README.md": NOT_INCLUDED, "pkg/data/table.csv": NOT_INCLUDED}
    assert_accounted(layout, tree)


def test_include_by_path_and_exclude_together(layout: Path) -> None:
    tree = scan(layout, Selection(includes=("pkg/*",), excludes=("tests",)))
    assert files(tree) == ["pkg/m.py", "pkg/m_pb2.py", "pkg/data/table.csv"]
    assert reasons(tree.excluded)["pkg/tests"] == "matches --exclude 'tests'"
    assert reasons(tree.excluded)["setup.py"] == NOT_INCLUDED
    assert_accounted(layout, tree)


def test_default_excludes_come_before_include(tmp_path: Path) -> None:
    src = make(project(tmp_path), "a.py", "build/b.py", ".venv/c.py")
    tree = scan(src, Selection(includes=("*.py",)))
    assert files(tree) == ["a.py"]
    assert reasons(tree.excluded) == {".venv": "a default exclude (.venv)", "build": "a default exclude (build)"}


# --- .gitignore ---------------------------------------------------------------------------


@pytest.fixture
def checkout(tmp_path: Path, quiet_git) -> Path:
    """A git checkout: generated/ and *.log ignored, kept.log tracked all the same."""
    repo = make(
        project(tmp_path), "pkg/a.py", "pkg/out.log", "generated/big.py", "run.log", "kept.log", "whole/deep/c.py",
    )
    (repo / ".gitignore").write_text("generated/\n*.log\nwhole/\n")
    git("init", "-q", cwd=repo)
    git("add", ".gitignore", "pkg/a.py", cwd=repo)
    git("add", "-f", "kept.log", cwd=repo)
    return repo


@needs_git
def test_gitignored_files_and_folders_are_excluded_tracked_ones_kept(checkout: Path) -> None:
    tree = scan(checkout)
    assert reasons(tree.excluded) == {
        ".git": "version-control metadata",
        "generated": GITIGNORED,
        "pkg/out.log": GITIGNORED,
        "run.log": GITIGNORED,
        "whole": GITIGNORED,
    }
    assert files(tree) == [".gitignore", "kept.log", "pkg/a.py"]
    assert_accounted(checkout, tree)


@needs_git
def test_no_gitignore_takes_ignored_files(checkout: Path) -> None:
    tree = scan(checkout, Selection(gitignore=False))
    assert files(tree) == [
        ".gitignore", "kept.log", "run.log", "generated/big.py", "pkg/a.py", "pkg/out.log", "whole/deep/c.py",
    ]
    assert reasons(tree.excluded) == {".git": "version-control metadata"}


@needs_git
def test_gitignore_applies_when_src_is_a_subfolder_of_the_checkout(checkout: Path) -> None:
    tree = scan(checkout / "pkg")
    assert files(tree) == ["a.py"]
    assert reasons(tree.excluded) == {"out.log": GITIGNORED}


@needs_git
def test_an_ignored_folder_named_as_src_is_walked(checkout: Path) -> None:
    assert files(scan(checkout / "generated")) == ["big.py"]
    assert files(scan(checkout / "whole" / "deep")) == ["c.py"]  # git fails here: no gitignore


@needs_git
def test_outside_a_checkout_there_is_no_gitignore(tmp_path: Path, quiet_git) -> None:
    src = make(project(tmp_path), "a.log")
    (src / ".gitignore").write_text("*.log\n")
    assert files(scan(src)) == [".gitignore", "a.log"]


@needs_git
def test_without_git_on_path_there_is_no_gitignore(checkout: Path, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(make(tmp_path, "empty/") / "empty"))
    assert "run.log" in files(scan(checkout))


def fake_git(tmp_path: Path, monkeypatch, script: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f"#!/bin/sh\n{script}\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return tmp_path / "argv"


def test_git_failing_means_no_gitignore(tmp_path: Path, monkeypatch) -> None:
    src = make(project(tmp_path), "a.log")
    fake_git(tmp_path, monkeypatch, "echo 'fatal: detected dubious ownership' >&2; printf 'a.log\\0'; exit 128")
    assert files(scan(src)) == ["a.log"]


def test_git_does_not_look_into_top_folders_left_out_anyway(tmp_path: Path, monkeypatch) -> None:
    src = make(project(tmp_path), "a.py", "b.py", "myenv/pyvenv.cfg", "node_modules/x.js", "docs/x.py", "data/x.csv")
    argv = fake_git(tmp_path, monkeypatch, f'printf "%s\\n" "$@" > {tmp_path / "argv"}; printf "b.py\\0data/\\0"')
    tree = scan(src, Selection(excludes=("docs",)))
    assert files(tree) == ["a.py"]
    assert reasons(tree.excluded)["data"] == GITIGNORED and reasons(tree.excluded)["b.py"] == GITIGNORED
    arguments = argv.read_text().splitlines()
    assert arguments[arguments.index("--"):] == [
        "--", ".", ":(exclude,literal)docs", ":(exclude,literal)myenv", ":(exclude,literal)node_modules",
    ]
    assert "core.fsmonitor=false" in arguments
    assert_accounted(src, tree)


# --- the command line ---------------------------------------------------------------------


def test_selection_flags_parse_into_a_selection() -> None:
    parser = argparse.ArgumentParser()
    add_selection_arguments(parser)
    args = parser.parse_args(
        ["--exclude", "tests", "--exclude", "*_pb2.py", "--include", "*.py", "--no-gitignore", "--no-default-excludes"]
    )
    assert selection_from(args) == Selection(("tests", "*_pb2.py"), ("*.py",), gitignore=False, default_excludes=False)
    assert selection_from(parser.parse_args([])) == Selection()
    assert selection_from(argparse.Namespace()) == Selection()
    text = parser.format_help()
    for flag in ("--exclude GLOB", "--include GLOB", "--no-gitignore", "--no-default-excludes"):
        assert flag in text
