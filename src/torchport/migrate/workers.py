"""Migrate files in guarded worker processes, so that no input file can crash, hang or exhaust a run.

LibCST's native parser can overflow its stack on pathological nesting (a segfault no Python code
can catch), and its tree walks recurse once per level of nesting. So every file is migrated in a
worker process:
- the worker runs each file on a thread with a large stack and a high recursion limit, so that
  deep but valid code (a 1,000-term string concatenation, a 400-branch `elif`) is still migrated;
- a worker that dies (a native crash) costs only the file it held, which is reported; a new worker
  takes the next file;
- a file that runs past its time budget has its worker killed; a file that needs more memory than
  the budget (an address-space limit in the worker) gets a MemoryError: both are reported.
Results come back in the order of the jobs, whatever order the workers finish in.
"""

from __future__ import annotations

import faulthandler
import gc
import multiprocessing
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait

from torchport import targets
from torchport.errors import internal_error
from torchport.migrate.apex import KEEP, MODES as APEX_MODES, convert_then_migrate, default_mode
from torchport.migrate.amp_insertion import insert_then_migrate
from torchport.migrate.distributed import Request, distribute_then_migrate
from torchport.migrate import from_npu
from torchport.migrate.selection import ALL, RuleSelection, amp_codes, apex_codes, distributed_codes, npu_codes
from torchport.migrate.codes import IMPORT_CODE
from torchport.migrate.source import FileResult, mentions, migrate_source, tree_result
from torchport.migrate.suppression import SKIP_REASON, skips_file
from torchport.mixed_precision.changes import MODES as AMP_MODES, OFF as AMP_OFF, default_mode as default_amp_mode
from torchport.mixed_precision.changes import refusal as amp_refusal
from torchport.syntax import syntax_problem

FILE_TIMEOUT = 300.0  # seconds for one file: the biggest real files take a few
FILE_MEMORY = 4 << 30  # bytes of address space for a worker: a 200k-line file needs under 1 GB (pieces.py)
STACK_SIZE = 512 << 20  # for the thread that migrates: deep trees recurse deeply
RECURSION_LIMIT = 100_000
LOOKAHEAD = 64  # files read ahead at most: held until handed out, and until an earlier slow file is done

try:
    import resource
except ImportError:  # (Windows: no address-space limit; the time budget still holds)
    resource = None


@dataclass(frozen=True)
class Job:
    relative: str
    data: bytes


@dataclass(frozen=True)
class Choices:
    """What a run asks of every file of it (the same for each: each worker holds one)."""

    target: str  # the target's name
    apply_affinity: bool = False  # --apply-affinity
    distribute: Request | None = None  # --distributed: made to run as one of N processes, where a file is an entry script
    apex: str | None = None  # --apex: "native" or "keep" (None: the target's default)
    rules: RuleSelection = ALL  # --select / --ignore
    source: str = from_npu.FROM_CUDA  # --from: the dialect the code is written in ("cuda", or "npu": converted first)
    amp: str | None = None  # --amp: "torch", "apex" or "off" (None: the target's default)

    def __post_init__(self) -> None:
        if self.apex is not None and self.apex not in APEX_MODES:
            raise ValueError(f"--apex {self.apex}: choose one of {', '.join(APEX_MODES)}")
        if self.amp is not None and self.amp not in AMP_MODES:
            raise ValueError(f"--amp {self.amp}: choose one of {', '.join(AMP_MODES)}")
        refusal = amp_refusal(self.amp, self.apex, targets.get(self.target))
        if refusal is not None:
            raise ValueError(refusal)
        refusal = from_npu.refusal(self.source, targets.get(self.target))
        if refusal is not None:
            raise ValueError(refusal)

    @property
    def apex_mode(self) -> str:
        if not self.rules.allows_all(apex_codes()):  # (the conversion is one step: TP30x off, apex stays)
            return KEEP
        return self.apex or default_mode(targets.get(self.target))

    @property
    def amp_mode(self) -> str:
        if not self.rules.allows_all(amp_codes()):  # (one step, like the apex conversion: TP50x off, no AMP added)
            return AMP_OFF
        return self.amp or default_amp_mode(targets.get(self.target))

    @property
    def converts_from(self) -> str:
        """The dialect files are converted from: --from's, where its codes are selected (one step,
        like the apex conversion); else CUDA's (nothing is converted)."""
        return self.source if self.rules.allows_all(npu_codes()) else from_npu.FROM_CUDA

    @property
    def distributes(self) -> Request | None:
        """--distributed's request, where its codes are selected (one step, like the apex conversion)."""
        return self.distribute if self.rules.allows_all(distributed_codes()) else None


