"""The command line a project runs its training script with, found in its shell scripts and in
the code blocks of its markdown (a README's `python train.py --epochs 90 data/`), so that the
launcher (launcher.py) starts the script with the same arguments rather than a placeholder."""

from __future__ import annotations

import posixpath
import re
from typing import NamedTuple

# One shell word, its quotes and escapes kept (the launcher writes it back as it was).
# A README's `[imagenet-folder with train and val folders]` is one word: the reader fills it in whole.
_WORD = re.compile(r"""(?:(?<![^\s])\[[^\]\n]*\](?![^\s])|[^\s'"\\]|\\.|'[^']*'|"(?:[^"\\]|\\.)*")+""")
# An argument asking for the script's own multi-process mode (`--multiprocessing-distributed`):
# a line that has one runs the mode whose mp.spawn the launcher's processes replace.
_DISTRIBUTED_FLAG = re.compile(r"^--?[\w-]*distributed[\w-]*$")
# What ends a command: a pipe, a list, a redirection, a comment (not a `<placeholder>`).
_END = re.compile(r"^(?:\|\|?|&&?|;|\d*>.*|&>.*|<(?![^<>\s]+>$).*|#.*)$")
# What a README writes for the reader to fill in: <name>, [imagenet-folder], /path/to/data.
_PLACEHOLDER = re.compile(r"^<[^<>]+>$|^\[.*\]$|^\[|\]$|path/to\b|^\.\.\.$")
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)*)?$")
_LAUNCHERS = {"torchrun", "deepspeed", "accelerate"}  # (their own options come before the script)
_FENCE = re.compile(r"^\s*(```|~~~)")
# An indented code line of markdown (or reStructuredText's code block) that runs something.
_COMMAND_START = re.compile(r"^(?:\w+=\S*\s+)*(?:python[\d.]*|torchrun|nohup|\S*/python[\d.]*)\s")
SHELL_SUFFIXES = (".sh", ".bash")
MARKDOWN_SUFFIXES = (".md", ".markdown", ".rst", ".txt")
MAX_TEXT = 1 << 20  # bytes of a shell script or markdown file read: longer ones are not documentation


class CommandLine(NamedTuple):
    where: str  # the file and line it was found at ("README.md:12")
    folder: str  # the folder it runs from (that of the file it was found in), "" for the top
    script: str  # the script, as the line spells it, from that folder
    arguments: str  # the words after the script, as written ("" where it takes none)
    placeholders: tuple[str, ...] = ()  # words of them the reader was to fill in (<name>, /path/to/data)


def is_documentation(name: str) -> bool:
    """Whether the file `name` may hold a command line: a shell script or markdown."""
    return name.lower().endswith(SHELL_SUFFIXES + MARKDOWN_SUFFIXES)


def find(script: str, texts: dict[str, str]) -> CommandLine | None:
    """How `script` (its name in the tree, posix) is run in `texts` (name in the tree -> text of a
    shell script or markdown file): the line that names the very file from its own folder first,
    then one that names a file of the same name; one that asks for the script's own distributed
    mode (`--multiprocessing-distributed --world-size 1 --rank 0`: the launcher's processes take
    the place of its mp.spawn) before one that does not; shell scripts before markdown; the first such."""
    best: tuple | None = None
    for name, text in texts.items():
        shell = name.lower().endswith(SHELL_SUFFIXES)
        folder = posixpath.dirname(name)
        for number, line in _command_lines(text, shell):
            found = _run_of(line, script, folder)
            if found is None:
                continue
            exact, spelled, arguments, at = found
            distributed = any(_DISTRIBUTED_FLAG.match(_unquoted(word)) for word in arguments)
            rank = (0 if exact else 1, 0 if distributed else 1, 0 if shell else 1, number)
            if best is None or rank < best[0]:
                placeholders = tuple(word for word in arguments if _PLACEHOLDER.search(_unquoted(word)))
                best = rank, CommandLine(f"{name}:{number}", at if exact else posixpath.dirname(script),
                                         spelled if exact else posixpath.basename(script), " ".join(arguments),
                                         placeholders)
    return best[1] if best else None


def _command_lines(text: str, shell: bool):
    """(line number, command) for each command of a shell script, or of a markdown file's code
    blocks (fenced, or indented lines that run Python, and its `$ ...` lines); a line ending in a
    backslash goes on in the next."""
    fenced = False
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not shell and _FENCE.match(line):
            fenced = not fenced
            continue
        stripped = line.strip()
        if not shell and not fenced and not pending:
            indented = line.startswith(("    ", "\t")) and _COMMAND_START.match(stripped)
            if not (stripped.startswith("$ ") or indented):
                continue
        stripped = stripped.removeprefix("$ ")
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        yield start, pending + stripped
        pending = ""
    if pending:
        yield start, pending


def _run_of(line: str, script: str, folder: str) -> tuple[bool, str, list[str], str] | None:
    """(whether the line names `script` itself, the script as spelled, the arguments after it,
    the folder it runs from: `folder`, or where a `cd DIR &&` before it goes) where `line` runs a
    Python file named like `script`; else None."""
    words = [match.group() for match in _WORD.finditer(line)]
    runner = False
    for index, word in enumerate(words):
        if _END.match(word):
            runner = False
            continue
        plain = _unquoted(word)
        base = posixpath.basename(plain)
        if plain == "cd" and index + 2 < len(words) and words[index + 2] == "&&":
            folder = posixpath.normpath(posixpath.join(folder, _unquoted(words[index + 1]))).removeprefix(".")
        if _PYTHON.match(base) or base in _LAUNCHERS:
            runner = True
            continue
        if runner and plain.endswith(".py") and base == posixpath.basename(script):
            exact = posixpath.normpath(posixpath.join(folder, plain)) == posixpath.normpath(script)
            return exact, plain, _arguments(words[index + 1 :]), folder
    return None


def _arguments(words: list[str]) -> list[str]:
    kept = []
    for word in words:
        if _END.match(word):
            break
        if word.endswith(";") and not word.endswith("\\;"):
            kept.append(word[:-1])
            break
        kept.append(word)
    return [word for word in kept if word]


def words(text: str) -> list[str]:
    """The shell words of `text`, quotes kept (a `[placeholder in brackets]` is one)."""
    return [match.group() for match in _WORD.finditer(text)]


def unquoted(word: str) -> str:
    return _unquoted(word)


def _unquoted(word: str) -> str:
    return re.sub(r"""\\(.)|'([^']*)'|"((?:[^"\\]|\\.)*)\"""", lambda m: m.group(1) or m.group(2) or m.group(3) or "", word)
