"""A stand-in for the distribute steps (distribute/driver.py's STEPS and detect.read), so that the
plumbing around them (migrate, run, analyze, the launcher) is tested on its own: an entry script
is one with a `__main__` guard, one that calls init_process_group is distributed already, and the
one step puts the setup's first lines after the last top-level import."""

from __future__ import annotations

from torchport.distribute import detect, driver
from torchport.distribute.changes import Change
from torchport.findings import Operation

SETUP = [
    'LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))',
    'WORLD_SIZE = int(os.environ.get("WORLD_SIZE", 1))',
    "torch.cuda.set_device(LOCAL_RANK)",
]


def read(found, options) -> detect.Plan:
    code = found.text
    entry = options.entry if options.entry is not None else '__name__ == "__main__"' in code
    already = "it starts its own process group" if "init_process_group" in code else ""
    notes = [Change(0, 0, "TP200", Operation.NOTE, f"left alone: {already}")] if entry and already else []
    return detect.Plan(entry=entry, already=already, main_guard='__main__' in code, notes=notes)


def insert_setup(source: str, plan, options):
    lines = source.splitlines(keepends=True)
    last = max((i for i, line in enumerate(lines) if line.startswith(("import ", "from "))), default=-1)
    block = ([] if any(line.startswith("import os") for line in lines) else ["import os\n"]) + [f"{line}\n" for line in SETUP]
    new = "".join(lines[: last + 1] + block + lines[last + 1 :])
    at = min(last + 2, len(lines))
    return new, [Change(at, at, "TP201", Operation.INSERT, "the process group and device of each process")]


def install(monkeypatch) -> None:
    monkeypatch.setattr(detect, "read", read)
    monkeypatch.setattr(driver, "STEPS", (insert_setup,))
