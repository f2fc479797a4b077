"""One file's apex uses rewritten to native torch (CUDA's dialect), or the file pointed at the
stand-in package as a whole; the changes as report rows at the lines of the file as read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Literal

import libcst as cst

from torchport.apis import apex
from torchport.apex_to_torch import autocast, casts, imports, initialize, plan, references, replacements, scale_loss, state
from torchport.apex_to_torch.changes import Unconvertible
from torchport.apex_to_torch.fallback import to_compat
from torchport.apex_to_torch.reading import read
from torchport.distribute.changes import Change
from torchport.distribute.edits import Read
from torchport.distribute.lines import back, line_map
from torchport.errors import internal_error
from torchport.findings import Finding

# A file that never says apex is not read at all.
MENTIONS_APEX = re.compile(rb"\bapex\b")


@dataclass
class Converted:
    source: str  # the file's source, rewritten (itself when nothing changed)
    findings: list[Finding] = field(default_factory=list)  # codes TP300-TP307, at the lines of the file as read
    # "native": apex rewritten to torch; "compat": the file imports torchport.compat.apex instead;
    # "": no apex use, or not valid Python to LibCST
    way: Literal["native", "compat", ""] = ""

    @property
    def changed(self) -> bool:
        return any(f.operation.is_change for f in self.findings)


# Each step: (source, plan) -> (source, changes at the lines of the source it was given). Each reads
# what the ones before it left: the steps and the autocast regions before scale_loss is rewritten
# (they look for it), initialize last of amp (the others read its models), the imports at the end.
Step = Callable[[str, "plan.Plan"], "tuple[str, list[Change]]"]
AMP_CONTEXTS = frozenset({apex.DISABLE_CASTS, *apex.REGISTRATIONS})
# (step, the apex APIs it rewrites: a file that uses none of them skips it; None: every file)
STEPS: tuple[tuple[Step, frozenset[str] | None], ...] = (
    (casts.rewrite_casts, AMP_CONTEXTS),  # disable_casts -> autocast off; registrations dropped
    (state.rewrite_master_params, frozenset({apex.MASTER_PARAMS})),  # -> the optimizer's parameters, unscaled first
    (scale_loss.rewrite_steps, frozenset({apex.SCALE_LOSS})),  # optimizer.step() -> scaler.step(optimizer); update()
    (autocast.wrap_forward, frozenset({apex.SCALE_LOSS})),  # the forward pass under autocast
    (scale_loss.rewrite_scale_loss, frozenset({apex.SCALE_LOSS})),  # with amp.scale_loss(...) -> scaler.scale(loss)
    (state.rewrite_state, frozenset({apex.STATE_DICT, apex.LOAD_STATE_DICT})),  # amp state -> the scaler's
    (initialize.rewrite, frozenset({apex.INITIALIZE})),  # amp.initialize -> the scaler
    (replacements.rewrite_replacements, frozenset(references.REPLACEMENTS)),  # optimizers, parallel, normalization
    (imports.rewrite_imports, None),  # apex imports gone; the ones the native code reads added
)


def convert_source(source: str, path: str = "<string>") -> Converted:
    """`source` with its apex uses made native torch (in CUDA's dialect)."""
    if not MENTIONS_APEX.search(source.encode("utf-8", "surrogatepass")):
        return Converted(source)
    try:
        found = read(source)
    except (cst.ParserSyntaxError, RecursionError):
        return Converted(source)
    try:
        if not imports.apex_imports(found):
            return Converted(source)
        return _native(source, path, found)
    except Unconvertible as why:
        return _compat(source, path, why)
    except (Exception, RecursionError) as error:  # noqa: BLE001 (a step's bug costs the file its native form only)
        return _compat(source, path, Unconvertible(0, internal_error(error)))


def _compat(source: str, path: str, why: Unconvertible) -> Converted:
    text, changes = to_compat(source, why)
    return Converted(text, [_finding(path, c, None) for c in changes], "compat")


def _native(source: str, path: str, found: Read) -> Converted:
    used = references.uses(found)
    references.check(found, used)
    decided = plan.make(found, used)
    _check_sites(found, decided)
    if decided.scaler:
        decided.needs.add("torch")
    text, findings = source, []
    apis = {u.api for u in used}
    for step, wanted in STEPS:
        if wanted is not None and not apis & wanted:
            continue
        new, changes = step(text, decided)
        lines = line_map(source, text)
        findings += [_finding(path, c, lines) for c in changes]
        text = new
    left = read(text)
    if imports.apex_imports(left) or references.uses(left):
        raise Unconvertible(0, "apex names were left after the rewrite")
    findings.sort(key=lambda f: (f.start_line, f.code))
    return Converted(text, findings, "native")


def _check_sites(found: Read, decided: plan.Plan) -> None:
    """Every site rewritable before the first edit (the steps would stop half-way otherwise)."""
    for site in scale_loss.sites(found):
        scale_loss.check_branches(found, site, decided.condition)
        scale_loss.step_statements(found, site)
    if decided.autocast:
        autocast.regions(found, decided.models)


def _finding(path: str, change: Change, lines: list[int] | None) -> Finding:
    start, end = change.start_line, change.end_line
    if lines is not None:
        start, end = back(lines, start), back(lines, end)
    return Finding(path, start, max(start, end), change.code, change.operation, change.message, change.api)
