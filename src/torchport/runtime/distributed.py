"""`torchport run --distributed`: the script rewritten in memory by the distribute steps (as
`migrate --distributed` would, in CUDA's own dialect: the run-time patches then map it to the
target) and run as one rank; or, asked for N processes and not under a launcher, torchrun
started on this same command, so that each of its processes does so.

The rewritten script is compiled with the original's path and each statement carries the line
of the original it stands for (inserted lines: the statement they were put above), so that
tracebacks show the script's own lines."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import tokenize
import types

from torchport.distribute import Options, distribute_source
from torchport.distribute.lines import back, line_map
from torchport.errors import UsageError, internal_error
from torchport.runtime.autoload import RANKS_LOG_ENV
from torchport.runtime.main_module import execute



STOP_S = 60  # seconds torchrun has to stop its processes after Ctrl-C


def launch(nproc: int, argv: list[str], log: str) -> int:
    """torchrun on one machine with `nproc` processes, each running `torchport <argv>`."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc),
               "-m", "torchport", *argv]
    process = subprocess.Popen(command, env={**os.environ, RANKS_LOG_ENV: log})
    try:
        return process.wait()
    except KeyboardInterrupt:  # (torchrun has had the signal too: it stops its processes, then itself)
        try:
            process.wait(timeout=STOP_S)
        except (KeyboardInterrupt, subprocess.TimeoutExpired):
            process.kill()
        return 130


def runner(script: str, batch: str = "global"):
    """A function that runs `script`, distributed, as `__main__` (as runpy.run_path does); it
    says on stderr when the script was left as it was."""
    with open(script, "rb") as file:
        data = file.read()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read {script}: {error}") from None
    code, why = None, ""
    try:
        done = distribute_source(text, script, Options(batch=batch, entry=True))
        if done.changed:
            code = compile_at_original_lines(done.source, text, script)
        else:
            why = done.plan.already if done.plan is not None and done.plan.already else "nothing to change"
    except (Exception, RecursionError) as error:  # noqa: BLE001 (a step's bug: the script still runs, as it is)
        why = f"the rewrite failed: {internal_error(error)}"
    if code is None:
        code = compile(text, script, "exec", dont_inherit=True)
        if os.environ.get("RANK", "0") == "0":
            print(f"torchport run --distributed: {script} runs as it is ({why})", file=sys.stderr)

    def run() -> None:
        execute(code, script)

    return run


def compile_at_original_lines(source: str, original: str, path: str) -> types.CodeType:
    """`source` compiled, each node at the line of `original` it stands for."""
    tree = ast.parse(source, path)
    lines = line_map(original, source)
    new, old = source.splitlines(), original.splitlines()

    def kept(line: int) -> bool:  # (the rewritten line is the original's, so its columns hold there)
        return 0 < line <= len(new) and 0 < back(lines, line) <= len(old) and new[line - 1] == old[back(lines, line) - 1]

    for node in ast.walk(tree):
        if getattr(node, "lineno", None) is None:
            continue
        end_line = getattr(node, "end_lineno", None) or node.lineno
        if not (kept(node.lineno) and kept(end_line)):
            node.col_offset, node.end_col_offset = 0, 0
        start = back(lines, node.lineno)
        node.lineno, node.end_lineno = start, max(start, back(lines, end_line))
    return compile(tree, path, "exec", dont_inherit=True)
