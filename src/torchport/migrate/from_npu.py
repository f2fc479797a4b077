"""`migrate --from npu` for one file: code written for the Ascend NPU (torch_npu) is rewritten into
CUDA's own dialect first (npu_to_cuda), then the apex conversion, --distributed and the rules run
on what that writes, as on any CUDA file; their rows, at lines of the converted text, are mapped
back to the lines of the file as read. A file that never says anything of the NPU is migrated as
before, byte for byte; a conversion that fails costs the file its conversion only (a row says
why, and the file is migrated as read).

The dialects a file can be written in are the targets' own names (`--from cuda`, `--from npu`):
the NPU's is what the npu target writes, read the other way.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable

from torchport.findings import Finding, Operation
from torchport.errors import internal_error
from torchport.migrate.distributed import decoded, mapped_back
from torchport.distribute.lines import line_map
from torchport.migrate.selection import npu_codes
from torchport.migrate.source import FileResult
from torchport.npu_to_cuda import driver
from torchport.npu_to_cuda.changes import NOTE
from torchport.npu_to_cuda.driver import MENTIONS_NPU
from torchport.targets import Target
from torchport.targets.cuda import TARGET as CUDA
from torchport.targets.npu import TARGET as NPU

FROM_CUDA, FROM_NPU = CUDA.name, NPU.name
SOURCES = (FROM_CUDA, FROM_NPU)


def refusal(source: str, target: Target) -> str | None:
    """Why `--from source --target target` cannot be asked (None where it can). CUDA code may
    go to cuda: nothing is rewritten by the rules there, but --distributed and --apex native are."""
    if source not in SOURCES:
        return f"--from {source}: choose one of {', '.join(SOURCES)}"
    if source != FROM_CUDA and source == target.name:
        return (f"--from {source} --target {target.name}: the code is already written for {target.name}; "
                f"choose the --target it should move to")
    return None


def convert_then_migrate(data: bytes, path: str, source: str, target: Target,
                         migrate: Callable[[bytes], FileResult]) -> FileResult:
    """`data` (bytes, any declared encoding) converted from the `source` dialect into CUDA's, then
    `migrate`d (as a CUDA file is: its apex, --distributed, the rules)."""
    if source != FROM_NPU or not MENTIONS_NPU.search(data):
        return migrate(data)
    read = decoded(data)
    if read is None:
        return migrate(data)
    text, encoding = read
    try:
        converted = driver.convert_source(text, path, target)
    except (Exception, RecursionError) as error:  # noqa: BLE001 (a bug in the conversion costs the file its conversion only)
        why = f"NPU code not converted: {internal_error(error)}"
        return _with_rows(migrate(data), [_note(path, why)])
    if not converted.changed:
        return _with_rows(migrate(data), list(converted.findings))
    try:
        rewritten = converted.source.encode(encoding)
    except UnicodeEncodeError:
        why = f"NPU code not converted: the converted text cannot be written in the file's encoding ({encoding})"
        return _with_rows(migrate(data), [_note(path, why)])
    result = migrate(rewritten)
    if result.error is not None:
        why = f"NPU code not converted: the converted file could not be migrated ({result.error})"
        return _with_rows(migrate(data), [_note(path, why)])
    lines = line_map(text, converted.source, align_replaced=True)  # (a kernel's definition inserted among rewritten lines)
    findings = list(converted.findings) + [mapped_back(finding, lines) for finding in result.findings]
    return replace(result, findings=_in_order(findings), suppressed=[mapped_back(f, lines) for f in result.suppressed])


def converted(findings: list[Finding]) -> bool:
    """Whether a file's rows say the NPU conversion changed it."""
    codes = npu_codes()
    return any(f.code in codes and f.operation.is_change for f in findings)


def _with_rows(result: FileResult, rows: list[Finding]) -> FileResult:
    if result.error is not None or not rows:  # (a file copied unchanged and listed as skipped: no rows of its own)
        return result
    return replace(result, findings=_in_order(rows + result.findings))


def _in_order(findings: list[Finding]) -> list[Finding]:
    """By line, without the migration's unknown-API rows for what the conversion listed already as
    torch_npu's (torch.dropout_with_byte_mask: no torch API, nor a misspelt one)."""
    listed = {(f.start_line, f.api) for f in findings if f.operation is Operation.UNSUPPORTED and f.code in npu_codes()}
    kept = [f for f in findings if not (f.operation is Operation.UNKNOWN and (f.start_line, f.api) in listed)]
    return sorted(kept, key=lambda f: (f.start_line, f.code))


def _note(path: str, message: str) -> Finding:
    return Finding(path, 0, 0, NOTE.code, Operation.NOTE, message, api=NPU.setup_import or "")


# --- is a tree NPU code? (`migrate` without --from npu says so) ----------------------------------

# What the npu target writes into a file it migrates: its setup import, its device module, its
# tensor method. A file that says one of them and never CUDA's device type was written for the NPU
# (one that says both is CUDA code with a bridge, transfer_to_npu's: migrated as CUDA code).
_NPU_SAYS = re.compile(b"|".join([
    rb"\b%s\b" % re.escape(NPU.setup_import.encode()),
    rb"\b%s\b" % re.escape(NPU.device_module.encode()),
    rb"\.%s\(" % re.escape(NPU.tensor_method.encode()),
]))
_CUDA_SAYS = re.compile(rb"\b%s\b" % re.escape(CUDA.device_type.encode()))


def is_npu_code(data: bytes) -> bool:
    """Whether a file uses torch_npu (imports it, calls `.npu(` or `torch.npu`) and never CUDA."""
    return _NPU_SAYS.search(data) is not None and _CUDA_SAYS.search(data) is None


def npu_hint(sources: str, npu_files: int, python_files: int) -> str:
    """The line `migrate` prints (on stderr) for a tree that looks like NPU code."""
    return (f"{sources} looks like NPU code ({npu_files} of {python_files} files use {NPU.setup_import}); "
            f"migrate it with --from {FROM_NPU}")
