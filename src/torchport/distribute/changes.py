"""What a step did to a file, at lines of the text it was given (the driver maps them back to the
file as read)."""

from __future__ import annotations

from typing import NamedTuple

from torchport.findings import Operation


class Change(NamedTuple):
    start_line: int
    end_line: int
    code: str  # TP2xx: which step (CODES below)
    operation: Operation  # INSERT / MODIFY / DELETE for edits; NOTE / PERFORMANCE for what is left to the user
    message: str
    api: str = ""


# The distributed steps' codes, with the few words the terminal summary prints for each.
CODES = {
    "TP201": "distributed: process group and device of each process",
    "TP202": "distributed: a DistributedSampler on the training loaders",
    "TP203": "distributed: the model wrapped in DistributedDataParallel",
    "TP204": "distributed: processes started by the launcher, not mp.spawn",
    "TP205": "distributed: rank 0 alone saves and prints",
    "TP206": "distributed: batch size and learning rate across processes",
    "TP200": "distributed: files left as they were",
}
# What a row of each code is about, for the OP column of a row that names no API of its own.
SUBJECTS = {
    "TP200": "--distributed",
    "TP201": "process group",
    "TP202": "DistributedSampler",
    "TP203": "DistributedDataParallel",
    "TP204": "mp.spawn",
    "TP205": "rank 0",
    "TP206": "batch size",
}
