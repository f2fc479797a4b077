"""How fast `torchport migrate` is, next to a bare `libcst.parse_module` of the same files.

    python bench/migrate.py                       # an even sample of the installed torch package
    python bench/migrate.py --limit 0             # all of it (many minutes)
    python bench/migrate.py --src ~/code/repo --jobs 4

The goal: migrating a tree is no slower than parsing it, and it scales with -j. A file that never
mentions CUDA is not parsed at all; in one that does, only the definitions that mention it reach
LibCST (the rest are set aside by `ast`: see torchport/migrate/elide.py). Both are measured here
in one run, on the same files, with one process and with --jobs processes. The default sample
(--limit 160 files, spread evenly over the sorted list) takes under a minute on two idle cores.
Then: the price of the guarded worker (the same migrations in-process), and the peak resident
memory of a -j 1 run on the sample, on a generated 200k-line file, and on a dense one whose every
line calls `.cuda()` (a bare LibCST parse of it needs about 5 GB: it is read and migrated in
pieces, see torchport/migrate/pieces.py). The two files take a few minutes more.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import libcst

from torchport.migrate import engine
from torchport.migrate.elide import elide
from torchport.migrate.source import mentions
from torchport.migrate.workers import Job, migrate_one

SKIP = {"__pycache__", ".git"}


def default_src() -> Path:
    """The installed torch package's folder, found without importing torch (slow, irrelevant)."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed here: pass --src DIR")
    return Path(list(spec.submodule_search_locations)[0])


