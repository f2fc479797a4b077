"""What `migrate --distributed` costs next to a plain migration of the same tree: each file
migrated to the cpu target without and with --distributed, in one process, side by side (the
plain side then the distributed side, file by file, round after round); a side's time is its
median round.

    python bench/distributed.py                    # the repository's own pattern projects (tests/fidelity)
    python bench/distributed.py --src ~/code/examples --rounds 3

The distributed side runs the whole --distributed pipeline of a file (entry detection, then the
steps: spawn, model, loaders, rank 0, setup), then the same migration. Goal: at most 2x the plain
side. Measured on two cores: on pytorch/examples (93 files, 22 training entry scripts) 15.0x before
the steps read names from the file's imports and left lines and parents until asked, 7.7x after;
8.5x and 3.9x in one session before and after each step read the tree the one before it made, with
lines, parents and children from one printing (layout.py), 3.3x with a leaner printing state and
walks of the module read from its layout, 2.6x with a made tree laid out from its base (its
untouched statements not printed again), the import table kept across steps, a type index for
whole-module searches and `ast` ruling out training before LibCST reads a file (3.3x and 2.6x
paired in one session), 1.93x to 2.02x over nine runs with walks of a statement read from the
layout's order, no made tree parsed again, workers settled (gc.freeze) and the migration reading
the steps' last tree rather than parsing their text (2.55x to 2.65x for the code before, paired),
1.73x to 1.81x with the migration walking that tree in its layout's order and reading its lines
there (2.01x to 2.05x for the code before, paired); on the default tree (53 files) 7.0x, 3.7x,
2.75x, 2.4x, 1.6x, 1.5x (1.75x paired), then 1.3x (1.44x paired). What is
left: the LibCST parse and first layout of each file that may train, `ast`'s reading of it for
detection, and the steps themselves.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from migrate import python_files  # (bench/migrate.py's: the same walk of a tree)
from torchport.migrate.distributed import Request
from torchport.migrate.workers import Choices, Job, migrate_one, settle

GOAL = 2.0
ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SRC = ROOT / "tests" / "fidelity"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=DEFAULT_SRC, help="the tree to migrate (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    files = python_files(args.src)
    if not files:
        sys.exit(f"no Python files under {args.src}")
    jobs = [Job(str(path), (args.src / path).read_bytes()) for path in files]
    plain, distributed = Choices("cpu"), Choices("cpu", distribute=Request())
    for job in jobs[:3]:  # (warm-up: imports and caches)
        migrate_one(job, plain)
        migrate_one(job, distributed)
    settle()  # (as a worker process does after its first file)
    rounds = {"plain": [], "distributed": []}
    for _ in range(args.rounds):
        spent = {"plain": 0.0, "distributed": 0.0}
        for job in jobs:
            for side, choices in (("plain", plain), ("distributed", distributed)):
                start = time.perf_counter()
                migrate_one(job, choices)
                spent[side] += time.perf_counter() - start
        for side, seconds in spent.items():
            rounds[side].append(seconds)
    plain_s, distributed_s = (statistics.median(rounds[side]) for side in ("plain", "distributed"))
    print(f"{len(jobs)} files under {args.src}, {args.rounds} rounds (median)")
    print(f"plain migrate        {plain_s:8.2f} s")
    print(f"migrate --distributed {distributed_s:7.2f} s")
    print(f"ratio                {distributed_s / plain_s:8.2f}x the plain migration (goal <= {GOAL:g}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
