"""`run_distributed.sh`: the launcher `migrate --distributed` writes beside a distributed entry
script. torchrun starts one process per device (the target's device count, read at run time),
on one machine or several (NNODES, NODE_RANK, MASTER_ADDR, MASTER_PORT), with the script's own
command line (command_line.py); what a target's own launchers set comes from targets/launch.py."""

from __future__ import annotations

import ast
import posixpath
import shlex
from typing import NamedTuple

from torchport.apis.distributed import CUDA_DIST_BACKEND
from torchport.distribute import command_line
from torchport.distribute.command_line import CommandLine
from torchport.targets import Target
from torchport.targets.launch import HOST_PROCESSES

NAME = "run_distributed.sh"
DEFAULT_PORT = 29500  # torchrun's own default


class Launcher(NamedTuple):
    name: str  # where it goes, in the tree (beside the script)
    script: str  # the entry script it starts, in the tree
    text: str
    command_line: CommandLine | None  # where its command line came from (None: the script alone)


def launcher_name(script: str, several: bool) -> str:
    """The launcher's name in the tree for `script`; `several`: the folder has other entry scripts."""
    folder, stem = posixpath.dirname(script), posixpath.splitext(posixpath.basename(script))[0]
    return posixpath.join(folder, f"run_distributed_{stem}.sh" if several else NAME)


def launcher(script: str, target: Target, name: str, found: CommandLine | None) -> Launcher:
    """The launcher `name` for `script` (both names in the tree) on `target`."""
    here = posixpath.dirname(name)
    if found is not None:
        run_from, spelled, arguments = found.folder, found.script, found.arguments
    else:
        run_from, spelled, arguments = posixpath.dirname(script), posixpath.basename(script), ""
    up = posixpath.relpath(run_from or ".", here or ".")
    arguments = _backend_for(arguments, target)
    command = " ".join(word for word in (shlex.quote(spelled), arguments, '"$@"') if word)
    return Launcher(name, script, _text(script, name, target, up, command, found), found)


def _backend_for(arguments: str, target: Target) -> str:
    """`--dist-backend 'nccl'` in a README's command line: the target's backend where it is one
    name (gloo on the CPU, hccl on the NPU); the migrated script's default was rewritten the same way."""
    try:
        backend = ast.literal_eval(target.dist_backend)
    except (ValueError, SyntaxError):
        return arguments  # (an expression, chosen at run time: the word is left, the script decides)
    if not isinstance(backend, str) or backend == CUDA_DIST_BACKEND:
        return arguments
    words = command_line.words(arguments)
    return " ".join(shlex.quote(backend) if command_line.unquoted(word) == CUDA_DIST_BACKEND else word for word in words)


