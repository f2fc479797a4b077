"""The steps of --distributed, in order, over one file's source; their changes as report rows at
the lines of the file as read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Literal, NamedTuple

import libcst as cst

from torchport.distribute import detect, loaders, model, rank_zero, setup, spawn
from torchport.distribute.changes import SUBJECTS, Change
from torchport.distribute.edits import Read
from torchport.distribute.lines import back, line_map
from torchport.layout import Layout
from torchport.findings import Finding



@dataclass(frozen=True)
class Options:
    # "global": the batch the script asks for is split across the processes (each takes
    # batch // WORLD_SIZE), so N cards train as one did; "per-rank": each process keeps the whole
    # batch and the learning rate is scaled by WORLD_SIZE instead.
    batch: Literal["global", "per-rank"] = "global"
    # Whether the file is a training entry script (None: decided from the file, detect.py).
    entry: bool | None = None


@dataclass
class Distributed:
    source: str  # the file's source, rewritten (itself when nothing changed)
    findings: list[Finding] = field(default_factory=list)  # at the lines of the file as read
    plan: detect.Plan | None = None  # what detect.read found (None: not valid Python)
    # the layout of LibCST's tree of `source` as the steps read or made it (each node held once;
    # `laid_out.module` is the tree), for the migration to read rather than parse again (None:
    # they hold none)
    laid_out: Layout | None = None

    @property
    def changed(self) -> bool:
        return any(f.operation.is_change for f in self.findings)


class Distribution(NamedTuple):
    """What --distributed made of one file (summary.json, and whether a launcher goes beside it)."""

    entry: bool  # a training entry script (detected, or named by --entry)
    distributed: bool  # the steps changed it
    left_alone: str = ""  # an entry script not distributed: why


# Each step: (source, plan, options) -> (source, changes at the lines of the source it was given).
Step = Callable[[str, "detect.Plan", Options], "tuple[str, list[Change]]"]
STEPS: tuple[Step, ...] = (
    spawn.launch_in_place,  # mp.spawn(fn, ...) -> fn(LOCAL_RANK, ...)
    model.wrap_model,  # DataParallel -> DDP; DDP after the model is on its device (before the loaders: see plan.unwrapped)
    loaders.shard_loaders,  # DistributedSampler, set_epoch, the batch split (or the LR scaled); none without a wrapped model
    rank_zero.rank_zero,  # saves and progress on rank 0; a barrier before a checkpoint is read
    setup.insert_setup,  # LOCAL_RANK / RANK / WORLD_SIZE, set_device, the process group (last: it reads what the others did)
)


def distribute_source(source: str, path: str = "<string>", options: Options = Options()) -> Distributed:
    """`source` made to run as one of N processes, when it is a training entry script that is
    not distributed already (detect.py says which); otherwise unchanged, with a row saying why."""
    try:
        done = _distribute(source, path, options)
        done.laid_out = Read.laid_out(done.source)
        return done
    finally:
        Read.forget()


def _distribute(source: str, path: str, options: Options) -> Distributed:
    try:
        plan = detect.read(Read.of(source), options)
    except cst.ParserSyntaxError:
        return Distributed(source)
    findings = [_finding(path, change, None) for change in plan.notes]
    if not plan.to_distribute:
        if plan.trainer_module and not plan.already:
            text, changes = rank_zero.in_trainer_module(source, options)
            findings += [_finding(path, change, None) for change in changes]
            return Distributed(text, sorted(findings, key=lambda f: (f.start_line, f.code)), plan)
        return Distributed(source, findings, plan)
    text = source
    for step in STEPS:
        if not plan.single_card and step is not spawn.launch_in_place:
            continue  # distributed already: only its mp.spawn changes (the names the others read are not bound)
        new, changes = step(text, plan, options)
        if changes:  # (at lines of the text this step saw: mapped back to the file as read)
            lines = None if text == source else line_map(source, text)
            findings += [_finding(path, change, lines) for change in changes]
        text = new
    findings.sort(key=lambda f: (f.start_line, f.code))
    return Distributed(text, findings, plan)


def _finding(path: str, change: Change, lines: list[int] | None) -> Finding:
    start, end = (change.start_line, change.end_line) if lines is None else (back(lines, change.start_line), back(lines, change.end_line))
    return Finding(path, start, max(start, end), change.code, change.operation, change.message,
                   change.api or SUBJECTS.get(change.code, ""))
