"""NCCL's settings in shell launch scripts (`export NCCL_SOCKET_IFNAME=eth0`, `NCCL_DEBUG=INFO torchrun ...`):
the same answer as TP031 gives in Python (rules/nccl_settings.py), for the scripts that start training.

A name is read as a whole word outside comments; its twin replaces it where the target has one,
and the others are rows, the script left as it is.
"""

from __future__ import annotations

import re

from torchport.apis.distributed import NCCL_SETTING
from torchport.findings import Finding, Operation
from torchport.migrate.rules.nccl_settings import NcclSettingsRule, twin_setting, unused_setting

SHELL_SUFFIXES = (".sh", ".bash")
CODE = NcclSettingsRule.code
WORD = re.compile(rf"(?<!\w){NCCL_SETTING.pattern}(?!\w)")  # (set, exported or read: $NCCL_DEBUG)


def applies(name: str, target) -> bool:
    return name.endswith(SHELL_SUFFIXES) and target.collective_settings is not None


def migrate_script(text: str, name: str, target) -> tuple[str, list[Finding]]:
    """`text` with each NCCL setting that has a twin on `target` renamed, and a row for every one."""
    lines = text.splitlines(keepends=True)
    findings = []
    for number, line in enumerate(lines, start=1):
        code, comment = _split_comment(line)
        if "NCCL_" not in code:
            continue

        def rename(match: re.Match, number=number) -> str:
            setting = match.group(0)
            twin = target.collective_settings.get(setting)
            if twin is None:
                findings.append(Finding(name, number, number, CODE, Operation.NOTE, unused_setting(setting, target), api=setting))
                return setting
            findings.append(Finding(name, number, number, CODE, Operation.MODIFY, twin_setting(setting, twin), api=setting))
            return twin

        lines[number - 1] = WORD.sub(rename, code) + comment
    return "".join(lines), findings


def _split_comment(line: str) -> tuple[str, str]:
    """(the code, the comment) of a shell line: a `#` that starts a word, outside quotes."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index], line[index:]
    return line, ""
