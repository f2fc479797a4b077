"""Which entries of the input tree a migration takes, and why the others are left.

`scan` sorts every entry of SRC (file, folder, link, anything else) into exactly one of four
lists of a `Tree`, or leaves it below a folder that is in one of them (issue #12: every input
file is accounted for). A folder that is walked is accounted for by what it holds.

  files     regular files to migrate or copy (an unreadable one too: the engine says why)
  links     links to a file or folder inside SRC, with a relative text that reproduces them in
            OUT; a linked folder is walked once, in its own place. A link whose target is left
            out goes where its target went, with the target's reason
  skipped   what could not be taken: an unreadable folder, a loop of links, a link out of SRC
            or to nothing, a FIFO, socket or device
  excluded  what the selection leaves out on purpose, as linters choose files: default
            excludes (ruff's list; virtual and conda environments, whatever their name),
            .gitignore, --exclude, --include. A folder left out is one entry and is never
            entered: a 1 GB .venv costs its entry in its parent's listing (and two lstats when
            its name is not a default one), and git is told not to look into one at the top.

Version-control metadata (.git, .hg, .svn, and a submodule's .git file) and __pycache__ are
left out even with --no-default-excludes: they are never user code. They are still listed in
`excluded` (reasons "version-control metadata", "a bytecode cache"), so that the accounting has
no exception; a report that finds them noisy can drop the reasons in `ALWAYS_EXCLUDED`.

A folder named as SRC is always walked, even if it is an environment or ignored by git; the
selection applies to what lies below it.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from fnmatch import translate
from pathlib import Path

ALWAYS_EXCLUDED = {
    ".git": "version-control metadata",
    ".hg": "version-control metadata",
    ".svn": "version-control metadata",
    "__pycache__": "a bytecode cache",
}
# ruff's default `exclude` (folders only), plus the caches that are never code
DEFAULT_EXCLUDES = frozenset({
    ".bzr", ".direnv", ".eggs", ".git-rewrite", ".ipynb_checkpoints", ".mypy_cache", ".nox", ".pants.d",
    ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".tox", ".venv", "venv", ".vscode",
    "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages",
})
# a folder holding one of these is an environment, whatever its name
ENVIRONMENT_MARKERS = (("pyvenv.cfg", "a virtual environment"), ("conda-meta", "a conda environment"))

LINK_AWAY = "a link that leads out of the input (or nowhere): not followed"
LINK_LOOP = "a loop of links: not followed"
NOT_REGULAR = "not a regular file: not copied"
GITIGNORED = "ignored by .gitignore"
NOT_INCLUDED = "not matched by --include"

# variables that would make git answer about another repository than the one SRC is in
_GIT_REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX")


@dataclass(frozen=True)
class Selection:
    """How the user chose files."""

    excludes: tuple[str, ...] = ()  # --exclude GLOB
    includes: tuple[str, ...] = ()  # --include GLOB: when given, only files matching one are taken
    gitignore: bool = True  # --no-gitignore turns off
    default_excludes: bool = True  # --no-default-excludes turns off


@dataclass
class Tree:
    files: list[Path] = field(default_factory=list)  # relative, in walk order
    links: list[tuple[Path, str]] = field(default_factory=list)  # (relative, link text for OUT: relative)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (relative, reason): could not be taken
    excluded: list[tuple[str, str]] = field(default_factory=list)  # (relative, reason): left out on purpose


def scan(src: Path, selection: Selection = Selection()) -> Tree:
    """Every entry of `src` (resolved), sorted into a `Tree`. A file named as SRC is taken as it is."""
    if not src.is_dir():
        return Tree(files=[Path(src.name)])
    return _Scanner(src, selection).run()


# --- the command line -----------------------------------------------------------------------


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("choosing files (as linters do)")
    group.add_argument(
        "--exclude", action="append", default=[], metavar="GLOB",
        help="leave out files and folders whose path below SRC or whose name matches GLOB "
        "(e.g. tests, 'tests/*', '*_pb2.py'); a folder that matches is not entered. Repeatable",
    )
    group.add_argument(
        "--include", action="append", default=[], metavar="GLOB",
        help="take only the files whose path below SRC or whose name matches GLOB (e.g. '*.py'); "
        "the rest are listed as excluded. Applied after the other rules. Repeatable",
    )
    group.add_argument(
        "--no-gitignore", dest="gitignore", action="store_false",
        help="also take what .gitignore leaves out (by default git is asked, when SRC is in a checkout; "
        "tracked files are always taken)",
    )
    group.add_argument(
        "--no-default-excludes", dest="default_excludes", action="store_false",
        help="also enter the folders left out by default: virtual and conda environments, build, dist, "
        "node_modules, site-packages, tool caches (.git and __pycache__ stay out)",
    )


def selection_from(args: argparse.Namespace) -> Selection:
    return Selection(
        excludes=tuple(getattr(args, "exclude", None) or ()),
        includes=tuple(getattr(args, "include", None) or ()),
        gitignore=getattr(args, "gitignore", True),
        default_excludes=getattr(args, "default_excludes", True),
    )


# --- the scan -------------------------------------------------------------------------------


class _Globs:
    """--exclude or --include patterns, matched against a path relative to SRC and against a name.

    `*` matches "/" too (so "tests/*" covers all below tests). A leading "./" is dropped, a leading
    "**/" also matches at the top, and a pattern ending in "/" matches folders only."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = []
        for pattern in patterns:
            glob = pattern[2:] if pattern.startswith("./") else pattern
            folders_only = glob.endswith("/") and glob != "/"
            glob = glob.rstrip("/") or glob
            regex = translate(glob) + (f"|{translate(glob[3:])}" if glob.startswith("**/") else "")
            self.patterns.append((pattern, re.compile(regex), folders_only))

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def match(self, relative: str, name: str, folder: bool) -> str | None:
        """The first pattern that matches, as the user wrote it."""
        for pattern, regex, folders_only in self.patterns:
            if (folder or not folders_only) and (regex.match(relative) or regex.match(name)):
                return pattern
        return None