def migrate_one(job: Job, choices: Choices | str) -> FileResult:
    """One file's result; an error in a rule or in the parser becomes a reason, never an exception.
    Its NPU code converted first (--from npu), then its apex converted (or kept), then
    --distributed, then the migration. `choices`: a target's name alone asks for nothing else."""
    choices = Choices(choices) if isinstance(choices, str) else choices
    target = targets.get(choices.target)
    mode, chosen, request = choices.apex_mode, choices.rules, choices.distributes
    if skips_file(job.data):
        return FileResult(job.data, error=SKIP_REASON)

    def migrate(data: bytes, laid_out=None) -> FileResult:
        if target.runs_cuda_code or not mentions(target.name, chosen).search(data):  # (CUDA on CUDA: nothing to move)
            error = _parse_error(data)
            return FileResult(data, error=error) if error else tree_result(data, target, job.relative, chosen)
        return migrate_source(data, target, job.relative, choices.apply_affinity, keep_apex=mode == KEEP, chosen=chosen,
                              laid_out=laid_out)

    def distribute_and_migrate(data: bytes) -> FileResult:
        if request is None:
            return migrate(data)
        return distribute_then_migrate(data, job.relative, request, migrate)

    def apex_and_migrate(data: bytes) -> FileResult:
        return convert_then_migrate(data, job.relative, mode, target, distribute_and_migrate)

    def amp_and_migrate(data: bytes) -> FileResult:
        return insert_then_migrate(data, job.relative, choices.amp_mode, apex_and_migrate)

    try:
        result = from_npu.convert_then_migrate(job.data, job.relative, choices.converts_from, target, amp_and_migrate)
        if chosen.is_everything:
            return result
        # (the steps' own notes, TP200, TP300 and TP400, go with their codes; TP000 with the rules that ran)
        return replace(result, findings=[f for f in result.findings if f.code == IMPORT_CODE or chosen.allows(f.code)])
    except MemoryError:
        return FileResult(job.data, error="needs more memory than a file may take")
    except (Exception, RecursionError) as error:  # noqa: BLE001 (a rule's bug must not stop the run)
        return FileResult(job.data, error=internal_error(error))


def _parse_error(data: bytes) -> str | None:
    """Why Python cannot compile `data` (None if it can): a file with nothing to migrate is still
    listed when it is not valid Python, like one that has something to migrate."""
    problem = syntax_problem(data)
    return str(problem) if problem else None


def _serve(connection: Connection, choices: Choices, memory: int) -> None:
    """A worker's loop: receive a job, send its result, until told to stop (None)."""
    faulthandler.disable()  # a crash here is reported by the parent, in one line
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what an interrupt stops
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if resource is not None and memory:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = _address_space() + STACK_SIZE + memory  # (a forked worker starts with its parent's mappings)
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    sys.setrecursionlimit(RECURSION_LIMIT)
    threading.stack_size(STACK_SIZE)

    def loop() -> None:
        settled = False
        while True:
            job = connection.recv()
            if job is None:
                return
            connection.send(migrate_one(job, choices))
            if not settled:  # (the first file has loaded what the others use)
                settle()
                settled = True

    thread = threading.Thread(target=loop, name="torchport-migrate")
    thread.start()
    thread.join()