def python_files(root: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        found.extend(Path(folder, name).relative_to(root) for name in sorted(files) if name.endswith(".py"))
    return found


def spread(files: list[Path], limit: int) -> list[Path]:
    """`limit` files spread evenly over the (sorted) list, so every part of the tree is in."""
    if limit <= 0 or limit >= len(files):
        return files
    return [files[i * len(files) // limit] for i in range(limit)]


def _parse(path: str) -> int:
    try:
        libcst.parse_module(Path(path).read_bytes())
    except Exception:  # noqa: BLE001 (Python 2 files and the like: they count as parsed, like migrate's)
        return 0
    return 1


def cpu_seconds() -> float:
    """User + system time of this process and of its finished children (the -j workers)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def bare_parse(root: Path, files: list[Path], jobs: int) -> float:
    paths = [str(root / f) for f in files]
    start = time.perf_counter()
    if jobs <= 1:
        for path in paths:
            _parse(path)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(_parse, paths, chunksize=max(1, min(16, len(paths) // (jobs * 8)))))
    return time.perf_counter() - start


def migrate(root: Path, out: Path, target: str, jobs: int) -> tuple[float, engine.Outcome]:
    options = engine.Options(sources=[root], out=out, target=target, jobs=jobs)
    start = time.perf_counter()
    outcome = engine.run(options)
    return time.perf_counter() - start, outcome


def in_process(root: Path, files: list[Path], target: str) -> float:
    """Wall time of the same migrations in this process, with no worker around them: the price of
    the isolation is migrate -j 1 over this."""
    start = time.perf_counter()
    for relative in files:
        if relative.suffix == ".py":
            migrate_one(Job(str(relative), (root / relative).read_bytes()), target)
    return time.perf_counter() - start


PEAK = """
import resource, sys
from pathlib import Path
from torchport.migrate import engine
engine.run(engine.Options(sources=[Path(sys.argv[1])], out=Path(sys.argv[2]), target=sys.argv[3]))
mine, workers = (resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(max(mine, workers) * 1024)
"""


def peak_memory(src: Path, out: Path, target: str) -> tuple[float, int, dict]:
    """Wall time, peak resident memory (bytes) and summary.json of `migrate src -o out -j 1`, in a
    fresh process: the largest of the main process and its worker."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PEAK, str(src), str(out), target], capture_output=True, text=True, check=True)
    summary = json.loads((out / engine.REPORT_DIR / "summary.json").read_text())
    return time.perf_counter() - start, int(done.stdout.split()[-1]), summary


def how_it_went(summary: dict) -> str:
    """"migrated" or "copied unchanged: <why>", for a run on one file."""
    if summary["skipped"]:
        return f"copied unchanged: {summary['skipped'][0]['reason']}"
    return "migrated" if summary["files_changed"] else "unchanged"


def generated_file(path: Path, lines: int = 200_000) -> None:
    """A `lines`-line training module: every tenth function moves data to the GPU and syncs, and
    a LOCAL_RANK index is read, so the file is migrated with its device indices followed."""
    text = ["import os", "import torch", "", 'LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))', ""]
    i = 0
    while len(text) < lines:
        if i % 10 == 0:
            text += [f"def step{i}(x):", "    y = x.cuda(LOCAL_RANK)", "    torch.cuda.synchronize()", "    return y * 2", ""]
        else:
            text += [f"def step{i}(x):", "    y = x + 1", "    z = y * 3", "    return z - 1", ""]
        i += 1
    path.write_text("\n".join(text) + "\n")


def dense_file(path: Path, lines: int = 200_000) -> None:
    """A `lines`-line module whose every line after the first two calls `.cuda()`: nothing to set
    aside, and no definition to cut it at (only top-level statements)."""
    text = ["import torch", "t = torch.zeros(1)", *(f"x{i} = t.cuda()" for i in range(lines - 2))]
    path.write_text("\n".join(text) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, help="a folder of Python code (default: the installed torch package)")
    parser.add_argument("--limit", type=int, default=160, help="at most N files, spread over the tree (0: all; default 160)")
    parser.add_argument("--target", default="npu", help="migration target (default: npu)")
    parser.add_argument("--jobs", type=int, default=2, help="processes for the parallel rows (default: 2)")
    parser.add_argument("--big-lines", type=int, default=200_000, help="lines of the generated files (0: skip them)")
    args = parser.parse_args(argv)

    source = (args.src or default_src()).resolve()
    every = python_files(source)
    files = spread(every, args.limit)
    with tempfile.TemporaryDirectory(prefix="torchport-bench-") as scratch:
        root = Path(scratch) / "src"
        lines = cuda_files = cuda_lines = size = kept_lines = 0
        for relative in files:  # a private copy: the same bytes, and nothing else in the tree
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            data = (source / relative).read_bytes()
            (root / relative).write_bytes(data)
            count = data.count(b"\n")
            lines += count
            size += len(data)
            if mentions(args.target).search(data):
                cuda_files += 1
                cuda_lines += count
                elision = elide(data, mentions(args.target))
                kept_lines += (elision.reduced if elision else data).count(b"\n")

        print(f"source   {source}")
        print(f"files    {len(files):,} of {len(every):,} .py files (--limit {args.limit}), {size / 1e6:.1f} MB")
        print(f"lines    {lines:,}; {cuda_files:,} files ({cuda_lines:,} lines, {cuda_lines / max(lines, 1):.0%}) mention CUDA")
        print(f"parsed   {kept_lines:,} lines ({kept_lines / max(lines, 1):.0%}) reach LibCST; the other definitions are set aside")
        print(f"target   {args.target}; CPUs {os.cpu_count()}")
        print()

        rows = []
        for jobs in (1, args.jobs) if args.jobs > 1 else (1,):
            cpu = cpu_seconds()
            parse_s = bare_parse(root, files, jobs)
            parse_cpu = cpu_seconds() - cpu
            migrate_s, outcome = migrate(root, Path(scratch) / f"out{jobs}", args.target, jobs)
            migrate_cpu = cpu_seconds() - cpu - parse_cpu
            shutil.rmtree(Path(scratch) / f"out{jobs}", ignore_errors=True)
            rows.append((jobs, parse_s, migrate_s, outcome, parse_cpu, migrate_cpu))

        header = f"{'':28}{'jobs':>5}{'wall s':>9}{'CPU s':>8}{'lines/s':>10}{'speed vs parse':>16}"
        print(header)
        print("-" * len(header))
        for jobs, parse_s, migrate_s, _, parse_cpu, migrate_cpu in rows:
            print(f"{'libcst.parse_module (bare)':28}{jobs:>5}{parse_s:>9.1f}{parse_cpu:>8.1f}{lines / parse_s:>10,.0f}{1.0:>16.2f}")
            ratio = parse_s / migrate_s
            print(f"{'torchport migrate':28}{jobs:>5}{migrate_s:>9.1f}{migrate_cpu:>8.1f}{lines / migrate_s:>10,.0f}{ratio:>16.2f}")
        print("(lines/s: all lines of the files over wall time; speed vs parse > 1: migrate is faster)")
        print()
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
        if len(rows) == 2:
            (_, p1, m1, *_), (jobs, p2, m2, *_) = rows
            print(f"scaling  -j {jobs} vs -j 1 (wall): parse {p1 / p2:.2f}x, migrate {m1 / m2:.2f}x  (load average {load:.1f} on {os.cpu_count()} CPUs)")
        outcome = rows[0][3]
        print(
            f"migrated {len(outcome.changed):,} files changed, {len(outcome.findings):,} findings, "
            f"{len(outcome.skipped):,} files copied unchanged (did not parse)"
        )
        parse_1, migrate_1 = rows[0][1], rows[0][2]
        verdict = "no slower than" if migrate_1 <= parse_1 else f"{migrate_1 / parse_1:.1f}x slower than"
        print(f"verdict  with one process, migrate is {verdict} a bare parse of the same files")
        bare = in_process(root, files, args.target)
        print(f"isolation  migrate -j 1 (guarded worker, writes, reports) {migrate_1:.1f} s vs the same migrations "
              f"in this process {bare:.1f} s: {migrate_1 / bare:.2f}x")
        wall, peak, _ = peak_memory(root, Path(scratch) / "peak", args.target)
        print(f"memory   the sample, -j 1: peak {peak / 2**20:,.0f} MB resident ({wall:.1f} s)")
        if args.big_lines:
            for name, make in (("generated", generated_file), ("dense (every line calls .cuda())", dense_file)):
                big = Path(scratch) / make.__name__ / "train.py"
                big.parent.mkdir()
                make(big, args.big_lines)
                wall, peak, summary = peak_memory(big, Path(scratch) / f"{make.__name__}_out", args.target)
                size = big.stat().st_size
                print(f"memory   a {name} {args.big_lines:,}-line file ({size / 1e6:.1f} MB): {how_it_went(summary)}, "
                      f"peak {peak / 2**20:,.0f} MB resident, {wall:.1f} s, {args.big_lines / wall:,.0f} lines/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