class _Scanner:
    def __init__(self, src: Path, selection: Selection) -> None:
        self.src = str(src)
        self.prefix = self.src.rstrip(os.sep) + os.sep
        self.selection = selection
        self.excludes = _Globs(selection.excludes)
        self.includes = _Globs(selection.includes)
        self.ignored_files: set[str] = set()
        self.ignored_folders: set[str] = set()
        if selection.gitignore:
            self.ignored_files, self.ignored_folders = _git_ignored(src, self._top_left_out())
        self.tree = Tree()
        self.files: list[str] = []
        self.walked: set[str] = set()  # folders listed, "" the root
        self.left_out: dict[str, tuple[list, str]] = {}  # relative -> (the list it went to, reason)
        self.pending: list[tuple[str, str, str]] = []  # links inside: (relative, text, target relative)

    def _top_left_out(self) -> list[str]:
        """Folders at the top of SRC left out whatever git says: git need not look into them
        (it walks an untracked folder that no .gitignore covers, such as an old-style .venv)."""
        try:
            with os.scandir(self.src) as listing:
                return sorted(
                    entry.name for entry in listing
                    if entry.is_dir(follow_symlinks=False)
                    and (self._folder_exclusion(entry.name, entry.name) or self._environment(entry.path))
                )
        except OSError:  # the walk will say why
            return []

    def run(self) -> Tree:
        folders = [""]
        while folders:  # depth first, in name order, as os.walk: a folder's files before its subfolders'
            folders.extend(reversed(self._list(folders.pop())))
        self.tree.files = [Path(relative) for relative in self.files]
        self._settle_links()
        return self.tree

    def _list(self, folder: str) -> list[str]:
        """Sort the entries of `folder` into the tree; the subfolders to walk next."""
        try:
            with os.scandir(os.path.join(self.src, folder)) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            self._leave(self.tree.skipped, folder or ".", _unreadable(error))
            return []
        self.walked.add(folder)
        subfolders = []
        for entry in entries:
            relative = f"{folder}/{entry.name}" if folder else entry.name
            try:
                if self._entry(entry, relative):
                    subfolders.append(relative)
            except OSError as error:  # the type was not in the listing, and lstat failed
                self._leave(self.tree.skipped, relative, _unreadable(error))
        return subfolders

    def _entry(self, entry: os.DirEntry, relative: str) -> bool:
        """Place one entry; True for a folder to walk."""
        if entry.is_symlink():
            self._link(entry.path, relative, entry.name)
        elif entry.is_dir(follow_symlinks=False):
            reason = self._folder_exclusion(relative, entry.name) or self._environment(entry.path)
            if reason is None:
                return True
            self._leave(self.tree.excluded, relative, reason)
        elif entry.is_file(follow_symlinks=False):
            reason = self._file_exclusion(relative, entry.name)
            if reason is None:
                self.files.append(relative)
            else:
                self._leave(self.tree.excluded, relative, reason)
        else:  # a FIFO, socket or device: reading it could block or never end
            self._leave(self.tree.skipped, relative, NOT_REGULAR)
        return False

    def _folder_exclusion(self, relative: str, name: str) -> str | None:
        if name in ALWAYS_EXCLUDED:
            return ALWAYS_EXCLUDED[name]
        if self.selection.default_excludes and name in DEFAULT_EXCLUDES:
            return f"a default exclude ({name})"
        if relative in self.ignored_folders or relative in self.ignored_files:
            return GITIGNORED
        pattern = self.excludes.match(relative, name, folder=True) if self.excludes else None
        return f"matches --exclude {pattern!r}" if pattern else None

    def _environment(self, path: str) -> str | None:
        """Why the folder at `path` is an environment to leave out; None when it is not one."""
        if self.selection.default_excludes:
            for marker, reason in ENVIRONMENT_MARKERS:
                if os.path.lexists(os.path.join(path, marker)):
                    return reason
        return None

    def _file_exclusion(self, relative: str, name: str) -> str | None:
        if name in ALWAYS_EXCLUDED:  # the .git file of a submodule or a worktree
            return ALWAYS_EXCLUDED[name]
        if relative in self.ignored_files:
            return GITIGNORED
        pattern = self.excludes.match(relative, name, folder=False) if self.excludes else None
        if pattern:
            return f"matches --exclude {pattern!r}"
        if self.includes and not self.includes.match(relative, name, folder=False):
            return NOT_INCLUDED
        return None

    def _link(self, path: str, relative: str, name: str) -> None:
        """A link inside SRC waits until the walk is over (its target must be taken too)."""
        try:
            info = os.stat(path)
        except OSError as error:
            self._leave(self.tree.skipped, relative, _broken_link(error))
            return
        target = os.path.realpath(path)
        if target != self.src and not target.startswith(self.prefix):
            self._leave(self.tree.skipped, relative, LINK_AWAY)
            return
        folder = stat.S_ISDIR(info.st_mode)
        reason = self._folder_exclusion(relative, name) if folder else self._file_exclusion(relative, name)
        if reason is not None:
            self._leave(self.tree.excluded, relative, reason)
            return
        text = os.path.relpath(target, os.path.dirname(path))
        self.pending.append((relative, text, os.path.relpath(target, self.src).replace(os.sep, "/")))

    def _settle_links(self) -> None:
        """Each link inside SRC whose target is taken goes to `links`; the others follow their target."""
        taken = set(self.files)
        for relative, text, target in self.pending:
            target = "" if target == "." else target
            if target in taken or target in self.walked:
                self.tree.links.append((Path(relative), text))
                continue
            where, reason = self._why_left_out(target)
            where.append((relative, f"a link to {target}, which is left out ({reason})"))

    def _why_left_out(self, target: str) -> tuple[list, str]:
        path = target
        while path:
            if path in self.left_out:
                return self.left_out[path]
            path = path.rpartition("/")[0]
        return self.tree.excluded, "not taken"

    def _leave(self, where: list, relative: str, reason: str) -> None:
        where.append((relative, reason))
        self.left_out[relative] = (where, reason)


