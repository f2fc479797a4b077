"""NCCL's settings and CUDA_VISIBLE_DEVICES in shell launch scripts (`export NCCL_SOCKET_IFNAME=eth0`,
`CUDA_VISIBLE_DEVICES=0,1 torchrun ...`): the same answers as TP031 and TP008 give in Python
(rules/nccl_settings.py, rules/environment.py), for the scripts that start training.

A name is read as a whole word outside comments; its twin replaces it where the target has one,
and the others are rows, the script left as it is. On the device-agnostic target both are left
alone: NCCL and CUDA_VISIBLE_DEVICES are what it runs with on a GPU.
"""

from __future__ import annotations

import re

from torchport.apis.devices import CUDA_VISIBLE_DEVICES
from torchport.apis.distributed import NCCL_SETTING
from torchport.findings import Finding, Operation
from torchport.migrate.rules.environment import VisibleDevicesRule, unused_visible_devices, visible_devices_twin
from torchport.migrate.rules.nccl_settings import NcclSettingsRule, twin_setting, unused_setting

SHELL_SUFFIXES = (".sh", ".bash")
CODE = NcclSettingsRule.code
CODES = (CODE, VisibleDevicesRule.code)
# (set, exported or read: $NCCL_DEBUG, ${CUDA_VISIBLE_DEVICES})
WORD = re.compile(rf"(?<!\w)(?:{NCCL_SETTING.pattern}|{CUDA_VISIBLE_DEVICES})(?!\w)")


def applies(name: str, target) -> bool:
    return name.endswith(SHELL_SUFFIXES) and target.collective_settings is not None


def migrate_script(text: str, name: str, target, codes: tuple[str, ...] = CODES) -> tuple[str, list[Finding]]:
    """`text` with each NCCL setting, and CUDA_VISIBLE_DEVICES, renamed where `target` has a twin,
    and a row for every one (of the rules in `codes`)."""
    lines = text.splitlines(keepends=True)
    findings = []
    for number, line in enumerate(lines, start=1):
        code, comment = _split_comment(line)
        if "NCCL_" not in code and CUDA_VISIBLE_DEVICES not in code:
            continue

        def rename(match: re.Match, number=number) -> str:
            setting = match.group(0)
            rule = VisibleDevicesRule.code if setting == CUDA_VISIBLE_DEVICES else CODE
            if rule not in codes:
                return setting
            if rule == CODE:
                twin = target.collective_settings.get(setting)
                message = unused_setting(setting, target) if twin is None else twin_setting(setting, twin)
            else:
                twin = target.visible_devices_env
                message = unused_visible_devices(target) if twin is None else visible_devices_twin(twin)
            operation = Operation.NOTE if twin is None else Operation.MODIFY
            findings.append(Finding(name, number, number, rule, operation, message, api=setting))
            return setting if twin is None else twin

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
