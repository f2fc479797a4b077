"""A dump on disk: DIR/dump.json (the settings, the steps, one record per tensor: a module call's,
or a torch call's, which has an `api`), DIR/samples.pt (every record's sample, one float32 tensor;
a record's `sample` is its index) and, with `dump --tensors`, DIR/tensors.pt (the whole tensors
kept, a list in their own dtypes; a record's `tensor` is its index).

Schema 2 added the torch calls' records and tensors.pt; a schema 1 dump (module calls only) is
read as one whose records are all module calls'."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from torchport.errors import UsageError

SCHEMA = "torchport-dump/2"
READABLE = ("torchport-dump/1", SCHEMA)
RECORDS, SAMPLES, TENSORS = "dump.json", "samples.pt", "tensors.pt"


@dataclass
class Dump:
    folder: str
    settings: dict
    steps: list[dict]
    records: list[dict]
    samples: list  # float32 tensors, by record["sample"]
    ended: str = ""
    tensors: list = field(default_factory=list)  # whole tensors, by record["tensor"]


def entry_name(step: int, phase: str, module: str, api: str, call: int, output: int) -> str:
    """'step 1 forward Net.fc2', 'step 2 backward torch.nn.functional.gelu in Net.mlp call 1'."""
    where = f"{api} in {module}" if api and module else api or module
    return f"step {step + 1} {phase} {where}{f' call {call}' if call else ''}{f' output {output}' if output else ''}"


def record_name(record: dict) -> str:
    return entry_name(record["step"], record["phase"], record["module"], record.get("api", ""), record["call"],
                      record["output"])


def write(folder: str, dump: Dump) -> int:
    """Write `dump` into `folder`; the bytes written."""
    import torch

    lengths = [len(sample) for sample in dump.samples]
    flat = torch.cat(dump.samples) if dump.samples else torch.zeros(0)
    body = {"schema": SCHEMA, "settings": dump.settings, "ended": dump.ended, "steps": dump.steps,
            "records": dump.records, "sample_lengths": lengths}
    with open(os.path.join(folder, RECORDS), "w", encoding="utf-8") as file:
        json.dump(body, file, separators=(",", ":"))
    torch.save(flat, os.path.join(folder, SAMPLES))
    names = [RECORDS, SAMPLES]
    if dump.tensors:
        torch.save(list(dump.tensors), os.path.join(folder, TENSORS))
        names.append(TENSORS)
    return sum(os.path.getsize(os.path.join(folder, name)) for name in names)


def read(folder: str) -> Dump:
    """The dump in `folder`, or a UsageError that says what is wrong with it."""
    import torch

    records = os.path.join(folder, RECORDS)
    if not os.path.isdir(folder):
        raise UsageError(f"{folder}: no such dump folder")
    try:
        with open(records, encoding="utf-8") as file:
            body = json.load(file)
        flat = torch.load(os.path.join(folder, SAMPLES), weights_only=True)
        tensors = torch.load(os.path.join(folder, TENSORS), weights_only=True) \
            if os.path.exists(os.path.join(folder, TENSORS)) else []
    except FileNotFoundError as error:
        raise UsageError(f"{folder}: not a dump ({os.path.basename(error.filename)} is missing)") from None
    except (OSError, ValueError, RuntimeError) as error:
        raise UsageError(f"{folder}: the dump cannot be read: {error}") from None
    if not isinstance(body, dict) or body.get("schema") not in READABLE:
        raise UsageError(f"{folder}: not a {SCHEMA} dump (schema {body.get('schema') if isinstance(body, dict) else None!r})")
    samples = list(flat.split(body["sample_lengths"])) if body["sample_lengths"] else []
    return Dump(folder, body["settings"], body["steps"], body["records"], samples, body.get("ended", ""), tensors)