def _unreadable(error: OSError) -> str:
    return f"could not be read: {error.strerror or error}"


def _broken_link(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return LINK_LOOP
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        return LINK_AWAY
    return _unreadable(error)


def git_environment() -> dict[str, str]:
    """The environment for asking git about the checkout a path is in (and only reading it)."""
    env = {name: value for name, value in os.environ.items() if name not in _GIT_REDIRECTS}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # a read: never rewrite the index
    return env


def _git_ignored(src: Path, left_out: list[str]) -> tuple[set[str], set[str]]:
    """(files, folders) below `src` that git ignores, relative to it; both empty when git is not
    installed, `src` is not in a work tree, or git fails. Tracked files are never listed. Git
    does not look into the folders `left_out` (relative to `src`)."""
    git = shutil.which("git")
    if git is None:
        return set(), set()
    env = git_environment()
    command = [
        git, "-c", "core.fsmonitor=false",  # the checkout's own config must not run a program
        "-C", str(src), "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory",
        "--", ".", *(f":(exclude,literal){name}" for name in left_out),
    ]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, env=env, check=False)
    except OSError:
        return set(), set()
    if done.returncode != 0:
        return set(), set()
    files, folders = set(), set()
    for raw in done.stdout.split(b"\0"):
        name = os.fsdecode(raw)
        if name.endswith("/"):
            folders.add(name.rstrip("/"))
        elif name:
            files.add(name)
    folders.discard(".")  # SRC itself is ignored: named explicitly, it is walked
    return files, folders