def _text(script: str, name: str, target: Target, up: str, command: str, found: CommandLine | None) -> str:
    launch = target.launch
    shown = posixpath.basename(script)
    lines = [
        "#!/usr/bin/env bash",
        f"# Written by torchport migrate --distributed --target {target.name}: {shown} as one process per device,",
        "# started by torchrun (each process reads LOCAL_RANK, RANK and WORLD_SIZE from it).",
        "#",
        f"#   bash {posixpath.basename(name)} [more arguments for {shown}]",
        "#",
    ]
    if found is not None:
        lines.append(f"# The command line is the one at {found.where}, run from {found.folder or 'the top'} as it is there.")
    else:
        lines.append(f"# No command line for {shown} was found in the project's shell scripts or README: add its arguments.")
    devices = f"the {target.name.upper()} devices it has: {launch.count}" if launch.count else (
        f"{HOST_PROCESSES}: there are no devices to count")
    variables = [
        ("NPROC_PER_NODE", f"processes on this machine [{devices}]"),
        ("NNODES", "machines taking part [1]"),
        ("NODE_RANK", "this machine's number, 0 to NNODES-1 [0]"),
        ("MASTER_ADDR", "the address of machine 0, which every machine reaches [127.0.0.1]"),
        ("MASTER_PORT", f"a free port on machine 0 [{DEFAULT_PORT}]"),
        ("OMP_NUM_THREADS", "threads of each process [the cores / NPROC_PER_NODE]"),
    ]
    if target.visible_devices_env:
        variables.append((target.visible_devices_env, "the devices this machine may use, e.g. 0,1,2,3 [all]"))
    variables += [(setting.name, f"{setting.meaning} [{setting.default}]") for setting in launch.settings]
    if launch.bind_cores:
        variables.append(("BIND_CORES", "1: each process runs on its share of the CPU cores (taskset), 0: not bound [1]"))
    variables.append(("PYTHON", "the Python that has torch [python3]"))
    width = max(len(variable) for variable, _ in variables)
    lines.append("# Set these to change what it does (defaults in brackets):")
    lines += [f"#   {variable:<{width}}  {meaning}" for variable, meaning in variables]
    lines += [
        "# On several machines: run it on each, with the same NNODES, MASTER_ADDR and MASTER_PORT and its own NODE_RANK.",
        "set -e",
    ]
    if found is not None and found.placeholders:
        said = shlex.quote(" ".join(found.placeholders))
        lines += [
            f"# The command line of {found.where} has words to fill in: edit the last lines, then delete this one.",
            f'echo "$0: fill in the command line first (from {found.where}):" {said} >&2; exit 1',
        ]
    lines += [
        f'cd "$(dirname "$0")/{up}"' if up != "." else 'cd "$(dirname "$0")"',
        'PYTHON="${PYTHON:-python3}"',
    ]
    if launch.count:
        imports = ", ".join(["torch", *([target.setup_import] if target.setup_import else [])])
        probe = shlex.quote(f"import {imports}; print({launch.count})")
        lines.append(f'NPROC_PER_NODE="${{NPROC_PER_NODE:-$("$PYTHON" -c {probe})}}"')
    else:
        lines.append(f'NPROC_PER_NODE="${{NPROC_PER_NODE:-{HOST_PROCESSES}}}"')
    lines += [
        'if ! [ "$NPROC_PER_NODE" -ge 1 ] 2> /dev/null; then',
        '    echo "$0: no devices to start processes on (NPROC_PER_NODE=$NPROC_PER_NODE): set NPROC_PER_NODE" >&2',
        "    exit 1",
        "fi",
        'NNODES="${NNODES:-1}"',
        'NODE_RANK="${NODE_RANK:-0}"',
        'MASTER_ADDR="${MASTER_ADDR:-127.0.0.1}"',
        f'MASTER_PORT="${{MASTER_PORT:-{DEFAULT_PORT}}}"',
        "CORES=$(nproc)",
        "# (torchrun's own default is one thread a process)",
        'export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(( CORES / NPROC_PER_NODE > 0 ? CORES / NPROC_PER_NODE : 1 ))}"',
    ]
    if target.visible_devices_env:
        env = target.visible_devices_env
        lines.append(f'if [ -n "${{{env}:-}}" ]; then export {env}; fi')
    lines += [f'export {s.name}="${{{s.name}:-{s.default}}}"' for s in launch.settings]
    lines.append(
        'LAUNCH=(--nnodes "$NNODES" --node_rank "$NODE_RANK" --master_addr "$MASTER_ADDR" '
        '--master_port "$MASTER_PORT" --nproc_per_node "$NPROC_PER_NODE")'
    )
    if launch.bind_cores:
        lines += [
            'if [ "${BIND_CORES:-1}" = 1 ] && command -v taskset > /dev/null && [ "$CORES" -ge "$NPROC_PER_NODE" ]; then',
            "    # process i on cores i*K to i*K+K-1, K = the cores / the processes of this machine",
            "    export PYTHON CORES_PER_PROCESS=$(( CORES / NPROC_PER_NODE ))",
            '    exec "$PYTHON" -m torch.distributed.run "${LAUNCH[@]}" --no-python bash -c \\',
            "        'first=$(( LOCAL_RANK * CORES_PER_PROCESS )); "
            'exec taskset -c "$first-$(( first + CORES_PER_PROCESS - 1 ))" "$PYTHON" "$@"\' \\',
            f"        bash {command}",
            "fi",
        ]
    lines.append(f'exec "$PYTHON" -m torch.distributed.run "${{LAUNCH[@]}}" {command}')
    return "\n".join(lines) + "\n"