def settle() -> None:
    """Keep what the process holds now (its modules, the rules' and targets' tables: some 100,000
    objects) out of the cyclic collector's full passes (gc.freeze). A file's trees outlive many
    young collections, so a run makes a full pass every ten files or so, and each walked all of
    that again: with --distributed on pytorch/examples, 0.4-0.6 s of a 4 s run, 0.1 s settled."""
    gc.collect()
    gc.freeze()


def _address_space() -> int:
    """Bytes of address space this process maps now (0 where /proc does not say)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


class _Worker:
    def __init__(self, context, choices: Choices, memory: int) -> None:
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs, choices, memory), daemon=True)
        self.process.start()
        theirs.close()
        self.job: tuple[int, Job] | None = None
        self.started = 0.0

    def give(self, index: int, job: Job) -> None:
        self.job = (index, job)
        self.started = time.monotonic()
        try:
            self.connection.send(job)
        except OSError:  # it died on its way up: collecting it reports the job as a crash
            pass

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.connection.close()


def _context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def migrate_guarded(
    jobs: Iterable[Job],
    choices: Choices | str,
    workers: int = 1,
    timeout: float = FILE_TIMEOUT,
    memory: int = FILE_MEMORY,
) -> Iterator[tuple[Job, FileResult]]:
    """Each job with its result, in order, each migrated in a guarded worker process (`choices`:
    what the run asks of each; a target's name alone asks for nothing else). Of the jobs
    read ahead (at most LOOKAHEAD), the biggest is handed out first, so that a large file read
    last does not keep the other workers waiting at the end."""
    choices = Choices(choices) if isinstance(choices, str) else choices
    context = _context()
    pending = iter(jobs)
    pool: list[_Worker] = []
    waiting: list[tuple[int, Job]] = []  # read, not handed out yet
    done: dict[int, tuple[Job, FileResult]] = {}
    read = yielded = 0
    exhausted = False
    try:
        while True:
            pool = [w for w in pool if not w.connection.closed]
            while not exhausted and read < yielded + LOOKAHEAD:
                job = next(pending, None)
                if job is None:
                    exhausted = True
                else:
                    waiting.append((read, job))
                    read += 1
            while waiting and sum(w.job is not None for w in pool) < workers:
                biggest = max(range(len(waiting)), key=lambda i: len(waiting[i][1].data))
                worker = next((w for w in pool if w.job is None), None)
                if worker is None:
                    worker = _Worker(context, choices, memory)
                    pool.append(worker)
                worker.give(*waiting.pop(biggest))
            busy = [w for w in pool if w.job is not None]
            if busy:
                _collect(busy, done, timeout)
            while yielded in done:
                yield done.pop(yielded)
                yielded += 1
            if not busy and not waiting and exhausted:
                return
    finally:  # an interrupt lands here too: no worker outlives the run
        for worker in pool:
            worker.stop()


def _collect(busy: list[_Worker], done: dict[int, tuple[Job, FileResult]], timeout: float) -> None:
    """Wait for the first worker to finish, die or run out of time, and record what it gives."""
    deadline = min(w.started for w in busy) + timeout
    ready = wait([w.connection for w in busy] + [w.process.sentinel for w in busy], max(0.0, deadline - time.monotonic()))
    now = time.monotonic()
    for worker in busy:
        index, job = worker.job
        if worker.connection in ready or worker.process.sentinel in ready:
            try:
                done[index] = job, worker.connection.recv()
            except (EOFError, OSError):
                worker.process.join()
                done[index] = job, FileResult(job.data, error=_crash_reason(worker.process.exitcode, job.data))
                worker.stop()
            worker.job = None
        elif now - worker.started >= timeout:
            worker.stop()
            done[index] = job, FileResult(job.data, error=f"took longer than {timeout:g} s to migrate")
            worker.job = None


def _crash_reason(exitcode: int | None, data: bytes) -> str:
    how = f"signal {signal.Signals(-exitcode).name}" if exitcode and exitcode < 0 else f"exit status {exitcode}"
    if exitcode == -signal.SIGABRT:
        how += ", as when it needs more memory than a file may take"
    invalid = _parse_error(data)
    return f"{invalid + '; ' if invalid else ''}the parser crashed on it ({how})"
