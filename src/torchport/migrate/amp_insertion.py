"""`migrate --amp` for one file: where it trains in float32 (a backward and an optimizer step, no
mixed precision of its own), AMP is added first (mixed_precision/insert.py, apex's form), made
torch.amp's by the apex conversion for `--amp torch`, then the file goes on as any other (apex,
--distributed, the rules); the rows of what follows are mapped back to the lines of the file as read."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from torchport.apex_to_torch import driver
from torchport.errors import internal_error
from torchport.findings import Finding, Operation
from torchport.migrate.distributed import decoded, mapped_back
from torchport.distribute.lines import line_map
from torchport.migrate.source import FileResult
from torchport.mixed_precision.changes import APEX, NOTE, OFF, STEP, SUBJECTS
from torchport.apex_to_torch.changes import AMP_INITIALIZE, FALLBACK, LOSS_SCALING
from torchport.mixed_precision.insert import TRAINS, insert, mixed_precision_of

FORWARD = "the forward pass under "  # (the autocast region's row, apex_to_torch/autocast.py)


def insert_then_migrate(data: bytes, path: str, mode: str, migrate: Callable[[bytes], FileResult]) -> FileResult:
    """`data` with AMP added to its float32 training steps (`mode` torch or apex), then `migrate`d."""
    if mode == OFF or not TRAINS.search(data):
        return migrate(data)
    read = decoded(data) if mixed_precision_of(data) is None else None  # (never a second AMP)
    if read is None:
        return migrate(data)
    text, encoding = read
    try:
        rows, new = _inserted(text, path, mode)
    except (Exception, RecursionError) as error:  # noqa: BLE001 (a bug here costs the file its AMP only)
        return _noted(migrate(data), [_note(path, 0, f"not given mixed precision: {internal_error(error)}")])
    if new is None:
        return _noted(migrate(data), rows)
    try:
        rewritten = new.encode(encoding)
    except UnicodeEncodeError:
        why = f"not given mixed precision: the new text cannot be written in the file's encoding ({encoding})"
        return _noted(migrate(data), [_note(path, 0, why)])
    result = migrate(rewritten)
    if result.error is not None:
        why = f"not given mixed precision: the file with AMP could not be migrated ({result.error})"
        return _noted(migrate(data), [_note(path, 0, why)])
    lines = line_map(text, new, align_replaced=True)
    kept = [mapped_back(f, lines) for f in result.findings]
    return replace(result, findings=sorted(rows + kept, key=lambda f: (f.start_line, f.code)))


def _inserted(text: str, path: str, mode: str) -> tuple[list[Finding], str | None]:
    """(the rows, the text with AMP: None where no step got it). torch: apex's form converted to
    torch.amp's, all of it or nothing (a form the conversion would hand to the stand-in is left)."""
    inserted = insert(text, mode)
    rows = [_finding(path, change) for change in inserted.changes]
    if not inserted.changed:
        return rows, None
    if mode == APEX:
        return rows, inserted.source
    converted = driver.convert_source(inserted.source, path)
    if converted.way != "native":
        why = next((f.message for f in converted.findings if f.code == FALLBACK.code),
                   "the conversion found no native form")
        return [_note(path, 0, f"not given mixed precision: torch.amp's form could not be written ({why})")], None
    lines = line_map(text, inserted.source)
    return rows + [mapped_back(row, lines) for row in _torch_rows(converted.findings)], converted.source


def _torch_rows(findings: list[Finding]) -> list[Finding]:
    """The conversion's rows for what it wrote around the step (the forward under autocast, the
    scaler's step, update and unscale_), as --amp's: the rest stands for what insert added."""
    rows = []
    for row in findings:
        if row.code == AMP_INITIALIZE.code and row.message.startswith(FORWARD):
            message = "the forward pass under torch.amp.autocast"
            rows.append(replace(row, code=STEP.code, operation=Operation.MODIFY, message=message, api=STEP.subject))
        elif row.code == LOSS_SCALING.code and not row.message.startswith("with amp.scale_loss"):
            message = row.message.replace(", as apex skips it", "").replace("apex's scale_loss hands them back unscaled",
                                                                               "the clip reads true gradients")
            rows.append(replace(row, code=STEP.code, api=STEP.subject, message=message))
    return rows


def _finding(path: str, change) -> Finding:
    return Finding(path, change.start_line, change.end_line, change.code, change.operation, change.message,
                   api=change.api or SUBJECTS[change.code])


def _note(path: str, line: int, message: str) -> Finding:
    return Finding(path, line, line, NOTE.code, Operation.NOTE, message, api=NOTE.subject)


def _noted(result: FileResult, rows: list[Finding]) -> FileResult:
    if result.error is not None or not rows:
        return result
    return replace(result, findings=sorted(rows + result.findings, key=lambda f: (f.start_line, f.code)))

