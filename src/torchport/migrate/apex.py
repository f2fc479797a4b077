"""`migrate --apex` for one file. native: its apex uses are rewritten to native torch first (in
CUDA's own dialect, apex_to_torch), then --distributed and the migration run on what that
writes, and their rows, at lines of the converted text, are mapped back to the lines of the file
as read. keep: apex stays as written (a target with an apex build of its own: Ascend's) and the
file gets a row saying what that asks of the target. A file that never says apex is migrated as
before, byte for byte; a conversion that fails costs the file its conversion only."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Callable

from torchport.apex_to_torch import driver
from torchport.apex_to_torch.changes import FUSED_OPTIMIZERS, NOTE
from torchport.apex_to_torch.driver import MENTIONS_APEX
from torchport.apis.apex import APEX, in_build
from torchport.migrate.rules.apex_advice import ApexAdvice, ascend_optimizer
from torchport.findings import Finding, Operation
from torchport.errors import internal_error
from torchport.migrate.distributed import decoded, mapped_back
from torchport.distribute.lines import line_map
from torchport.migrate.source import FileResult
from torchport.pyast import parse_quietly
from torchport.targets import Target

ADVICE_CODE = ApexAdvice.code
NATIVE, KEEP = "native", "keep"
MODES = (NATIVE, KEEP)
KEPT = "kept"  # FileResult.apex of a file whose apex stays (beside the conversion's "native" and "compat")


def default_mode(target: Target) -> str:
    """Where the target has an apex of its own, or is CUDA itself (where apex builds), the script
    keeps it; elsewhere apex cannot be installed (it builds only for CUDA), so it is converted."""
    return KEEP if target.keeps_apex or target.runs_cuda_code else NATIVE


def convert_then_migrate(data: bytes, path: str, mode: str, target: Target, migrate: Callable[[bytes], FileResult]) -> FileResult:
    """`data` (bytes, any declared encoding) with its apex converted (`mode` native) or kept, then
    `migrate`d (as a file is without apex: --distributed, then the rules)."""
    if not MENTIONS_APEX.search(data):
        return migrate(data)
    if mode == KEEP and not target.keeps_apex:
        rows = _kept_rows(data, path, target)
        return _noted(migrate(data), rows, KEPT if rows else "")
    read = decoded(data)
    if read is None:
        return migrate(data)
    text, encoding = read
    keep = target.apex_build if mode == KEEP else ()  # (what the target's own apex has stays; the rest is native)
    try:
        converted = driver.convert_source(text, path, keep)
    except (Exception, RecursionError) as error:  # noqa: BLE001 (a bug in the conversion costs the file its conversion only)
        why = f"apex not converted: {internal_error(error)}"
        return _unconverted(data, path, target, why, migrate)
    if not converted.changed:
        rows = list(converted.findings)
        line = apex_import_line(data)
        if keep:
            rows += _kept_rows(data, path, target)
        elif line is not None and not any(f.code == NOTE.code for f in rows):  # (never silently left importing apex)
            rows.append(_note(path, line, "apex left as it was: the conversion had nothing to rewrite" + _still_imports(target)))
        return _noted(migrate(data), rows, KEPT if line is not None else "")
    try:
        rewritten = converted.source.encode(encoding)
    except UnicodeEncodeError:
        why = f"apex not converted: the converted text cannot be written in the file's encoding ({encoding})"
        return _unconverted(data, path, target, why, migrate)
    result = migrate(rewritten)
    if result.error is not None:
        why = f"apex not converted: the converted file could not be migrated ({result.error})"
        return _unconverted(data, path, target, why, migrate)
    lines = line_map(text, converted.source)
    findings = converted.findings + [mapped_back(finding, lines) for finding in result.findings]
    way = converted.way
    if keep:
        findings += _twin_advice(converted.findings, target)
    if keep and apex_import_line(rewritten) is not None:  # (the names the target's own apex has are left)
        findings += _kept_rows(data, path, target)
        way = way if way == driver.COMPAT_WAY else KEPT
    return replace(result, findings=sorted(findings, key=lambda f: (f.start_line, f.code)), apex=way)


def _unconverted(data: bytes, path: str, target: Target, why: str, migrate: Callable[[bytes], FileResult]) -> FileResult:
    """The file migrated as read, its apex left as it was, with a row saying why."""
    line = apex_import_line(data)
    return _noted(migrate(data), [_note(path, 0, why + _still_imports(target))], KEPT if line is not None else "")


def _kept_rows(data: bytes, path: str, target: Target) -> list[Finding]:
    """A row where a kept file imports apex: what that asks of the target."""
    line = apex_import_line(data)
    if line is None:
        return []
    if target.keeps_apex:
        why = (f"apex kept (--apex keep) where {target.name}'s own apex build (Ascend's) has it: "
               f"{_build_names(target)}; install that apex; the rest is rewritten to native torch")
    elif target.runs_cuda_code:  # (keep is the default there: apex builds for CUDA)
        why = "apex kept: NVIDIA's apex builds for CUDA; --apex native rewrites it to torch.amp instead"
    else:
        why = (f"apex kept (--apex keep): apex must be installed for {target.name} (it builds only for CUDA); "
               "--apex native rewrites it to torch.amp instead")
    return [_note(path, line, why)]


def _twin_advice(rows: list[Finding], target: Target) -> list[Finding]:
    """TP117 where an apex CUDA optimizer the target's own apex lacks was rewritten to torchport.optim's
    and that apex has an NpuFused twin of it (FusedAdam -> apex.optimizers.NpuFusedAdamW)."""
    advice = []
    for row in rows:
        native = row.message.split(" -> ", 1)[1] if row.code == FUSED_OPTIMIZERS.code and " -> " in row.message else ""
        twin = ascend_optimizer(native) if native.startswith("torchport.optim.") else None
        if twin is not None and in_build(twin, target.apex_build):
            advice.append(Finding(row.file, row.start_line, row.end_line, ADVICE_CODE, Operation.PERFORMANCE,
                                  f"use {twin}: {target.name}'s own apex (Ascend's) fuses the same update, with "
                                  "combine_grad=True in amp.initialize", api=row.api))
    return advice


def _build_names(target: Target) -> str:
    """`apex.amp, apex.contrib.combine_tensors, apex.optimizers.NpuFused*`."""
    names = [name for name in target.apex_build if not name.startswith(f"{APEX}.optimizers.NpuFused")]
    fused = len(names) < len(target.apex_build)
    return ", ".join(names + ([f"{APEX}.optimizers.NpuFused*"] if fused else []))


def _still_imports(target: Target) -> str:
    have = "install Ascend's apex" if target.keeps_apex else f"apex must be installed for {target.name} (it builds only for CUDA)"
    return f"; the file still imports apex: {have}"


def _noted(result: FileResult, rows: list[Finding], way: str) -> FileResult:
    if result.error is not None:  # (copied unchanged and listed as skipped: no rows of its own)
        return result
    if not rows:
        return replace(result, apex=way)
    findings = sorted(rows + result.findings, key=lambda f: (f.start_line, f.code))
    return replace(result, findings=findings, apex=way)


def _note(path: str, line: int, message: str) -> Finding:
    return Finding(path, line, line, NOTE.code, Operation.NOTE, message, api=APEX)


def apex_import_line(data: bytes) -> int | None:
    """The first line that imports apex (`import apex.amp`, `from apex import amp`, in a `try:`
    or a function too); None where none does or Python cannot read the file."""
    tree = parse_quietly(data)
    if tree is None:
        return None
    lines = [node.lineno for node in ast.walk(tree) if _imports_apex(node)]
    return min(lines, default=None)


def _imports_apex(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(_is_apex(alias.name) for alias in node.names)
    return isinstance(node, ast.ImportFrom) and not node.level and _is_apex(node.module or "")


def _is_apex(module: str) -> bool:
    return module == APEX or module.startswith(f"{APEX}.")
