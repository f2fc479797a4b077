"""What a step did to a file, at lines of the text it was given (the driver maps them back to the
file as read)."""

from __future__ import annotations

from typing import NamedTuple

from torchport.findings import Code, Operation, subjects, titles


class Change(NamedTuple):
    start_line: int
    end_line: int
    code: str  # TP2xx: which step (CODES below)
    operation: Operation  # INSERT / MODIFY / DELETE for edits; NOTE / PERFORMANCE for what is left to the user
    message: str
    api: str = ""


PROCESS_GROUP = Code("TP201", "distributed: process group and device of each process", "process group")
LOADERS = Code("TP202", "distributed: a DistributedSampler on the training loaders", "DistributedSampler")
MODEL = Code("TP203", "distributed: the model wrapped in DistributedDataParallel", "DistributedDataParallel")
LAUNCHER = Code("TP204", "distributed: processes started by the launcher, not mp.spawn", "mp.spawn")
RANK_ZERO_ONLY = Code("TP205", "distributed: rank 0 alone saves and prints", "rank 0")
BATCH_SIZE = Code("TP206", "distributed: batch size and learning rate across processes", "batch size")
NOTE = Code("TP200", "distributed: files left as they were", "--distributed")

CODES = titles((PROCESS_GROUP, LOADERS, MODEL, LAUNCHER, RANK_ZERO_ONLY, BATCH_SIZE, NOTE))
SUBJECTS = subjects((NOTE, PROCESS_GROUP, LOADERS, MODEL, LAUNCHER, RANK_ZERO_ONLY, BATCH_SIZE))
